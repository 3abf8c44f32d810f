#!/usr/bin/env python3
"""Differential fuzzer of dist's sharded compute (docs/fuzzing.md).

Generates random global-view programs (semantics §6 ops on random meshes and
layouts), runs each under `dist-run --dump` (once per lowering named by
--lowerings) and compares every rank's results with NumPy evaluated on the
global inputs. `--features contractions` is the contraction fuzzer.

    program_fuzzer.py run --seed 1 --count 100 [--features default,-expand]
                      [--lowerings default,loops] [--minimize] [--results DIR]
                      [--timeout 60] [--record DOC]
    program_fuzzer.py show --seed 17 [--features ...]        # the program
    program_fuzzer.py minimize (--seed 17 [--features ...] | --program PKL)
                      [--out FILE]
    program_fuzzer.py selfcheck --count 200 --features all    # the generator
    program_fuzzer.py features                                # the switches

Program k of a run has seed SEED+k; `show --seed` with the same features and
--max-ops prints exactly the program that ran (with this version of the
fuzzer). A failing program is saved under the results folder (default
build/program-fuzzer/) as <class>/seed<S>/{case.mlir, output.txt,
program.pkl, reproduce.sh} and, with --minimize, min.mlir: the smallest
program with the same failure (class, and for compiler errors the same
message), an e2e test as it stands (RUN and EXPECT lines for check_shards).
Exit status: 0 when no program failed in a way not already known
(runner.KNOWN), 1 otherwise, 2 on bad usage.
"""

import argparse
import json
import os
import pickle
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from progfuzz import generate, minimize, runner  # noqa: E402
from progfuzz.program import emit_mlir, expect_lines  # noqa: E402


def ops_of(prog, args):
    """The --max-ops the program was generated with (older saved programs
    do not record it)."""
    return getattr(prog, "max_ops", None) or args.max_ops


def header(prog, args):
    feats = ",".join(prog.features)
    return [f"// program-fuzzer: seed {prog.seed}, max-ops {ops_of(prog, args)}, features {feats}",
            f"// {prog.summary()}"]


def regression_text(prog, note, args, minimized=False):
    """An e2e test of the program: run by lit, checked by check_shards."""
    world, inp = prog.mesh.world, prog.input_seed
    lines = [f"// Found by the program fuzzer: utils/fuzz/program_fuzzer.py show --seed {prog.seed}"
             f" --max-ops {ops_of(prog, args)} --features {','.join(prog.features)}"
             + (" (minimized)" if minimized else "")]
    lines += [f"// {line}" for line in note]
    topology = ""
    lines += ["// REQUIRES: mpi, mlir, numpy"]
    if getattr(prog, "topology", None):
        # The `device` feature: compiled under the program's TOPOLOGY line.
        lines += [f"// RUN: grep '^{runner.TOPOLOGY_PREFIX}' %s | cut -c{len(runner.TOPOLOGY_PREFIX) + 1}- > %t.topology.json"]
        topology = " --topology %t.topology.json"
    for k, lowering in enumerate(runner.parse_lowerings(args.lowerings)):
        flags = "".join(" " + f for f in runner.LOWERINGS[lowering])
        dump = "%t" if k == 0 else f"%t.{lowering}"
        lines += [f"// RUN: rm -rf {dump} && dist-run --np {world} --timeout 120 --input random:{inp}{topology}{flags} %s --dump {dump}",
                  f"// RUN: %check_shards %s {dump} --input random:{inp}"]
    return emit_mlir(prog, lines + expect_lines(prog))


def run_one(prog, args, tools):
    text = runner.case_text(prog, header(prog, args))
    return runner.run_case(text, prog.mesh.world, prog.input_seed, tools,
                           timeout=args.timeout, slow=args.slow,
                           mutate_reference=args.mutate_reference,
                           lowerings=runner.parse_lowerings(args.lowerings))


def make_predicate(args, tools, target):
    def still_fails(cand):
        out = run_one(cand, args, tools)
        return out.signature == target
    return still_fails


def save_failure(prog, outcome, args, folder, tools, minimize_it=True):
    os.makedirs(folder, exist_ok=True)
    # The description itself, for `minimize --program` after the generator
    # has changed (a seed names a program of one version of the fuzzer).
    with open(os.path.join(folder, "program.pkl"), "wb") as f:
        pickle.dump(prog, f)
    with open(os.path.join(folder, "case.mlir"), "w") as f:
        f.write(regression_text(prog, [f"{outcome.cls}: {outcome.detail}"], args))
    with open(os.path.join(folder, "output.txt"), "w") as f:
        f.write(f"class: {outcome.cls}\ndetail: {outcome.detail}\nsignature: {outcome.signature}\n\n")
        f.write(outcome.output)
    feats = ",".join(prog.features)
    me = os.path.relpath(os.path.abspath(__file__), runner.ROOT)
    with open(os.path.join(folder, "reproduce.sh"), "w") as f:
        f.write("#!/bin/sh\n# Reruns this program (regenerated from its seed: the same fuzzer\n"
                "# version only), then minimizes the saved description into min.mlir.\n"
                f"cd \"$(dirname \"$0\")\" && R={runner.ROOT}\n"
                f"$R/{me} run --seed {prog.seed} --count 1 --max-ops {ops_of(prog, args)} --features {feats} --lowerings {args.lowerings}"
                " --results rerun\n"
                f"$R/{me} minimize --program program.pkl --out min.mlir\n")
    os.chmod(os.path.join(folder, "reproduce.sh"), 0o755)
    if args.minimize and minimize_it:
        small = minimize.minimize(prog, make_predicate(args, tools, outcome.signature),
                                  budget=args.budget, log=lambda m: log(args, "  " + m))
        final = run_one(small, args, tools)
        with open(os.path.join(folder, "min.mlir"), "w") as f:
            f.write(regression_text(small, [f"{final.cls}: {final.detail}"], args, minimized=True))
        log(args, f"  minimized: {os.path.join(folder, 'min.mlir')}")


def log(args, msg):
    if not args.quiet:
        print(msg, flush=True)


def cmd_run(args):
    tools = runner.find_tools(args.bin)
    features = generate.parse_features(args.features)
    counts = {c: 0 for c in runner.CLASSES}
    known = {}
    failures = []
    started = time.time()
    for k in range(args.count):
        seed = args.seed + k
        prog = generate.generate(seed, features, args.max_ops)
        outcome = run_one(prog, args, tools)
        counts[outcome.cls] += 1
        line = f"seed {seed}: {outcome.cls} ({outcome.seconds:.1f} s) {prog.summary()}"
        if outcome.known:
            known[outcome.known] = known.get(outcome.known, 0) + 1
            log(args, line + f"\n  known: {outcome.known}: {outcome.detail}")
            if known[outcome.known] == 1:     # the first of each, not minimized
                folder = os.path.join(args.results, f"known-{outcome.known}", f"seed{seed}")
                save_failure(prog, outcome, args, folder, tools, minimize_it=False)
        elif outcome.cls != "pass":
            line += f"\n  {outcome.detail}"
            failures.append((seed, outcome.cls, outcome.detail))
            folder = os.path.join(args.results, outcome.cls, f"seed{seed}")
            log(args, line)
            save_failure(prog, outcome, args, folder, tools)
            log(args, f"  saved: {folder}")
            if args.stop_after and len(failures) >= args.stop_after:
                args.count = k + 1
                break
        elif args.verbose:
            log(args, line)
    seconds = time.time() - started
    summary = ", ".join(f"{n} {c}" for c, n in counts.items() if n or c == "pass")
    if known:
        summary += " (known: " + ", ".join(f"{n} {k}" for k, n in sorted(known.items())) + ")"
    print(f"program-fuzzer: {args.count} programs (seeds {args.seed}..{args.seed + args.count - 1}): "
          f"{summary}; {seconds:.0f} s", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"seed": args.seed, "count": args.count, "features": features,
                       "max_ops": args.max_ops, "seconds": round(seconds, 1),
                       "counts": counts, "known": known,
                       "failures": [{"seed": s, "class": c, "detail": d} for s, c, d in failures]},
                      f, indent=1)
    if args.record:
        record(args.record, args, counts, known, seconds)
    return 1 if failures else 0


BEGIN = "<!-- program-fuzzer results (utils/fuzz.sh programs writes this table) -->"
END = "<!-- end of program-fuzzer results -->"
COLUMNS = ["wrong-result", "crash", "invalid-ir", "timeout", "refusal", "slow"]


def record(doc, args, counts, known, seconds):
    """Writes this run's counts into DOC's program fuzzer table: one row
    per --features value, the latest run replacing the row it had."""
    head = ("| features | max ops | seeds | programs | pass | " + " | ".join(COLUMNS)
            + " | known | fuzzer errors | seconds | run on |")
    rule = "|---|---:|---|" + "---:|" * (len(COLUMNS) + 5) + "---|"
    features = args.features
    if args.lowerings != "default":
        features += f"` `--lowerings {args.lowerings}"
    key = f"| `{features}` | {args.max_ops} |"
    known_text = ", ".join(f"{n} {k}" for k, n in sorted(known.items())) or "0"
    row = (f"{key} {args.seed}..{args.seed + args.count - 1} | {args.count} | {counts['pass']} | "
           + " | ".join(str(counts[c]) for c in COLUMNS)
           + f" | {known_text} | {counts['fuzzer-error']} | {seconds:.0f} | "
           + time.strftime("%Y-%m-%d", time.gmtime()) + " |")
    text = open(doc).read() if os.path.exists(doc) else ""
    rows = []
    if BEGIN in text and END in text:
        before, rest = text.split(BEGIN, 1)
        old, after = rest.split(END, 1)
        rows = [line for line in old.strip().splitlines()
                if line.startswith("| `") and not line.startswith(key)]
    else:
        before, after = text.rstrip("\n") + "\n\n", "\n"
    table = "\n".join([BEGIN, head, rule] + rows + [row, END])
    with open(doc, "w") as f:
        f.write(before + table + after)
    print(f"program-fuzzer: wrote the counts to {doc}")


def cmd_show(args):
    features = generate.parse_features(args.features)
    prog = generate.generate(args.seed, features, args.max_ops)
    sys.stdout.write(regression_text(prog, [prog.summary()], args))
    return 0


def cmd_minimize(args):
    tools = runner.find_tools(args.bin)
    if args.program:
        with open(args.program, "rb") as f:
            prog = pickle.load(f)
    else:
        features = generate.parse_features(args.features)
        prog = generate.generate(args.seed, features, args.max_ops)
    outcome = run_one(prog, args, tools)
    print(f"seed {prog.seed}: {outcome.cls}: {outcome.detail}")
    if outcome.cls in ("pass", "fuzzer-error"):
        print("nothing to minimize")
        return 1
    small = minimize.minimize(prog, make_predicate(args, tools, outcome.signature),
                              budget=args.budget, log=print)
    final = run_one(small, args, tools)
    text = regression_text(small, [f"{final.cls}: {final.detail}"], args, minimized=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
        print(f"wrote {args.out}")
    else:
        sys.stdout.write(text)
    return 0


def cmd_selfcheck(args):
    """The generator's own test, without running anything: every program of
    the seeds parses and verifies (dist-opt) and its reference evaluates."""
    tools = runner.find_tools(args.bin)
    features = generate.parse_features(args.features)
    bad = 0
    for k in range(args.count):
        prog = generate.generate(args.seed + k, features, args.max_ops)
        text = runner.case_text(prog, header(prog, args))
        problem = runner.check_program(text, tools)
        if problem:
            bad += 1
            print(f"seed {args.seed + k}: {problem}")
    print(f"program-fuzzer selfcheck: {args.count} programs, {bad} bad")
    return 1 if bad else 0


def cmd_features(args):
    print("default ci  feature")
    for name, what in generate.FEATURES.items():
        d = "on " if name in generate.DEFAULT else "off"
        c = "on " if name in generate.PRESETS["ci"] else "off"
        print(f"{d:7} {c} {name:23} {what}")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command")

    def common(p):
        p.add_argument("--seed", type=int, default=1)
        p.add_argument("--features", default="default",
                       help="comma list: names, presets (default, all, ci), -name, +name")
        p.add_argument("--max-ops", type=int, default=6)
        p.add_argument("--timeout", type=int, default=60, help="seconds per dist-run")
        p.add_argument("--slow", type=float, default=30,
                       help="seconds after which a right result counts as slow")
        p.add_argument("--bin", help="folder of dist-run and dist-opt")
        p.add_argument("--budget", type=int, default=150, help="runs the minimizer may spend")
        p.add_argument("--quiet", action="store_true")
        p.add_argument("--mutate-reference", action="store_true",
                       help="self-test: spoil one expected element of every program")
        p.add_argument("--lowerings", default="default",
                       help="comma list of the lowerings every program runs under, each "
                            "compared with NumPy: " + ", ".join(
                                f"{name} ({' '.join(flags) or 'dist-run as it is'})"
                                for name, flags in runner.LOWERINGS.items()))

    p = sub.add_parser("run")
    common(p)
    p.add_argument("--count", type=int, default=20)
    p.add_argument("--results", default=os.path.join(runner.ROOT, "build", "program-fuzzer"))
    p.add_argument("--minimize", action="store_true")
    p.add_argument("--stop-after", type=int, metavar="N", help="stop after N new failures")
    p.add_argument("--json", help="write the counts to this file")
    p.add_argument("--record", metavar="DOC",
                   help="write the counts into DOC's program fuzzer table (docs/fuzzing.md)")
    p.add_argument("-v", "--verbose", action="store_true", help="a line per program")
    p = sub.add_parser("show")
    common(p)
    p = sub.add_parser("minimize")
    common(p)
    p.add_argument("--out")
    p.add_argument("--program", help="a program.pkl a run saved (instead of --seed)")
    p = sub.add_parser("selfcheck")
    common(p)
    p.add_argument("--count", type=int, default=100)
    sub.add_parser("features")
    args = parser.parse_args()
    try:
        if args.command == "run":
            return cmd_run(args)
        if args.command == "show":
            return cmd_show(args)
        if args.command == "minimize":
            return cmd_minimize(args)
        if args.command == "selfcheck":
            return cmd_selfcheck(args)
        if args.command == "features":
            return cmd_features(args)
    except ValueError as e:
        print(f"program_fuzzer: {e}", file=sys.stderr)
        return 2
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
