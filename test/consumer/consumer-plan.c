/* A C program that plans a reshard through dist's C API (Dist::Planner).
 *
 *   consumer-plan    prints the plan of a 2x4-mesh transpose as JSON */
#include "dist-c/Planner.h"

#include <stdio.h>
#include <string.h>

int main(void) {
  char *plan = distPlanJSON(
      "{\"mesh\": \"<[\\\"x\\\"=2, \\\"y\\\"=4]>\", \"shape\": \"64x64xf32\","
      " \"from\": \"[{\\\"x\\\"}, {\\\"y\\\"}]\","
      " \"to\": \"[{\\\"y\\\"}, {\\\"x\\\"}]\"}");
  if (!plan)
    return 1; /* out of memory */
  int failed = strncmp(plan, "{\"error\"", 8) == 0;
  puts(plan);
  distFreeString(plan);
  return failed;
}
