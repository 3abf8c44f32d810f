/*===- PlannerCAPICheck.c - dist-c/Planner.h, used from C -----------------===//
 *
 *   dist-capi-planner-check REQUEST   prints distPlanJSON(REQUEST)
 *   dist-capi-planner-check --layouts PROBLEM
 *                                     prints distSolveLayoutsJSON(PROBLEM)
 *   dist-capi-planner-check           prints the answer to each bad request
 *                                     below, one per line, and checks that
 *                                     every one is an error object
 *
 * Compiled as strict C99 (test/CMakeLists.txt), so the header is known to
 * work from C.
 *===----------------------------------------------------------------------===*/

#include "dist-c/Planner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kBadRequests[] = {
    "not json",
    "[1, 2]",
    "{}",
    "{\"mesh\": \"<[\\\"x\\\"=2]>\", \"shape\": \"8xf32\", \"from\": \"[{}]\"}",
    "{\"mesh\": 2, \"shape\": \"8xf32\", \"from\": \"[{}]\", \"to\": \"[{}]\"}",
    "{\"mesh\": \"<[\\\"x\\\"=0]>\", \"shape\": \"8xf32\", \"from\": \"[{}]\","
    " \"to\": \"[{}]\"}",
    "{\"mesh\": \"<[\\\"x\\\"=2]>\", \"shape\": \"8xq7\", \"from\": \"[{}]\","
    " \"to\": \"[{}]\"}",
    "{\"mesh\": \"<[\\\"x\\\"=2]>\", \"shape\": \"8xf32\", \"from\": "
    "\"[{\\\"y\\\"}]\", \"to\": \"[{}]\"}",
    "{\"mesh\": \"<[\\\"x\\\"=2]>\", \"shape\": \"8xf32\", \"from\": \"[{}]\","
    " \"to\": \"[{}, {}]\"}",
    "{\"mesh\": \"<[\\\"x\\\"=2]>\", \"shape\": \"8xf32\", \"from\": \"[{}]\","
    " \"to\": \"[{}]\", \"strategy\": \"fast\"}",
    "{\"mesh\": \"<[\\\"x\\\"=2]>\", \"shape\": \"8xf32\", \"from\": \"[{}]\","
    " \"to\": \"[{}]\", \"moves\": \"some\"}",
    "{\"mesh\": \"<[\\\"x\\\"=2]>\", \"shape\": \"8xf32\", \"from\": \"[{}]\","
    " \"to\": \"[{}]\", \"topology\": \"slow.json\"}",
    "{\"mesh\": \"<[\\\"x\\\"=2]>\", \"shape\": \"8xf32\", \"from\": \"[{}]\","
    " \"to\": \"[{}]\", \"topology\": {\"axes\": {\"x\": {\"alpha\": -1}}}}",
    "{\"mesh\": \"<[\\\"x\\\"=2]>\", \"shape\": \"8xf32\", \"from\": \"[{}]\","
    " \"to\": \"[{}]\", \"topology\": {\"transfer\": {\"alpha\": 1e-5}}}",
    "{\"mesh\": \"<[\\\"x\\\"=2]>\", \"shape\": \"8xf32\", \"from\": \"[{}]\","
    " \"to\": \"[{}]\", \"cache\": \"/tmp\"}",
    "{\"mesh\": \"<[\\\"x\\\"=2]>\", \"shape\": \"8xf32\", \"from\": \"[{}]\","
    " \"to\": \"[{}]\", \"max_peak_bytes\": -1}",
    "{\"mesh\": \"<[\\\"x\\\"=2]>\", \"shape\": \"1000xf32\", \"from\": "
    "\"[{\\\"x\\\"}]\", \"to\": \"[{}]\", \"max_peak_bytes\": 100}",
};

int main(int argc, char **argv) {
  size_t i;
  int failures = 0;
  char *answer;
  if (argc == 3 && strcmp(argv[1], "--layouts") == 0) {
    answer = distSolveLayoutsJSON(argv[2]);
    puts(answer);
    distFreeString(answer);
    return 0;
  }
  if (argc == 2) {
    answer = distPlanJSON(argv[1]);
    puts(answer);
    distFreeString(answer);
    return 0;
  }
  answer = distPlanJSON(NULL);
  puts(answer);
  if (strncmp(answer, "{\"error\":", 9) != 0)
    ++failures;
  distFreeString(answer);
  distFreeString(NULL);
  for (i = 0; i < sizeof(kBadRequests) / sizeof(kBadRequests[0]); ++i) {
    answer = distPlanJSON(kBadRequests[i]);
    puts(answer);
    if (strncmp(answer, "{\"error\":", 9) != 0) {
      fprintf(stderr, "request %u is not an error: %s\n", (unsigned)i,
              kBadRequests[i]);
      ++failures;
    }
    distFreeString(answer);
  }
  /* 100000 nested arrays: a clear error, not a stack overflow in the JSON
   * parser (which recurses per level). */
  {
    const size_t depth = 100000;
    const char *head = "{\"mesh\": ";
    size_t k, at = 0, size = strlen(head) + 2 * depth + 3;
    char *deep = malloc(size);
    if (!deep)
      return 1;
    memcpy(deep, head, strlen(head));
    at = strlen(head);
    for (k = 0; k < depth; ++k)
      deep[at++] = '[';
    deep[at++] = '1';
    for (k = 0; k < depth; ++k)
      deep[at++] = ']';
    deep[at++] = '}';
    deep[at] = '\0';
    answer = distPlanJSON(deep);
    puts(answer);
    if (strncmp(answer, "{\"error\":", 9) != 0)
      ++failures;
    distFreeString(answer);
    free(deep);
  }
  return failures != 0;
}
