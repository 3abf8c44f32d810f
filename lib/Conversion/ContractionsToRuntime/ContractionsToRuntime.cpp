//===- ContractionsToRuntime.cpp - local matmuls to distRtGemm ------------===//
//
// The matrix products of a bufferized program, whatever op spells them
// (linalg.matmul with or without transposed maps, batch_matmul, a generic
// that multiplies and adds, grouped-query attention's `h floordiv G` maps),
// become calls of the runtime's batched GEMM (distRtGemm: BLAS on the host,
// cuBLAS on the GPU) exactly when dist::codegen::matchStridedGemm says which
// calls compute them (include/dist/Codegen/StridedGemm.h: one analysis for
// every target): one call, or a nest of scf.for loops around one that moves
// each operand's pointer. What does not match stays a linalg op and lowers
// to loops (docs/compiler.md, "Contractions").
//
//===----------------------------------------------------------------------===//

#include "../DistToRuntime/RuntimeCalls.h"

#include "dist/Codegen/StridedGemm.h"
#include "dist/Conversion/Passes.h"
#include "dist/Dialect/Dist/Transforms/Remarks.h"
#include "dist/Runtime/DistRuntime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/FormatVariadic.h"

namespace dist {
#define GEN_PASS_DEF_CONVERTCONTRACTIONSTORUNTIME
#include "dist/Conversion/Passes.h.inc"
} // namespace dist

using namespace mlir;
using namespace dist;
using codegen::StridedGemm;

namespace {

/// The index offset (elements) of each operand at the current point of the
/// outer loops.
struct Offsets {
  Value a, b, c;
};

/// Builds the loops around the call, innermost last; `body` is called at
/// the innermost point with the operands' offsets.
void buildOuterLoops(OpBuilder &builder, Location loc, const StridedGemm &gemm,
                     function_ref<void(OpBuilder &, Offsets)> body) {
  auto constant = [&](OpBuilder &b, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  Offsets offsets{constant(builder, gemm.offsetA),
                  constant(builder, gemm.offsetB),
                  constant(builder, gemm.offsetC)};
  std::function<void(OpBuilder &, unsigned, Offsets)> nest = [&](OpBuilder &b,
                                                                 unsigned depth,
                                                                 Offsets at) {
    if (depth == gemm.outer.size())
      return body(b, at);
    const codegen::GemmOuterLoop &loop = gemm.outer[depth];
    scf::ForOp::create(
        b, loc, constant(b, 0), constant(b, loop.extent), constant(b, 1),
        ValueRange{}, [&](OpBuilder &inner, Location, Value iv, ValueRange) {
          auto move = [&](Value offset, int64_t stride) -> Value {
            if (stride == 0)
              return offset;
            Value step =
                arith::MulIOp::create(inner, loc, iv, constant(inner, stride));
            return arith::AddIOp::create(inner, loc, offset, step);
          };
          nest(inner, depth + 1,
               Offsets{move(at.a, loop.strideA), move(at.b, loop.strideB),
                       move(at.c, loop.strideC)});
          scf::YieldOp::create(inner, loc);
        });
  };
  nest(builder, 0, offsets);
}

/// Rewrites `op` as the distRtGemm calls that compute it.
void lowerContraction(linalg::LinalgOp op, const StridedGemm &gemm,
                      RuntimeCalls &calls) {
  OpBuilder builder(op);
  Location loc = op.getLoc();
  int32_t input = *getRuntimeDType(gemm.inputType);
  int32_t output = *getRuntimeDType(gemm.outputType);
  buildOuterLoops(builder, loc, gemm, [&](OpBuilder &b, Offsets at) {
    auto i64 = [&](int64_t value) { return calls.i64(b, loc, value); };
    auto i32 = [&](int32_t value) { return calls.i32(b, loc, value); };
    Value args[] = {i32(gemm.transA),
                    i32(gemm.transB),
                    i64(gemm.m),
                    i64(gemm.n),
                    i64(gemm.k),
                    calls.elementPtr(b, loc, gemm.a, at.a),
                    i64(gemm.lda),
                    i64(gemm.strideA),
                    calls.elementPtr(b, loc, gemm.b, at.b),
                    i64(gemm.ldb),
                    i64(gemm.strideB),
                    calls.elementPtr(b, loc, gemm.c, at.c),
                    i64(gemm.ldc),
                    i64(gemm.strideC),
                    i64(gemm.batch),
                    i32(input),
                    i32(output),
                    calls.nullPtr(b, loc)};
    calls.call(b, loc, RuntimeEntry::Gemm, args);
  });
  op->erase();
}

/// The remark of a contraction lowered to GEMM calls.
std::string describe(const StridedGemm &gemm) {
  std::string text = llvm::formatv(
      "contraction: {0} GEMM call{1} (batch {2}, m {3}, n {4}, k {5}{6}{7})",
      gemm.calls(), gemm.calls() == 1 ? "" : "s", gemm.batch, gemm.m, gemm.n,
      gemm.k, gemm.transA ? ", A transposed" : "",
      gemm.transB ? ", B transposed" : "");
  return text;
}

struct ConvertContractionsToRuntimePass
    : public dist::impl::ConvertContractionsToRuntimeBase<
          ConvertContractionsToRuntimePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    RuntimeCalls calls(module);
    SmallVector<linalg::LinalgOp> candidates;
    module.walk([&](linalg::LinalgOp op) {
      if (codegen::isMultiplyAdd(op))
        candidates.push_back(op);
    });
    bool remark = remarks || remarksRequested();
    for (linalg::LinalgOp op : candidates) {
      std::string whyNot;
      FailureOr<StridedGemm> gemm = codegen::matchStridedGemm(op, whyNot);
      if (succeeded(gemm)) {
        if (remark)
          op.emitRemark(describe(*gemm));
        lowerContraction(op, *gemm, calls);
      } else if (remark) {
        op.emitRemark("contraction stays loops: ") << whyNot;
      }
    }
  }
};

} // namespace
