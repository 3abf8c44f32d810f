/*===- CAbiCheck.c - The runtime from plain C ----------------------------===//
 *
 * Compiled as C99 with -Wall -Wextra -pedantic: the header must be usable
 * from C (as from LLVM IR), with int64_t handles and int32_t status codes.
 * Runs an all_reduce over a 2-D mesh's second axis, and an exchange that
 * passes each rank's 4 doubles to the next rank (a ring, as a table), and
 * checks the results.
 *
 *===---------------------------------------------------------------------===*/
#include "dist/Runtime/DistRuntime.h"

#include <stdio.h>

int main(void) {
  int64_t rank, size, sizes[2], axis = 1, mesh, group, i, shape = 4;
  int64_t table[5 * 64];
  double in[4], out[4], want;
  int32_t failures = 0;
  if (distRtInit() != DIST_RT_OK)
    return 1;
  rank = distRtWorldRank();
  size = distRtWorldSize();
  if (size % 2 != 0) {
    fprintf(stderr, "c-abi-check: needs an even number of ranks\n");
    return 2;
  }
  sizes[0] = 2;
  sizes[1] = size / 2;
  mesh = distRtMeshCreate(2, sizes, NULL);
  group = distRtGroup(mesh, 1, &axis);
  for (i = 0; i < 4; ++i)
    in[i] = (double)(rank * 10 + i);
  distRtAllReduce(group, in, out, 4, DIST_RT_F64, DIST_RT_SUM, NULL);
  /* Members of the group over axis 1: ranks x*size/2 .. x*size/2 + size/2-1
   * with x = this rank's coordinate on axis 0. */
  for (i = 0; i < 4; ++i) {
    int64_t x = distRtMeshCoord(mesh, 0), r;
    want = 0;
    for (r = x * (size / 2); r < (x + 1) * (size / 2); ++r)
      want += (double)(r * 10 + i);
    if (out[i] != want)
      ++failures;
  }
  if (distRtMeshContains(mesh) != 1)
    ++failures;
  /* Exchange: rank r sends in[0..4) to rank (r+1) % size. */
  if (size > 64) {
    fprintf(stderr, "c-abi-check: at most 64 ranks\n");
    return 2;
  }
  for (i = 0; i < size; ++i) {
    table[5 * i + 0] = i;
    table[5 * i + 1] = (i + 1) % size;
    table[5 * i + 2] = 0;
    table[5 * i + 3] = 0;
    table[5 * i + 4] = 4;
  }
  distRtExchange(1, &shape, in, &shape, out, size, table, DIST_RT_F64, NULL);
  for (i = 0; i < 4; ++i)
    if (out[i] != (double)(((rank + size - 1) % size) * 10 + i))
      ++failures;
  /* Local exchange: every rank copies in[0..4) into its own out. */
  for (i = 0; i < size; ++i)
    table[5 * i + 1] = i;
  distRtExchangeLocal(1, &shape, in, &shape, out, size, table, DIST_RT_F64,
                      NULL);
  for (i = 0; i < 4; ++i)
    if (out[i] != in[i])
      ++failures;
  distRtFinalize();
  if (rank == 0)
    printf("c-abi-check: %d failures\n", (int)failures);
  return failures == 0 ? 0 : 1;
}
