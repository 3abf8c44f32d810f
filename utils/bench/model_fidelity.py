#!/usr/bin/env python3
"""Does the cost model predict what runs? (issue 26, semantics §3/§3b/§8)

For meshes of 8 ranks of rank 1 to 3, it calibrates the machine with
dist-calibrate, then takes reshards (a realistic suite and random layout
pairs, 64 KiB to 32 MiB per device) and compiles each with up to four plans
(optimal, greedy, collective-only, peak-limited: `dist-run --strategy /
--moves / --max-peak-bytes`, planned with the defaults, as dist-plan shows
them). Every (reshard, plan) is timed with `dist-run --reps` (median per call
of the slowest rank) and priced twice: under the default parameters (what
dist-run reports as modelled) and under the calibrated file (`dist-plan
--replay`). It reports, for both models, the median and p90 relative error,
Spearman's rank correlation between modelled and measured times, and the
pick accuracy: over pairs of plans of one reshard whose measured times
differ by at least 20%, the share the model orders the same way. Unless
--quick or --no-noise-floor, every plan is then timed a second time and that
second timing scored like a model: the noise floor, the best any model could
score against timings this noisy.

Usage (Debian's /usr/bin/python3 or any Python 3; no packages needed):
  model_fidelity.py BUILD [--reps 10] [--quick] [--meshes 1-D,2-D,3-D]
                    [--seed 26] [--no-noise-floor] [--calibration-reps 5]
                    [--md FILE] [--svg FILE] [--json FILE] [--work DIR]
"""
import argparse
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile

MESHES = [
    ("1-D", '<["x"=8]>', ["x"]),
    ("2-D", '<["x"=2, "y"=4]>', ["x", "y"]),
    ("3-D", '<["x"=2, "y"=2, "z"=2]>', ["x", "y", "z"]),
]

# (from, to) per mesh: what a training step does (gathers, reduce-scatters,
# all-reduces of gradients, transposes, moving a split between axes).
REALISTIC = {
    "1-D": [('[{"x"}, {}]', '[{}, {}]'),
            ('[{}, {}], partial = sum {"x"}', '[{"x"}, {}]'),
            ('[{}, {}], partial = sum {"x"}', '[{}, {}]'),
            ('[{"x"}, {}]', '[{}, {"x"}]'),
            ('[{}, {"x"}]', '[{"x"}, {}]')],
    "2-D": [('[{"x"}, {"y"}]', '[{"y"}, {"x"}]'),
            ('[{"x", "y"}, {}]', '[{}, {}]'),
            ('[{}, {}], partial = sum {"x", "y"}', '[{"x"}, {"y"}]'),
            ('[{"x"}, {"y"}]', '[{}, {"y"}]'),
            ('[{"y"}, {}]', '[{"x"}, {}]'),
            ('[{}, {"y"}], partial = sum {"x"}', '[{"x"}, {"y"}]'),
            ('[{"x", "y"}, {}]', '[{}, {"x", "y"}]')],
    "3-D": [('[{"x"}, {"y", "z"}]', '[{"y", "z"}, {"x"}]'),
            ('[{"x", "y", "z"}, {}]', '[{}, {}]'),
            ('[{}, {}], partial = sum {"x", "y", "z"}', '[{"x"}, {"y"}]'),
            ('[{"x"}, {"y"}]', '[{"y"}, {"z"}]'),
            ('[{"z"}, {}], partial = sum {"x"}', '[{"x", "z"}, {}]')],
}

SHAPES = ["512x512xf32", "1024x2048xf32", "2048x4096xf32"]


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def random_layout(rng, axes, partial):
    dims = [[], []]
    for a in axes:
        r = rng.random()
        if r < 0.35:
            dims[0].append(a)
        elif r < 0.7:
            dims[1].append(a)
    free = [a for a in axes if a not in dims[0] + dims[1]]
    text = "[" + ", ".join("{" + ", ".join('"%s"' % a for a in d) + "}"
                           for d in dims) + "]"
    if partial and free:
        text += ", partial = sum {" + ", ".join('"%s"' % a for a in free) + "}"
    return text


def plan_json(bin_dir, mesh, shape, src, dst, flags, topology=None,
              replay=None):
    cmd = [os.path.join(bin_dir, "dist-plan"), "--mesh", mesh, "--shape",
           shape, "--from", src, "--to", dst, "--format", "json"] + flags
    if topology:
        cmd += ["--topology", topology]
    if replay:
        cmd += ["--replay", replay]
    p = run(cmd)
    if p.returncode != 0:
        return None
    return json.loads(p.stdout)


def program(mesh, shape, src, dst):
    dims, elem = shape.rsplit("x", 1)[0], shape.rsplit("x", 1)[1]
    t_src = "tensor<%sx%s, #dist.sharding<@m, %s>>" % (dims, elem, src)
    t_dst = "tensor<%sx%s, #dist.sharding<@m, %s>>" % (dims, elem, dst)
    return ("dist.mesh @m = %s\n"
            "func.func @reshard(%%a: %s) -> %s {\n"
            "  %%b = dist.reshard %%a : %s -> %s\n"
            "  return %%b : %s\n}\n" % (mesh, t_src, t_dst, t_src, t_dst,
                                         t_dst))


PER_CALL = re.compile(r"per call: median ([0-9.]+) ms, min ([0-9.]+) ms .*"
                      r"modelled ([0-9.eE+-]+) ms")


def measure(bin_dir, path, flags, reps, np_):
    p = run([os.path.join(bin_dir, "dist-run"), "--np", str(np_), "--reps",
             str(reps), "--input", "random:1", "--timeout", "600", path] +
            flags)
    m = PER_CALL.search(p.stdout)
    if p.returncode != 0 or not m:
        raise RuntimeError("dist-run failed on %s %s:\n%s%s" %
                           (path, flags, p.stdout, p.stderr))
    return float(m.group(1)) * 1e-3, float(m.group(3)) * 1e-3


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2.0
        i = j + 1
    return out


def spearman(xs, ys):
    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    vx = math.sqrt(sum((a - mx) ** 2 for a in rx))
    vy = math.sqrt(sum((b - my) ** 2 for b in ry))
    return cov / (vx * vy) if vx and vy else float("nan")


def quantile(values, q):
    s = sorted(values)
    if not s:
        return float("nan")
    k = (len(s) - 1) * q
    lo, hi = int(math.floor(k)), int(math.ceil(k))
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def metrics(rows, key):
    errors = [abs(r[key] - r["measured"]) / r["measured"] for r in rows]
    rho = spearman([r[key] for r in rows], [r["measured"] for r in rows])
    right = total = 0
    by_case = {}
    for r in rows:
        by_case.setdefault(r["case"], []).append(r)
    for plans in by_case.values():
        for i in range(len(plans)):
            for j in range(i + 1, len(plans)):
                a, b = plans[i], plans[j]
                fast, slow = sorted([a, b], key=lambda r: r["measured"])
                if slow["measured"] < 1.2 * fast["measured"]:
                    continue
                total += 1
                right += fast[key] < slow[key]
    return {"median_error": quantile(errors, 0.5),
            "p90_error": quantile(errors, 0.9), "spearman": rho,
            "pairs": total, "pick_accuracy": right / total if total else
            float("nan")}


def svg(rows, path):
    """Modelled vs measured, log-log, both models."""
    w, h, pad = 520, 420, 50
    vals = [r[k] for r in rows for k in ("measured", "default", "calibrated")
            if r[k] > 0]
    lo, hi = math.log10(min(vals)) - 0.1, math.log10(max(vals)) + 0.1

    def x(v):
        return pad + (math.log10(v) - lo) / (hi - lo) * (w - 2 * pad)

    def y(v):
        return h - pad - (math.log10(v) - lo) / (hi - lo) * (h - 2 * pad)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="11">' % (w, h),
           '<rect width="100%" height="100%" fill="white"/>',
           '<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#999" '
           'stroke-dasharray="4"/>' % (x(10 ** lo), y(10 ** lo), x(10 ** hi),
                                       y(10 ** hi))]
    for e in range(int(math.ceil(lo)), int(math.floor(hi)) + 1):
        label = "%g s" % (10 ** e)
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' %
                   (x(10 ** e), h - pad + 15, label))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' %
                   (pad - 4, y(10 ** e) + 4, label))
    for key, color in (("default", "#d62728"), ("calibrated", "#1f77b4")):
        for r in rows:
            if r[key] > 0:
                out.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s" '
                           'fill-opacity="0.6"/>' % (x(r["measured"]),
                                                     y(r[key]), color))
    out.append('<text x="%d" y="%d" text-anchor="middle">measured (median '
               'per call, slowest rank)</text>' % (w / 2, h - 10))
    out.append('<text x="14" y="%d" transform="rotate(-90 14 %d)" '
               'text-anchor="middle">modelled</text>' % (h / 2, h / 2))
    out.append('<text x="%d" y="20" fill="#d62728">defaults</text>' % pad)
    out.append('<text x="%d" y="34" fill="#1f77b4">calibrated</text>' % pad)
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--np", type=int, default=8)
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument("--random", type=int, default=6,
                    help="random layout pairs per mesh")
    ap.add_argument("--quick", action="store_true",
                    help="one shape, no random cases (a smoke run)")
    ap.add_argument("--meshes", default="1-D,2-D,3-D",
                    help="which of 1-D, 2-D, 3-D")
    ap.add_argument("--no-noise-floor", action="store_true",
                    help="skip timing every plan a second time (the noise "
                    "floor; also skipped with --quick)")
    ap.add_argument("--calibration-reps", type=int, default=5,
                    help="dist-calibrate --reps for each mesh's sweep")
    ap.add_argument("--md")
    ap.add_argument("--svg")
    ap.add_argument("--json")
    ap.add_argument("--work")
    args = ap.parse_args()
    bin_dir = os.path.join(args.build, "bin")
    work = args.work or tempfile.mkdtemp(prefix="model-fidelity-")
    os.makedirs(work, exist_ok=True)
    rng = random.Random(args.seed)
    shapes = SHAPES[1:2] if args.quick else SHAPES
    rows, calibrations, timings = [], {}, []
    wanted = args.meshes.split(",")
    for bad in set(wanted) - {m[0] for m in MESHES}:
        sys.exit("model_fidelity.py: unknown mesh '%s' (1-D, 2-D, 3-D)" % bad)
    for name, mesh, axes in MESHES:
        if name not in wanted:
            continue
        cal = os.path.join(work, "calibrated-%s.json" % name)
        p = run([os.path.join(bin_dir, "dist-calibrate"), "--np",
                 str(args.np), "--mesh", mesh, "--sizes", "64KiB:64MiB",
                 "--reps", str(args.calibration_reps), "-o", cal])
        if p.returncode != 0:
            sys.exit("dist-calibrate failed on %s:\n%s" % (mesh, p.stderr))
        calibrations[name] = json.load(open(cal))
        print("calibrated %s %s" % (name, mesh), file=sys.stderr)
        pairs = list(REALISTIC[name])
        if not args.quick:
            for _ in range(args.random):
                pairs.append((random_layout(rng, axes, rng.random() < 0.3),
                              random_layout(rng, axes, False)))
        for src, dst in pairs:
            for shape in shapes:
                case = "%s %s %s -> %s" % (mesh, shape, src, dst)
                base = plan_json(bin_dir, mesh, shape, src, dst, [])
                if base is None:
                    continue
                variants = [("optimal", []),
                            ("greedy", ["--strategy", "greedy"]),
                            ("collective", ["--moves", "collective"])]
                # A peak-limited plan: at most the source's bytes plus the
                # target's... when that forbids the optimal plan's peak.
                limit = base["peak_bytes"] - 1
                variants.append(("peak-limited",
                                 ["--max-peak-bytes", str(limit)]))
                seen = {}
                for label, flags in variants:
                    plan = plan_json(bin_dir, mesh, shape, src, dst, flags)
                    if plan is None:
                        continue
                    key = json.dumps(plan["steps"], sort_keys=True)
                    if key in seen:
                        continue
                    seen[key] = (label, flags, plan)
                if len(seen) < 2:
                    continue
                mlir = os.path.join(work, "case%d.mlir" % len(rows))
                with open(mlir, "w") as f:
                    f.write(program(mesh, shape, src, dst))
                for label, flags, plan in seen.values():
                    plan_file = os.path.join(work, "plan%d.json" % len(rows))
                    with open(plan_file, "w") as f:
                        json.dump(plan, f)
                    calibrated = plan_json(bin_dir, mesh, shape, src, dst, [],
                                           topology=cal, replay=plan_file)
                    measured, modelled = measure(bin_dir, mlir, flags,
                                                 args.reps, args.np)
                    # dist-run must have compiled the plan dist-plan showed
                    # (it prints ms with 3 decimals).
                    if abs(modelled - plan["cost"]) > 1e-2 * plan["cost"] + 1e-6:
                        raise RuntimeError("%s (%s): dist-run modelled %g s, "
                                           "dist-plan %g s" %
                                           (case, label, modelled,
                                            plan["cost"]))
                    timings.append((len(rows), mlir, flags))
                    rows.append({
                        "case": case, "mesh": name, "plan": label,
                        "ops": [s["op"] for s in plan["steps"]],
                        "measured": measured, "default": plan["cost"],
                        "calibrated": calibrated["cost"]})
                    print("%-70s %-12s measured %8.3f ms  default %8.3f ms  "
                          "calibrated %8.3f ms  %s" %
                          (case[:70], label, measured * 1e3,
                           plan["cost"] * 1e3, calibrated["cost"] * 1e3,
                           ",".join(rows[-1]["ops"])), file=sys.stderr)
    # The noise floor: every plan timed once more, after all the others.
    # Scored as if it were a model of the first timings, it is what a model
    # that knew this machine exactly could reach against timings this noisy.
    floor = not (args.quick or args.no_noise_floor)
    if floor:
        for index, mlir, flags in timings:
            rows[index]["remeasured"], _ = measure(bin_dir, mlir, flags,
                                                   args.reps, args.np)
    result = {"rows": rows,
              "reshards": len({r["case"] for r in rows}),
              "default": metrics(rows, "default"),
              "calibrated": metrics(rows, "calibrated")}
    if floor:
        result["remeasured"] = metrics(rows, "remeasured")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    if args.svg:
        svg(rows, args.svg)
    lines = [
        "%d reshards, %d (reshard, plan) pairs, %d ranks, dist-run --reps %d."
        % (result["reshards"], len(rows), args.np, args.reps), "",
        "| model | median error | p90 error | Spearman | pick accuracy "
        "(pairs >= 20% apart) |", "|---|---|---|---|---|"]
    for key in ("default", "calibrated", "remeasured"):
        if key not in result:
            continue
        m = result[key]
        lines.append("| %s | %.0f%% | %.0f%% | %.3f | %.0f%% of %d |" %
                     (key if key != "remeasured" else
                      "noise floor: the same plans timed again",
                      100 * m["median_error"], 100 * m["p90_error"],
                      m["spearman"], 100 * m["pick_accuracy"], m["pairs"]))
    # Where the model is furthest off, per first move of the plan.
    by_op = {}
    for r in rows:
        op = "+".join(sorted(set(r["ops"]))) or "(none)"
        by_op.setdefault(op, []).append(r["calibrated"] / r["measured"])
    lines += ["", "| plan's moves | plans | calibrated / measured (median) |",
              "|---|---|---|"]
    for op, ratios in sorted(by_op.items(), key=lambda kv: -len(kv[1])):
        lines.append("| %s | %d | %.2f |" % (op, len(ratios),
                                             quantile(ratios, 0.5)))
    text = "\n".join(lines) + "\n"
    print(text)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
