/*===- dist-c/Planner.h - C API of the dist planner -------------*- C -*-===//
 *
 * Plans a reshard (semantics §4) from C or any language with a C FFI, without
 * MLIR: one JSON request in, one JSON answer out.
 *
 *   char *answer = distPlanJSON(
 *       "{\"mesh\": \"<[\\\"x\\\"=2, \\\"y\\\"=4]>\", \"shape\":
 * \"64x64xf32\"," " \"from\": \"[{\\\"x\\\"}, {\\\"y\\\"}]\"," " \"to\":
 * \"[{\\\"y\\\"}, {\\\"x\\\"}]\"}");
 *   ... parse answer ...
 *   distFreeString(answer);
 *
 * The request is a JSON object whose keys are dist-plan's options (semantics
 * §4), all strings unless said otherwise: "mesh"      required, e.g.
 * "<[\"x\"=2, \"y\"=4]>" (devices = [...] allowed) "shape"     required, the
 * global tensor type, e.g. "1024x1024xf32" "from"      required, the source
 * layout's body, e.g. "[{\"x\"}, {}]" "to"        required, the target layout's
 * body (on "to_mesh" if given) "to_mesh"   the target's mesh for a cross-mesh
 * reshard (semantics §3a) "topology"  an object as in semantics §3: {"axes":
 * {"x": {"alpha": 1e-5, "beta": 2.7e-12}}, "transfer": {...}} "strategy"
 * "optimal" (default) or "greedy" "moves"     "all" (default) or "collective"
 *   "max_peak_bytes"  an integer: no plan may hold more bytes per device
 *               at once (dist-plan --max-peak-bytes)
 *
 * The answer is semantics §4's JSON object, byte for byte what
 * `dist-plan --format json` prints for the same options. A request that is
 * not valid JSON, lacks a required key, has an unknown key or a value of the
 * wrong type or that does not parse, or has no plan, answers
 *   {"error": "MESSAGE"}
 * where MESSAGE names the key at fault (or says why no plan exists). The call
 * never aborts the process.
 *
 *===----------------------------------------------------------------------===*/

#ifndef DIST_C_PLANNER_H
#define DIST_C_PLANNER_H

#ifdef __cplusplus
extern "C" {
#endif

/* The plan for `request` (a NUL-terminated JSON object), or an error object.
 * The string is allocated with malloc: release it with distFreeString. NULL
 * only when that allocation fails. A NULL request answers an error object. */
char *distPlanJSON(const char *request);

/* The layout solver dist-partition uses (one strategy per node, least
 * modelled time within a memory budget), on a problem given as JSON
 * (docs/partitioning.md, "The solver on its own"): the answer
 * {"choice": [...], "time": ..., "optimal": ..., ...}, or an error object
 * naming the fault. Allocated as distPlanJSON's answer. */
char *distSolveLayoutsJSON(const char *problem);

/* Releases a string returned by distPlanJSON or distSolveLayoutsJSON. NULL
 * is ignored. */
void distFreeString(char *string);

#ifdef __cplusplus
}
#endif

#endif /* DIST_C_PLANNER_H */
