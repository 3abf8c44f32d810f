//===- Passes.td - code generation of the local compute -----*- tablegen -*-===//
//
// The passes that turn each device's compute (after dist-localize, on
// tensors) into fast code, with MLIR's own transformations: elementwise
// fusion, tiling with producer fusion, partial-reduction tiling and
// vectorization. The products that become GEMM calls are left alone
// (include/dist/Codegen/StridedGemm.h). docs/compiler.md, "Local compute".
//
//===----------------------------------------------------------------------===//

#ifndef DIST_CODEGEN_PASSES_TD
#define DIST_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def DistFuseElementwise : Pass<"dist-fuse-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Fuse elementwise linalg ops into the ops that read them";
  let description = [{
    Upstream's elementwise fusion (`linalg::populateElementwiseOpsFusionPatterns`)
    on the tensors of each device: an all-parallel `linalg.generic` is folded
    into the generic that reads it, reductions included (a mask or a scale
    becomes the prologue of the max or sum that reads it), so its result is
    never written to memory. A producer with several readers is recomputed
    in each when its body is at most two ops and no `math` op, and kept
    otherwise (dist-fuse-rows then computes it once per row tile). Ops
    that may become GEMM calls (`out + a * b` bodies of float types) are
    never fused into, nor fused: the runtime's GEMM computes them.

    ```mlir
    %m = linalg.generic {... ["parallel", "parallel"]} ins(%s) outs(%e) {
      %y = arith.select %keep, %x, %masked : f32   // a causal mask
    }
    %max = linalg.generic {... ["parallel", "reduction"]} ins(%m) outs(%f) {
      %r = arith.maximumf %acc, %in : f32
    }
    // becomes one reduction whose body selects, then takes the max
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def DistFuseRows : Pass<"dist-fuse-rows", "::mlir::func::FuncOp"> {
  let summary = "Compute chains of reductions and elementwise ops a row at a time";
  let description = [{
    Each linalg op that no other fusable op reads (the end of a chain) is
    tiled along all its parallel loops but the innermost, one row per
    iteration of an `scf.for` nest (several rows when they are shorter than
    `tile-elements`), and the linalg ops it reads (reductions,
    elementwise ops, fills) are fused into that loop
    (`scf::tileConsumerAndFuseProducersUsingSCF`): a softmax (max, exp and
    sum, divide) or an RMSNorm (sum of squares, scale) reads its row once
    from memory and works on it in cache. A producer that something outside
    the chain reads is yielded by the loop as well. GEMM candidates are not
    fused (their operands stay whole tensors).

    ```mlir
    // softmax over the last dim of tensor<4x16x16xf32>, after fusion:
    %r = scf.for %h ... { scf.for %s ... {
      %max = linalg.generic ... -> tensor<1x1xf32>      // the row's max
      %sum = linalg.generic ... -> tensor<1x1xf32>      // sum of exp(x - max)
      %p = linalg.generic ... -> tensor<1x1x16xf32>     // exp(x - max) / sum
      tensor.insert_slice %p ...
    } }
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
  let options = [
    Option<"tileElements", "tile-elements", "int64_t",
           /*default=*/"::dist::codegen::kDefaultRowTileElements",
           "About how many elements a block of rows holds: rows shorter "
           "than this are taken several at a time">
  ];
}

def DistVectorize : Pass<"dist-vectorize", "::mlir::func::FuncOp"> {
  let summary = "Vectorize the local compute that is not a GEMM";
  let description = [{
    Every linalg op on tensors of static shape that is not a GEMM candidate
    becomes vector code of `vector-bytes`-wide vectors: its innermost loop is
    tiled by the vector length (`scf::tileUsingSCF`; a reduction there into
    a vector of partial results, merged after the loop:
    `ReductionTilingStrategy::PartialReductionOuterReduction`), its other
    loops by 1, the remainder iteration peeled so that every tile has a
    static shape, and each tile vectorized by `linalg::vectorize`
    (transfer reads and writes, elementwise vector ops,
    `vector.multi_reduction`). Ops of other element types than f32, f64,
    i32 and i64, or whose body holds anything but arith and math ops,
    `linalg.index` and `linalg.yield`, stay linalg (and lower to loops).

    ```mlir
    %y = linalg.generic {... ["parallel"]} ins(%x : tensor<64xf32>) ...
    // becomes
    scf.for %i = %c0 to %c64 step %c16 iter_args(%acc = %init) {
      %v = vector.transfer_read %x[%i] ... : tensor<64xf32>, vector<16xf32>
      %e = math.exp %v : vector<16xf32>
      %w = vector.transfer_write %e, %acc[%i] ...
    }
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::affine::AffineDialect"];
  let options = [
    Option<"vectorBytes", "vector-bytes", "int64_t",
           /*default=*/"::dist::codegen::kDefaultVectorBytes",
           "The vector width in bytes (64: AVX-512; LLVM splits wider "
           "vectors for narrower ISAs)">,
    Option<"accumulators", "accumulators", "int64_t",
           /*default=*/"::dist::codegen::kDefaultAccumulators",
           "A reduction along the innermost loop keeps up to this many "
           "vectors of partial results (independent chains, so that the "
           "core overlaps their latencies)">
  ];
}

def DistApproximateVectorMath
    : Pass<"dist-approximate-vector-math", "::mlir::func::FuncOp"> {
  let summary = "Math functions on f32 vectors as polynomial approximations";
  let description = [{
    LLVM has no vector form of `expf`, `tanhf`, ...: a `math.exp` on a
    vector would become one libm call per lane. Upstream's polynomial
    approximations (`populateMathPolynomialApproximationPatterns`: exp,
    expm1, log, log1p, log2, tanh, erf, atan, atan2, sin and cos on f32,
    within a few ulp) rewrite them into arithmetic that vectorizes. Only math ops on vectors are rewritten: the scalar ones keep
    libm's correctly rounded results.

    ```mlir
    %e = math.exp %v : vector<16xf32>
    // becomes a range reduction, a polynomial and an exponent bit-shift,
    // all on vector<16xf32>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def DistTreeReductions
    : Pass<"dist-tree-reductions", "::mlir::func::FuncOp"> {
  let summary = "Reductions along a vector's innermost dim as halving trees";
  let description = [{
    A `vector.multi_reduction` over the innermost dim alone (what a row's
    partial results are merged by) combines the vector's halves as vectors,
    log2(N) times, instead of upstream's lowering, which combines one lane
    at a time (a dependent chain of N scalar ops). Max, min, bitwise and
    integer kinds are exact in any order; a float sum or product is
    reassociated, which docs/semantics.md §6 allows. The accumulator is
    combined last; masked reductions are left alone. Runs before
    `lower-vector-multi-reduction`.

    ```mlir
    %r = vector.multi_reduction <maxnumf>, %v, %acc [0] : vector<16xf32> to f32
    // becomes
    %lo = vector.extract_strided_slice %v {offsets = [0], sizes = [8], strides = [1]}
    %hi = vector.extract_strided_slice %v {offsets = [8], sizes = [8], strides = [1]}
    %m = arith.maxnumf %lo, %hi : vector<8xf32>
    // ... 4 lanes, 2, 1; then
    %e = vector.extract %m1[0] : f32 from vector<1xf32>
    %r = arith.maxnumf %e, %acc : f32
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::vector::VectorDialect"];
}

#endif // DIST_CODEGEN_PASSES_TD
