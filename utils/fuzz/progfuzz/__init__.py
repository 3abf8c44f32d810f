"""A differential fuzzer of dist's sharded compute (docs/fuzzing.md).

program    the program description (mesh, dims, values, ops) and its two
           renderings: MLIR for the compiler, a NumPy expression for the
           reference
ops        the op families: each is one class (MLIR + NumPy) and one
           generator function
generate   the seeded generator and its feature switches
runner     dist-run, the check against the reference, the outcome classes
minimize   delta debugging of a failing program
"""
