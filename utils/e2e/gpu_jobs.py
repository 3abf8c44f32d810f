#!/usr/bin/env python3
"""Every e2e program compiled for target=gpu here, run and checked on a GPU.

A GPU machine lent to a session has the runtime's dependencies (CUDA, NCCL,
MPI) but no LLVM or MLIR, so the programs are compiled on the development
machine (dist-run --compile-only: one shared object and a job file each) and
only run there (dist-run-worker), each checked against NumPy by
check_shards.py as its lit test checks it on CPUs:

    python3 utils/e2e/gpu_jobs.py compile BUILD JOBS [--cpu x86-64-v3]
    python3 utils/e2e/gpu_jobs.py run JOBS --bin BIN [--only NAME,...]

compile reads the lit tests of test/e2e (the .mlir programs whose RUN line
is `dist-run --np N [--input SPEC] [--topology %t.json] %s --dump %t`, with
any `echo '...' > %t.json` before it), compiles each for target=gpu on the
mpi backend (device buffers where a GPU is visible, transfers staged through
the host: several ranks share one GPU), keeps what the checker reads beside
each job (NAME/check.mlir: the program, planned for a dist.auto entry), and
writes JOBS/jobs.txt.
run starts each job with BIN/dist-mpirun and BIN/dist-run-worker, checks its
dumps, prints one line per program and a summary, and exits non-zero if any
program fails. Both need only Python 3; the check needs NumPy.
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
E2E = os.path.join(ROOT, "test", "e2e")


def programs():
    """(name, source, np, input spec, topology text) of every simple e2e program."""
    found = []
    for sub in ("compute", ".", "fuzz-regressions"):
        folder = os.path.join(E2E, sub)
        for file in sorted(os.listdir(folder)):
            if not file.endswith(".mlir"):
                continue
            path = os.path.join(folder, file)
            text = open(path).read()
            topology = None
            run = None
            for line in re.findall(r"^// RUN: (.*)$", text, re.M):
                m = re.search(r"echo '([^']*)' > %t\.json", line)
                if m:
                    topology = m.group(1)
                if "dist-run " in line and "--dump" in line and run is None:
                    run = line[line.index("dist-run "):]
            if not run or "npy:" in run or "%t." in run.replace("%t.json", ""):
                continue
            words = shlex.split(run.split("&&")[0].split("|")[0])
            np_ = int(words[words.index("--np") + 1])
            spec = words[words.index("--input") + 1] if "--input" in words else "iota"
            uses_topology = "--topology" in words
            if uses_topology and topology is None:
                continue
            if "--backend" in words or "--target" in words:
                continue  # the test picks its own backend or target
            name = os.path.relpath(path, E2E).replace("/", "_")[:-5]
            found.append((name, path, np_, spec, topology if uses_topology else None))
    return found


def compile_jobs(a):
    os.makedirs(a.jobs, exist_ok=True)
    dist_run = os.path.join(a.build, "bin", "dist-run")
    lines = []
    failed = 0
    for name, path, np_, spec, topology in programs():
        job = os.path.join(a.jobs, name)
        shutil.rmtree(job, ignore_errors=True)
        cmd = [dist_run, "--np", str(np_), "--backend", "mpi", "--target", "gpu",
               "--gpu-chip", a.gpu_chip, "--input", spec, "--compile-only", job, path]
        if a.cpu:
            cmd += ["--cpu", a.cpu]
        if topology is not None:
            os.makedirs(job, exist_ok=True)
            with open(os.path.join(job, "topology.json"), "w") as f:
                f.write(topology)
            cmd += ["--topology", os.path.join(job, "topology.json")]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            failed += 1
            print(f"compile FAILED {name}: {(p.stdout + p.stderr).strip().splitlines()[-1]}")
            continue
        # What the checker reads: the program, or for a dist.auto entry the
        # program as dist-partition lays it out (its EXPECT lines kept).
        check = open(path).read()
        if "dist.auto" in check:
            plan = [os.path.join(a.build, "bin", "dist-opt"), path]
            if topology is not None:
                plan.append("--dist-partition=topology=" + os.path.join(job, "topology.json"))
            else:
                plan.append("--dist-partition")
            p = subprocess.run(plan, capture_output=True, text=True)
            expect = "".join(l + "\n" for l in check.splitlines()
                             if l.startswith("// EXPECT") or l.startswith("// ..."))
            check = expect + p.stdout
        with open(os.path.join(job, "check.mlir"), "w") as f:
            f.write(check)
        lines.append(f"{name} {np_} {spec}")
    with open(os.path.join(a.jobs, "jobs.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"gpu_jobs: {len(lines)} programs compiled for target=gpu into {a.jobs}"
          + (f", {failed} failed to compile" if failed else ""))
    return 1 if failed else 0


def run_jobs(a):
    with open(os.path.join(a.jobs, "jobs.txt")) as f:
        jobs = [line.split() for line in f if line.strip()]
    only = set(a.only.split(",")) if a.only else None
    mpirun = os.path.join(a.bin, "dist-mpirun")
    worker = os.path.join(a.bin, "dist-run-worker")
    checker = os.path.join(ROOT, "utils", "e2e", "check_shards.py")
    passed = failed = 0
    for name, np_, spec in jobs:
        source = os.path.join(a.jobs, name, "check.mlir")
        if only and name not in only:
            continue
        with tempfile.TemporaryDirectory() as dump:
            start = time.time()
            p = subprocess.run([mpirun, "--timeout", str(a.timeout), "-np", np_, worker,
                                os.path.join(a.jobs, name, "job.txt"), "--dump", dump],
                               capture_output=True, text=True)
            ran = time.time() - start
            if p.returncode != 0:
                failed += 1
                tail = (p.stdout + p.stderr).strip().splitlines()[-3:]
                print(f"FAIL {name} (np {np_}): run: {' | '.join(tail)}")
                continue
            c = subprocess.run([sys.executable, checker, source, dump,
                                "--input", spec], capture_output=True, text=True)
            if c.returncode != 0:
                failed += 1
                print(f"FAIL {name} (np {np_}): check: {(c.stdout + c.stderr).strip()[-300:]}")
                continue
            passed += 1
            call = re.search(r"([0-9.]+) ms on the slowest rank", p.stdout)
            print(f"PASS {name} (np {np_}, {ran:.1f} s, call {call.group(1) if call else '?'} ms)")
    print(f"gpu_jobs: {passed} passed, {failed} failed")
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="verb", required=True)
    c = sub.add_parser("compile")
    c.add_argument("build")
    c.add_argument("jobs")
    c.add_argument("--cpu", default="x86-64-v3",
                   help="the CPU the host code is compiled for (the GPU machine's)")
    c.add_argument("--gpu-chip", default="sm_90",
                   help="the GPU the kernels are compiled for (H100/H200: sm_90)")
    r = sub.add_parser("run")
    r.add_argument("jobs")
    r.add_argument("--bin", required=True, help="the folder of dist-mpirun and dist-run-worker")
    r.add_argument("--only", help="names of the programs to run, comma-separated")
    r.add_argument("--timeout", type=int, default=120)
    a = ap.parse_args()
    sys.exit(compile_jobs(a) if a.verb == "compile" else run_jobs(a))


if __name__ == "__main__":
    main()
