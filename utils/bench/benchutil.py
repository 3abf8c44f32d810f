"""What the benchmarks of utils/bench share: timing a callable, running a
compiled program under dist-run, and finding the BLAS the runtime links.
Plain Python (no NumPy), so that the peers' virtual environment imports it
too."""
import os
import re
import statistics
import subprocess
import sys
import time

PER_CALL = re.compile(r"per call: median ([0-9.]+) ms")


def median_seconds(fn, reps, warmups=1):
    """The median wall time of `reps` calls of fn, after `warmups` calls."""
    for _ in range(warmups):
        fn()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def dist_run_seconds(build, path, reps, ranks=1, flags=(), who="bench"):
    """dist-run's median seconds per call (the slowest rank) of the program
    at `path`; exits with dist-run's output when it fails."""
    cmd = [os.path.join(build, "bin", "dist-run"), "--np", str(ranks), path,
           "--reps", str(reps), "--input", "random:1", "--timeout", "1200", *flags]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    m = PER_CALL.search(p.stdout)
    if p.returncode != 0 or not m:
        sys.exit(f"{who}: {' '.join(cmd)} failed:\n{p.stdout}{p.stderr}")
    return float(m.group(1)) / 1e3


def blas_library(build):
    """The BLAS library the runtime links (ldd of libdist_runtime.so)."""
    lib = os.path.join(build, "lib", "libdist_runtime.so")
    out = subprocess.run(["ldd", lib], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if "blas" in line and "=>" in line:
            return line.split("=>")[1].split()[0]
    return None
