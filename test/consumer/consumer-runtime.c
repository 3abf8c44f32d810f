/* A C program linked against dist's runtime through the package
 * (Dist::Runtime): the C ABI compiled dist programs call.
 *
 *   consumer-runtime    prints whether the runtime is initialised (it is
 *                       not: no MPI job is needed to link and load it) */
#include "dist/Runtime/DistRuntime.h"

#include <stdio.h>

int main(void) {
  printf("consumer: runtime loaded, initialized = %d\n",
         (int)distRtIsInitialized());
  return 0;
}
