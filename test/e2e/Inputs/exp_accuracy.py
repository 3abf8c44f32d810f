"""The vector exp's accuracy (dist-approximate-vector-math) against NumPy's
exp in float64, on the inputs of exp-accuracy.test:

    exp_accuracy.py inputs DIR          writes DIR/arg0.npy
    exp_accuracy.py check DIR OUT ULPS  checks OUT/result0.rank0.npy

The inputs: every 997th f32 bit pattern from -90 to 90 (2.2 million values,
some 8,000 in each binade) and the edges: ±0,
±inf, NaN, the subnormal and overflow thresholds. Normal results must be
within ULPS units in the last place; results above FLT_MAX +inf; results
below the smallest normal at most that (the polynomial flushes them to 0);
NaN NaN. Prints the largest error.
"""
import sys

import numpy as np

ROWS = 2200  # exp-accuracy.mlir's tensor<2200x1024xf32>


def inputs():
    top = np.float32(90.0).view(np.uint32)
    positive = np.arange(0, top, 997, dtype=np.uint32).view(np.float32)
    edges = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 88.72283, 88.72284,
                      88.7228, 88.8, 89.0, -87.33654, -87.8, -88.0, -103.9,
                      -104.0, 1e-30, -1e-30, 0.5, 1.0, -1.0, 2.0 ** -126],
                     dtype=np.float32)
    values = np.concatenate([positive, -positive, edges])
    # The program's shape (ROWS x 1024); np.resize repeats the first values.
    assert len(values) <= ROWS * 1024
    return np.resize(values, (ROWS, 1024))


def check(x, got, ulps):
    x, got = x.ravel(), got.ravel()
    want = np.exp(x.astype(np.float64))
    tiny, huge = np.finfo(np.float32).tiny, np.finfo(np.float32).max
    errors = []
    nan = np.isnan(x)
    if not np.isnan(got[nan]).all():
        errors.append("a NaN input did not give NaN")
    over = ~nan & (want > huge)
    if not np.isposinf(got[over]).all():
        errors.append(f"{int((~np.isposinf(got[over])).sum())} results above FLT_MAX are not +inf")
    under = ~nan & (want < tiny)
    if not ((got[under] >= 0) & (got[under] <= tiny)).all():
        errors.append("a result below the smallest normal is not in [0, 2^-126]")
    normal = ~nan & ~over & ~under
    spacing = np.spacing(want[normal].astype(np.float32)).astype(np.float64)
    error = np.abs(got[normal].astype(np.float64) - want[normal]) / spacing
    worst = int(np.argmax(error))
    print(f"exp: {normal.sum()} normal results, largest error {error[worst]:.2f} ulp "
          f"at x = {x[normal][worst]!r}")
    if error[worst] > ulps:
        errors.append(f"error {error[worst]:.2f} ulp > {ulps}")
    return errors


def main():
    if sys.argv[1] == "inputs":
        np.save(f"{sys.argv[2]}/arg0.npy", inputs())
        return
    x = np.load(f"{sys.argv[2]}/arg0.npy")
    got = np.load(f"{sys.argv[3]}/result0.rank0.npy")
    errors = check(x, got, float(sys.argv[4]))
    for error in errors:
        print("exp_accuracy:", error)
    sys.exit(1 if errors else 0)


main()
