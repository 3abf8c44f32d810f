"""Writes hand-made dumps of Inputs/compute-expect.mlir on 2 ranks (iota
inputs), shard by shard, without the checker's code:

    expect-dumps.py MODE DIR [INPUTS]

MODE good: the exact results; close: one float off by a relative 1e-6 (inside
the f32 tolerance); off: one float off by 1; pad: a padding element 1e-9;
int: one integer partial sum off by 1. With INPUTS, the arguments come from
INPUTS/arg<k>.npy (f32, f32 and i32 values) instead of iota; integer partial
sums then wrap in int32 on each rank, as the program's would.
"""
import os
import sys

import numpy as np

mode, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
a = np.arange(12, dtype=np.float64).reshape(3, 4)
b = np.arange(8, dtype=np.float64).reshape(4, 2)
c = np.arange(12, dtype=np.int64).reshape(3, 4)
if len(sys.argv) > 3:
    a, b, c = (np.load(os.path.join(sys.argv[3], f"arg{k}.npy"))
               for k in range(3))
    a, b = a.astype(np.float64), b.astype(np.float64)
    c = c.astype(np.int32).astype(np.int64)
g = a @ b
# Result 0 (rows split over x, block 2): rank 0 rows 0-1; rank 1 row 2, then
# a padding row.
r0 = [g[0:2].astype(np.float32), np.zeros((2, 2), dtype=np.float32)]
r0[1][0] = g[2]
# Result 1 (partial sum over x of arg2's column blocks).
r1 = [c[:, 0:2].sum(axis=1).astype(np.int32),   # int64 -> int32 wraps
      c[:, 2:4].sum(axis=1).astype(np.int32)]
if mode == "close":
    r0[1][0, 0] *= np.float32(1 + 1e-6)
elif mode == "off":
    r0[1][0, 1] += 1
elif mode == "pad":
    r0[1][1, 0] = 1e-9
elif mode == "int":
    r1[0][1] += 1
else:
    assert mode == "good", mode
for rank in range(2):
    np.save(os.path.join(out, f"result0.rank{rank}.npy"), r0[rank])
    np.save(os.path.join(out, f"result1.rank{rank}.npy"), r1[rank])
