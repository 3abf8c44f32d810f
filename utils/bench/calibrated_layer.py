#!/usr/bin/env python3
"""A Llama decoder layer compiled under a dist-calibrate file with and
without its device roofline, timed and checked against NumPy.

    /usr/bin/python3 utils/bench/calibrated_layer.py BUILD [--reps 7] [--work DIR]
    /usr/bin/python3 utils/bench/calibrated_layer.py BUILD --stack [--reps 5]

Why: a topology file that prices the links of this machine but not its
compute leaves compute to the default device (semantics §3b: an H100, whose
compute is fast next to these links), so dist-partition may keep work
replicated to save communication. dist-calibrate writes the device's
roofline (semantics §8); this measures what that is worth on a program as
users write it.

For each mesh (tp=4 on 4 ranks, dp=2 x tp=4 on 8) it runs dist-calibrate
once, derives the same file without `device`, and for the layer with
hand-written layouts (Megatron tensor parallelism, `utils/e2e/gen_llama.py
--tp`) and with none (`--auto`: dist-partition chooses every layout) runs
`dist-run --reps` under each file, checks every rank's result against NumPy
(utils/e2e/check_shards.py), and prints a Markdown table: the median time
per call of the slowest rank, the modelled compute and communication
(`dist-partition` remarks) and the speedup the device gives. Exits 1 if a
result differs from NumPy's. Needs numpy (Debian's /usr/bin/python3).

--stack (issue 45): 16 layers as a loop with every layout chosen
(`gen_llama.py --auto`) on tp=4, planned for the default device and links
(no topology: an H100 node, semantics §3b) and for this machine
(`--topology auto`: calibrated once into a cache under --work), each run
and checked against NumPy: what fitting the model to the machine is worth
against the plan a user gets without it.
"""

import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAYER = ["--layers", "1", "--seq", "256", "--hidden", "512", "--heads", "8",
         "--kv-heads", "2", "--head-dim", "64", "--ffn", "1024"]
MESHES = [
    # (name, ranks, mesh, hand-written layout flags, batch)
    ("tp=4", 4, '<["tp"=4]>', ["--tp", "tp"], "1"),
    ("dp=2 x tp=4", 8, '<["dp"=2, "tp"=4]>', ["--tp", "tp", "--dp", "dp"], "2"),
]


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def checked(bin_dir, program, dump, partition_flag, env):
    """Whether dist-run's dump of `program` (planned with `partition_flag`)
    equals NumPy's results."""
    py = sys.executable
    ir = run([os.path.join(bin_dir, "dist-opt"), program, partition_flag], env=env).stdout
    planned = dump + ".mlir"
    with open(planned, "w") as f:
        f.writelines(l for l in open(program) if l.startswith("// EXPECT"))
        f.write(ir)
    check = subprocess.run([py, os.path.join(ROOT, "utils/e2e/check_shards.py"), planned,
                            dump, "--input", "random:7"], capture_output=True, text=True)
    return check.returncode == 0, ir


def stack(args, bin_dir):
    ranks, mesh = 4, '<["tp"=4]>'
    program = os.path.join(args.work, "stack16.mlir")
    assert LAYER[:2] == ["--layers", "1"]
    run([sys.executable, os.path.join(ROOT, "utils/e2e/gen_llama.py"), "--expect", "--auto",
         "--form", "loop", "--mesh", mesh, "--layers", "16", *LAYER[2:], "-o", program])
    env = dict(os.environ, DIST_TOPOLOGY_CACHE=os.path.join(args.work, "topology-cache"))
    print("| plan for | time per call | modelled compute | modelled communication | NumPy |")
    print("|---|---|---|---|---|")
    failed, times, plans = False, {}, {}
    for label, flags, partition in (
            ("the default device and links", [], "--dist-partition"),
            ("this machine (`--topology auto`)", ["--topology", "auto"],
             "--dist-partition=topology=auto")):
        dump = os.path.join(args.work, "stack16-" + ("auto" if flags else "default"))
        done = run([os.path.join(bin_dir, "dist-run"), "--np", str(ranks), "--input",
                    "random:7", "--reps", str(args.reps), "--dump", dump, *flags, program],
                   env=env)
        median = float(re.search(r"median ([0-9.]+) ms", done.stdout + done.stderr).group(1))
        remarks = run([os.path.join(bin_dir, "dist-opt"), program, partition,
                       "-dist-remarks", "-o", "/dev/null"], env=env).stderr
        model = re.search(r"modelled compute (\S+) s, communication (\S+) s", remarks)
        ok, plans[label] = checked(bin_dir, program, dump, partition, env)
        failed |= not ok
        times[label] = median
        print(f"| {label} | {median:.1f} ms | {float(model.group(1)) * 1e3:.2f} ms | "
              f"{float(model.group(2)) * 1e3:.2f} ms | {'OK' if ok else 'WRONG'} |", flush=True)
    default, fitted = times.values()
    same = len(set(plans.values())) == 1
    print()
    print(f"The calibrated plan runs {default / fitted:.2f}x the default plan's speed "
          f"({'the same plan' if same else 'a different plan'}).")
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--work", default="/tmp/dist-calibrated-layer")
    ap.add_argument("--stack", action="store_true",
                    help="16 layers: the default plan against --topology auto's")
    args = ap.parse_args()
    bin_dir = os.path.join(os.path.abspath(args.build), "bin")
    os.makedirs(args.work, exist_ok=True)
    if args.stack:
        return stack(args, bin_dir)
    py = sys.executable
    failed = False
    print("| mesh | layouts | file | time per call | modelled compute | "
          "modelled communication | NumPy |")
    print("|---|---|---|---|---|---|---|")
    for name, ranks, mesh, hand, batch in MESHES:
        tag = name.replace(" ", "").replace("=", "")
        with_device = os.path.join(args.work, tag + "-device.json")
        run([os.path.join(bin_dir, "dist-calibrate"), "--np", str(ranks),
             "--mesh", mesh, "--sizes", "64KiB:64MiB", "--reps", "5",
             "-o", with_device])
        topology = json.load(open(with_device))
        topology.pop("device", None)
        without = os.path.join(args.work, tag + "-no-device.json")
        json.dump(topology, open(without, "w"))
        times = {}
        for layouts, flags in (("hand (Megatron)", hand), ("auto", ["--auto"])):
            program = os.path.join(args.work, f"{tag}-{flags[0][2:]}.mlir")
            run([py, os.path.join(ROOT, "utils/e2e/gen_llama.py"), "--expect",
                 "--batch", batch, "--mesh", mesh, *LAYER, *flags, "-o", program])
            for label, path in (("no device", without), ("device", with_device)):
                dump = program[:-5] + "-" + label.replace(" ", "-")
                done = run([os.path.join(bin_dir, "dist-run"), "--np", str(ranks),
                            "--input", "random:7", "--topology", path,
                            "--reps", str(args.reps), "--dump", dump, program])
                out = done.stdout + done.stderr
                median = float(re.search(r"median ([0-9.]+) ms", out).group(1))
                remarks = run([os.path.join(bin_dir, "dist-opt"), program,
                               f"--dist-partition=topology={path}",
                               "-dist-remarks", "-o", "/dev/null"]).stderr
                model = re.search(r"modelled compute (\S+) s, communication (\S+) s",
                                  remarks)
                planned = dump + ".mlir"
                ir = run([os.path.join(bin_dir, "dist-opt"), program,
                          f"--dist-partition=topology={path}"]).stdout
                with open(planned, "w") as f:
                    f.writelines(l for l in open(program) if l.startswith("// EXPECT"))
                    f.write(ir)
                check = subprocess.run(
                    [py, os.path.join(ROOT, "utils/e2e/check_shards.py"), planned,
                     dump, "--input", "random:7"], capture_output=True, text=True)
                ok = check.returncode == 0
                failed |= not ok
                times[(layouts, label)] = median
                print(f"| {name} | {layouts} | {label} | {median:.1f} ms | "
                      f"{float(model.group(1)) * 1e3:.2f} ms | "
                      f"{float(model.group(2)) * 1e3:.2f} ms | "
                      f"{'OK' if ok else 'WRONG'} |", flush=True)
            print(f"| | {layouts} | speedup | "
                  f"{times[(layouts, 'no device')] / times[(layouts, 'device')]:.2f}x"
                  " | | | |", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
