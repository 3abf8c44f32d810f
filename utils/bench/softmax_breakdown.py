#!/usr/bin/env python3
"""Where a compiled masked softmax spends its time (issue 43).

    python3 utils/bench/softmax_breakdown.py BUILD [--rows 128] [--reps 2001]

The masked softmax of utils/bench/op_classes.py on [1, ROWS, 512] f32 (256
KiB in and out: it stays in the L2 cache, so what is timed is arithmetic,
not memory), compiled by dist-run (--save-lowered), translated and
optimised by LLVM 22's own tools for this CPU, and timed from a small C
harness (the median of --reps calls). Two ablations show each part's
share: the division by the row's sum made a multiplication, and the exp
dropped (its argument stored instead). Neither ablation computes a
softmax: they only attribute time. Needs gcc and LLVM 22's mlir-translate,
opt and llc (Debian's llvm-22 and mlir-22-tools). Prints markdown.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import op_classes  # noqa: E402

LLVM = "/usr/lib/llvm-22/bin"

HARNESS = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
void *_mlir_memref_to_llvm_alloc(size_t n) { return malloc(n); }
void _mlir_memref_to_llvm_free(void *p) { free(p); }
void softmax(float *, float *, long, long, long, long, long, long, long,
             float *, float *, long, long, long, long, long, long, long);
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
int main(int argc, char **argv) {
  long rows = atol(argv[1]), reps = atol(argv[2]), n = rows * 512;
  float *x = aligned_alloc(64, n * 4), *y = aligned_alloc(64, n * 4);
  for (long i = 0; i < n; i++) x[i] = (float)rand() / RAND_MAX;
  memset(y, 0, n * 4);
  double *t = malloc(reps * sizeof(double));
  for (long r = 0; r < reps; r++) {
    double s = now();
    softmax(x, x, 0, 1, rows, 512, rows * 512, 512, 1,
            y, y, 0, 1, rows, 512, rows * 512, 512, 1);
    t[r] = now() - s;
  }
  qsort(t, reps, sizeof(double), cmp);
  printf("%.3f\n", t[reps / 2] * 1e6);
  return 0;
}
"""


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        sys.exit(f"softmax_breakdown: {' '.join(cmd)} failed:\n{p.stdout}{p.stderr}")
    return p.stdout


def without_division(ir):
    return ir.replace("fdiv <16 x float>", "fmul <16 x float>")


def without_exp(ir):
    """The exp loop stores its argument (x - max) instead of exp of it."""
    m = re.search(r"(%\d+) = fsub <16 x float> (%\d+), (%\d+)\n", ir)
    stores = list(re.finditer(r"store <16 x float> (%\d+), ptr (%\d+), align 64", ir))
    after = [s for s in stores if s.start() > m.end()]
    if not m or not after:
        sys.exit("softmax_breakdown: the exp loop was not found in the IR")
    s = after[0]
    return ir[:s.start()] + f"store <16 x float> {m.group(1)}, ptr {s.group(2)}, align 64" + \
        ir[s.end():]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("--rows", type=int, default=128)
    ap.add_argument("--reps", type=int, default=2001)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "softmax.mlir")
        with open(src, "w") as f:
            f.write(op_classes.masked_softmax().replace("16x512x512", f"1x{a.rows}x512"))
        lowered = os.path.join(tmp, "lowered.mlir")
        run([os.path.join(a.build, "bin", "dist-run"), "--np", "1", "--reps", "1",
             "--input", "random:1", src, "--save-lowered", lowered])
        ll = run([f"{LLVM}/mlir-translate", "--mlir-to-llvmir", lowered])
        ir = run([f"{LLVM}/opt", "-O2", "-S"], input=ll)
        harness = os.path.join(tmp, "harness.c")
        with open(harness, "w") as f:
            f.write(HARNESS)
        rows = []
        for name, variant in [("compiled softmax", ir),
                              ("division made a multiplication", without_division(ir)),
                              ("exp dropped", without_exp(ir))]:
            path = os.path.join(tmp, "v.ll")
            with open(path, "w") as f:
                f.write(variant)
            run([f"{LLVM}/llc", "-O3", "-mcpu=native", path, "-o", path + ".s"])
            run(["gcc", "-O2", harness, path + ".s", "-o", path + ".bin"])
            rows.append((name, float(run([path + ".bin", str(a.rows), str(a.reps)]))))
    base = rows[0][1]
    print("#### Where the masked softmax's time goes\n")
    print(f"`python3 utils/bench/softmax_breakdown.py BUILD` — the masked softmax above on "
          f"[1, {a.rows}, 512] (in the L2 cache: arithmetic, not memory), compiled by dist-run, "
          f"timed from C (median of {a.reps} calls), with two ablations that only attribute "
          "time (neither computes a softmax).\n")
    print(f"| [1, {a.rows}, 512] f32, from cache | us per call | share of the softmax |")
    print("|---|---:|---:|")
    print(f"| {rows[0][0]} | {base:.1f} | 100% |")
    for name, us in rows[1:]:
        print(f"| {name} | {us:.1f} | {100 * (base - us) / base:.0f}% |")
    scale = 16 * 512 / a.rows
    print(f"\nFrom cache the [16, 512, 512] softmax would take {base * scale / 1e3:.2f} ms: "
          "compare it with the fused time from memory above. The rest of the arithmetic is the "
          "mask, the row max and sum, and the loads and stores of the row's five loops. "
          "Semantics §6 allows reassociation only, so the division stays an IEEE division "
          "(not a product with the reciprocal), and the exp keeps its polynomial (within a few "
          "ulp of exp).")


if __name__ == "__main__":
    main()
