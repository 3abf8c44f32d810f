//===- ContractionsToRuntime.cpp - local matmuls to distRtGemm ------------===//
//
// The matrix products of a bufferized program, whatever op spells them
// (linalg.matmul with or without transposed maps, batch_matmul, a generic
// that multiplies and adds), become one call of the runtime's batched GEMM
// (distRtGemm: BLAS on the host, cuBLAS on the GPU) when their operands are
// strided matrices BLAS can address. The loop dims of each role (batch, m,
// n, k: linalg::inferContractionDims) are collapsed into one when every
// operand holding them lays them out as one strided run, so a (b, s, d) x
// (d, f) product is one m = b*s GEMM. What does not match stays a linalg op
// and lowers to loops: integer products, masked bodies, dynamic strides,
// views BLAS cannot address (docs/compiler.md, "Contractions").
//
//===----------------------------------------------------------------------===//

#include "../DistToRuntime/RuntimeCalls.h"

#include "dist/Conversion/Passes.h"
#include "dist/Runtime/DistRuntime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

namespace dist {
#define GEN_PASS_DEF_CONVERTCONTRACTIONSTORUNTIME
#include "dist/Conversion/Passes.h.inc"
} // namespace dist

using namespace mlir;
using namespace dist;

namespace {

/// A role's loop dims collapsed in one operand: `size` elements `stride`
/// apart.
struct Run {
  int64_t size = 1;
  int64_t stride = 0;
};

/// How one operand of a product lays out the loop dims: for each loop dim,
/// the stride of the memref dim it indexes (none: the operand does not
/// depend on it).
struct OperandLayout {
  Value memref;
  SmallVector<std::optional<int64_t>> strideOfLoop;
  /// The loop dims in the order the operand's memref dims take them.
  SmallVector<unsigned> loopOrder;
};

std::optional<OperandLayout> layoutOf(OpOperand &operand, AffineMap map,
                                      unsigned numLoops) {
  auto type = dyn_cast<MemRefType>(operand.get().getType());
  if (!type || !map.isProjectedPermutation())
    return std::nullopt;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return std::nullopt;
  OperandLayout layout;
  layout.memref = operand.get();
  layout.strideOfLoop.assign(numLoops, std::nullopt);
  for (auto [position, result] : llvm::enumerate(map.getResults())) {
    unsigned loop = cast<AffineDimExpr>(result).getPosition();
    layout.strideOfLoop[loop] = strides[position];
    layout.loopOrder.push_back(loop);
  }
  return layout;
}

/// Collapses the loop dims `role` (of static sizes `sizes`) in `operand`,
/// where each must appear: the dims of size > 1, in the operand's order,
/// must form one strided run. `order` is the order the first operand took
/// them in; the others must agree, so that every operand flattens the role
/// the same way.
std::optional<Run> collapse(const OperandLayout &operand,
                            ArrayRef<unsigned> role, ArrayRef<int64_t> sizes,
                            SmallVector<unsigned> &order) {
  SmallVector<unsigned> mine;
  for (unsigned loop : operand.loopOrder)
    if (llvm::is_contained(role, loop) && sizes[loop] != 1)
      mine.push_back(loop);
  if (order.empty())
    order = mine;
  else if (order != mine)
    return std::nullopt;
  Run run;
  for (unsigned i = 0; i < mine.size(); ++i) {
    int64_t stride = *operand.strideOfLoop[mine[i]];
    if (i > 0 && run.stride != stride * sizes[mine[i]])
      return std::nullopt;
    run.size *= sizes[mine[i]];
    run.stride = stride;
  }
  return run;
}

/// A matrix of `rows` x `cols` whose elements are `rowStride` and
/// `colStride` apart, as BLAS addresses it: row-major with leading dim `ld`
/// (trans = false), or the transpose of a row-major cols x rows matrix.
struct MatrixView {
  bool trans = false;
  int64_t ld = 1;
};

std::optional<MatrixView> viewOf(int64_t rows, int64_t cols, int64_t rowStride,
                                 int64_t colStride) {
  if (cols == 1 || colStride == 1) {
    int64_t ld = rows == 1 ? std::max<int64_t>(cols, 1) : rowStride;
    if (ld >= std::max<int64_t>(cols, 1))
      return MatrixView{false, ld};
  }
  if (rows == 1 || rowStride == 1) {
    int64_t ld = cols == 1 ? std::max<int64_t>(rows, 1) : colStride;
    if (ld >= std::max<int64_t>(rows, 1))
      return MatrixView{true, ld};
  }
  return std::nullopt;
}

/// Whether the body is out + a * b (in either order), with a and b the
/// input elements, each maybe widened by arith.extf to the output's type.
bool isMultiplyAdd(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  if (yield.getNumOperands() != 1)
    return false;
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value out = body->getArgument(2);
  Value product = add.getLhs() == out   ? add.getRhs()
                  : add.getRhs() == out ? add.getLhs()
                                        : Value();
  auto mul = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!mul)
    return false;
  auto input = [&](Value value) -> std::optional<unsigned> {
    if (auto ext = value.getDefiningOp<arith::ExtFOp>())
      value = ext.getIn();
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg || arg.getOwner() != body || arg.getArgNumber() > 1)
      return std::nullopt;
    return arg.getArgNumber();
  };
  std::optional<unsigned> lhs = input(mul.getLhs()), rhs = input(mul.getRhs());
  if (!lhs || !rhs || *lhs == *rhs)
    return false;
  // Nothing else in the body: every op is the add, the mul or a widening.
  return llvm::all_of(body->without_terminator(), [&](Operation &inner) {
    return &inner == add || &inner == mul || isa<arith::ExtFOp>(inner);
  });
}

/// The runtime dtypes of a product BLAS can compute: f32 and f64 into
/// themselves, f16 and bf16 into themselves or f32 (semantics of
/// distRtGemm).
std::optional<std::pair<int32_t, int32_t>> gemmTypes(Type input,
                                                     Type output) {
  if (!isa<FloatType>(input) || !isa<FloatType>(output))
    return std::nullopt;
  std::optional<int32_t> in = getRuntimeDType(input);
  std::optional<int32_t> out = getRuntimeDType(output);
  if (!in || !out)
    return std::nullopt;
  bool half = input.isF16() || input.isBF16();
  if (input == output || (half && output.isF32()))
    return std::make_pair(*in, *out);
  return std::nullopt;
}

/// Rewrites `op` as a distRtGemm call, or leaves it (false) when it is not
/// a product the runtime's GEMM can compute.
bool lowerContraction(linalg::LinalgOp op, RuntimeCalls &calls) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !isMultiplyAdd(op))
    return false;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->k.empty())
    return false;
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  if (llvm::any_of(sizes, ShapedType::isDynamic))
    return false;
  auto typeOf = [](Value v) { return cast<MemRefType>(v.getType()); };
  OpOperand *aOperand = op.getDpsInputOperand(0);
  OpOperand *bOperand = op.getDpsInputOperand(1);
  OpOperand *cOperand = op.getDpsInitOperand(0);
  Type inputType = typeOf(aOperand->get()).getElementType();
  if (typeOf(bOperand->get()).getElementType() != inputType)
    return false;
  std::optional<std::pair<int32_t, int32_t>> dtypes =
      gemmTypes(inputType, typeOf(cOperand->get()).getElementType());
  if (!dtypes)
    return false;

  const unsigned numLoops = op.getNumLoops();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  std::optional<OperandLayout> a = layoutOf(*aOperand, maps[0], numLoops);
  std::optional<OperandLayout> b = layoutOf(*bOperand, maps[1], numLoops);
  std::optional<OperandLayout> c = layoutOf(*cOperand, maps[2], numLoops);
  if (!a || !b || !c)
    return false;
  // Each role collapsed in every operand that holds it, the same way.
  SmallVector<unsigned> batchOrder, mOrder, nOrder, kOrder;
  std::optional<Run> aBatch = collapse(*a, dims->batch, sizes, batchOrder);
  std::optional<Run> bBatch = collapse(*b, dims->batch, sizes, batchOrder);
  std::optional<Run> cBatch = collapse(*c, dims->batch, sizes, batchOrder);
  std::optional<Run> aM = collapse(*a, dims->m, sizes, mOrder);
  std::optional<Run> cM = collapse(*c, dims->m, sizes, mOrder);
  std::optional<Run> bN = collapse(*b, dims->n, sizes, nOrder);
  std::optional<Run> cN = collapse(*c, dims->n, sizes, nOrder);
  std::optional<Run> aK = collapse(*a, dims->k, sizes, kOrder);
  std::optional<Run> bK = collapse(*b, dims->k, sizes, kOrder);
  if (!aBatch || !bBatch || !cBatch || !aM || !cM || !bN || !cN || !aK || !bK)
    return false;
  int64_t batch = cBatch->size, m = cM->size, n = cN->size, k = aK->size;
  if (m == 0 || n == 0 || k == 0 || batch == 0)
    return false; // nothing to compute: leave the (empty) loops

  // C row-major as it is, or its transpose: C^T = op(B)^T op(A)^T.
  std::optional<MatrixView> cView = viewOf(m, n, cM->stride, cN->stride);
  if (!cView)
    return false;
  OperandLayout *left = &*a, *right = &*b;
  Run leftRows = *aM, leftInner = *aK, rightInner = *bK, rightCols = *bN;
  Run leftBatch = *aBatch, rightBatch = *bBatch;
  if (cView->trans) {
    std::swap(m, n);
    std::swap(left, right);
    leftRows = *bN;
    leftInner = *bK;
    rightInner = *aK;
    rightCols = *aM;
    std::swap(leftBatch, rightBatch);
  }
  std::optional<MatrixView> leftView =
      viewOf(m, k, leftRows.stride, leftInner.stride);
  std::optional<MatrixView> rightView =
      viewOf(k, n, rightInner.stride, rightCols.stride);
  if (!leftView || !rightView)
    return false;

  OpBuilder builder(op);
  Location loc = op.getLoc();
  auto i64 = [&](int64_t value) { return calls.i64(builder, loc, value); };
  auto i32 = [&](int32_t value) { return calls.i32(builder, loc, value); };
  Value args[] = {i32(leftView->trans),
                  i32(rightView->trans),
                  i64(m),
                  i64(n),
                  i64(k),
                  calls.elementPtr(builder, loc, left->memref),
                  i64(leftView->ld),
                  i64(batch > 1 ? leftBatch.stride : 0),
                  calls.elementPtr(builder, loc, right->memref),
                  i64(rightView->ld),
                  i64(batch > 1 ? rightBatch.stride : 0),
                  calls.elementPtr(builder, loc, c->memref),
                  i64(cView->ld),
                  i64(batch > 1 ? cBatch->stride : 0),
                  i64(batch),
                  i32(dtypes->first),
                  i32(dtypes->second),
                  calls.nullPtr(builder, loc)};
  calls.call(builder, loc, "distRtGemm", builder.getI32Type(), args);
  op->erase();
  return true;
}

struct ConvertContractionsToRuntimePass
    : public dist::impl::ConvertContractionsToRuntimeBase<
          ConvertContractionsToRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    RuntimeCalls calls(module);
    SmallVector<linalg::LinalgOp> candidates;
    module.walk([&](linalg::LinalgOp op) { candidates.push_back(op); });
    for (linalg::LinalgOp op : candidates)
      lowerContraction(op, calls);
  }
};

} // namespace
