#!/usr/bin/env python3
"""The embedding lookup of a language model, its table split by vocabulary
rows (PyTorch's RowwiseParallel on an nn.Embedding), on --ranks ranks:

    python3 utils/bench/embedding.py BUILD [--ranks 4] [--reps 20]

- *dist*: the plan dist-partition chooses (docs/partitioning.md, "Lookups");
- *rows*: the vocabulary-parallel lookup, forced (the lookup's result
  declared a partial sum): each rank looks up the ids in its rows, the
  partial sums are reduced;
- *gathered*: the lookup after an explicit reshard of the table to every
  rank (what dist did before lookups had a layout of their own, and what
  any plan that reads the table whole costs).

Per call (dist-run's median over --reps calls, slowest rank), the modelled
communication under the default device, and the table bytes each rank
holds. Needs a
Python with NumPy (Debian's /usr/bin/python3) for dist-run's random inputs.
Prints markdown.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

from benchutil import dist_run_seconds

CASES = [  # vocabulary, hidden, tokens (batch x sequence)
    (32000, 1024, (4, 512)),    # Llama 2 vocabulary, a small model's width
    (32000, 256, (1, 16)),      # a few tokens (decode)
    (4096, 256, (4, 512)),      # a small table: gathering it once may be cheaper
]


def program(vocab, hidden, tokens, variant, ranks):
    b, s = tokens
    split = '#dist.sharding<@tp, [{"tp"}, {}]>'
    whole = '#dist.sharding<@tp, [{}, {}]>'
    table = f"tensor<{vocab}x{hidden}xf32, {split}>"
    read = "%table"
    lines = [f'dist.mesh @tp = <["tp"={ranks}]>',
             f"func.func @embed(%ids: tensor<{b}x{s}xi64, #dist.sharding<@tp, [{{}}, {{}}]>>,",
             f"                 %table: {table})",
             f"    -> tensor<{b}x{s}x{hidden}xf32, #dist.sharding<@tp, [{{}}, {{}}, {{}}]>> {{"]
    if variant == "gathered":
        lines.append(f"  %whole = dist.reshard %table : {table} -> "
                     f"tensor<{vocab}x{hidden}xf32, {whole}>")
        read, table = "%whole", f"tensor<{vocab}x{hidden}xf32, {whole}>"
    result = f"tensor<{b}x{s}x{hidden}xf32, #dist.sharding<@tp, [{{}}, {{}}, {{}}]>>"
    out = result
    if variant == "rows":
        out = (f"tensor<{b}x{s}x{hidden}xf32, #dist.sharding<@tp, [{{}}, {{}}, {{}}], "
               'partial = sum {"tp"}>>')
    lines += [
        f"  %c{vocab} = arith.constant {vocab} : i64",
        "  %z = arith.constant 0 : i64",
        f"  %e = tensor.empty() : {out}",
        "  %r = linalg.generic {indexing_maps = [affine_map<(b, s, j) -> (b, s)>, "
        "affine_map<(b, s, j) -> (b, s, j)>], iterator_types = [\"parallel\", \"parallel\", \"parallel\"]}",
        f"      ins(%ids : tensor<{b}x{s}xi64, #dist.sharding<@tp, [{{}}, {{}}]>>) outs(%e : {out}) {{",
        "  ^bb0(%id: i64, %o: f32):",
        f"    %m = arith.remsi %id, %c{vocab} : i64",
        f"    %mp = arith.addi %m, %c{vocab} : i64",
        "    %neg = arith.cmpi slt, %m, %z : i64",
        "    %row64 = arith.select %neg, %mp, %m : i64",
        "    %row = arith.index_cast %row64 : i64 to index",
        "    %j = linalg.index 2 : index",
        f"    %v = tensor.extract {read}[%row, %j] : {table}",
        "    linalg.yield %v : f32",
        f"  }} -> {out}"]
    if variant == "rows":
        lines.append(f"  %r2 = dist.reshard %r : {out} -> {result}")
    lines += [f"  return {'%r2' if variant == 'rows' else '%r'} : {result}", "}"]
    return "\n".join(lines) + "\n"


def modelled_ms(build, path):
    p = subprocess.run([os.path.join(build, "bin", "dist-opt"), path,
                        "--dist-reshard-pipeline", "-dist-remarks", "-o", os.devnull],
                       capture_output=True, text=True)
    m = re.search(r"dist-lower-reshard: .*modelled cost ([\d.e+-]+) s", p.stderr)
    if p.returncode != 0 or not m:
        sys.exit(f"embedding: dist-opt failed on {path}:\n{p.stderr}")
    plan = "gathers the table" if "all_gather" in p.stderr else "vocabulary-parallel"
    return float(m.group(1)) * 1e3, plan


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    print("| table (f32) | tokens | dist's plan | dist ms/call | rows ms/call | "
          "gathered ms/call | gathered / dist | modelled comm. ms (rows / gathered) | "
          "table MiB per rank (rows / gathered) |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for vocab, hidden, tokens in CASES:
            row = []
            for variant in ("dist", "rows", "gathered"):
                path = os.path.join(tmp, f"embed-{variant}.mlir")
                with open(path, "w") as f:
                    f.write(program(vocab, hidden, tokens, variant, args.ranks))
                seconds = dist_run_seconds(args.build, path, args.reps, args.ranks,
                                           who="embedding")
                row.append((seconds * 1e3, *modelled_ms(args.build, path)))
            (ms, _, plan), (rms, rmodel, _), (gms, gmodel, _) = row
            mib = vocab * hidden * 4 / 2**20
            print(f"| {vocab} x {hidden} | {tokens[0]} x {tokens[1]} | {plan} | {ms:.3f} | "
                  f"{rms:.3f} | {gms:.3f} | {gms / ms:.1f}x | {rmodel:.3f} / {gmodel:.3f} | "
                  f"{mib / args.ranks:.1f} / {mib:.1f} |")


if __name__ == "__main__":
    main()
