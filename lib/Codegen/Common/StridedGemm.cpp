//===- StridedGemm.cpp - the GEMM calls that compute a contraction --------===//
//
// include/dist/Codegen/StridedGemm.h says what is matched and why the match
// is exact. The steps: the body (out + a * b), the index expressions as
// linear forms over virtual loops (the digits of divided loops), each
// operand's stride along each virtual loop, the role each virtual loop
// plays, one strided run per role, and the three operands as BLAS
// matrices.
//
//===----------------------------------------------------------------------===//

#include "dist/Codegen/StridedGemm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <map>

using namespace mlir;
using namespace dist::codegen;

int64_t StridedGemm::calls() const {
  int64_t count = 1;
  for (const GemmOuterLoop &loop : outer)
    count *= loop.extent;
  return count;
}

//===----------------------------------------------------------------------===//
// The body
//===----------------------------------------------------------------------===//

/// Whether BLAS has a routine for `input` products accumulated in
/// `output`: f32 and f64 into themselves, f16 and bf16 into themselves or
/// f32 (the semantics of distRtGemm).
static bool hasGemmRoutine(Type input, Type output) {
  if (!isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(input))
    return false;
  bool half = isa<Float16Type, BFloat16Type>(input);
  return input == output || (half && output.isF32());
}

bool dist::codegen::isMultiplyAdd(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return false;
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
  return llvm::all_of(body->without_terminator(), [&](Operation &inner) {
    return &inner == add || &inner == mul || isa<arith::ExtFOp>(inner);
  });
}

bool dist::codegen::isGemmCandidate(linalg::LinalgOp op) {
  if (!isMultiplyAdd(op))
    return false;
  return hasGemmRoutine(getElementTypeOrSelf(op.getDpsInputs()[0].getType()),
                        getElementTypeOrSelf(op.getDpsInits()[0].getType()));
}

namespace {

//===----------------------------------------------------------------------===//
// Index expressions as linear forms
//===----------------------------------------------------------------------===//

/// What an index term reads of loop `loop`: the loop, `loop floordiv
/// divisor` or `loop mod divisor`.
enum class AtomKind { Loop, FloorDiv, Mod };
struct Atom {
  unsigned loop = 0;
  AtomKind kind = AtomKind::Loop;
  int64_t divisor = 1;
};

/// An operand dim's index: sum of coefficient * atom, plus a constant.
struct IndexForm {
  SmallVector<std::pair<Atom, int64_t>> terms;
  int64_t constant = 0;
};

/// Adds `scale * expr` to `form`; false for an expression of another shape.
bool addTerms(AffineExpr expr, int64_t scale, IndexForm &form) {
  if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
    form.terms.push_back({Atom{dim.getPosition(), AtomKind::Loop, 1}, scale});
    return true;
  }
  if (auto constant = dyn_cast<AffineConstantExpr>(expr)) {
    form.constant += scale * constant.getValue();
    return true;
  }
  auto binary = dyn_cast<AffineBinaryOpExpr>(expr);
  if (!binary)
    return false;
  AffineExpr lhs = binary.getLHS(), rhs = binary.getRHS();
  switch (binary.getKind()) {
  case AffineExprKind::Add:
    return addTerms(lhs, scale, form) && addTerms(rhs, scale, form);
  case AffineExprKind::Mul:
    if (auto c = dyn_cast<AffineConstantExpr>(rhs))
      return addTerms(lhs, scale * c.getValue(), form);
    if (auto c = dyn_cast<AffineConstantExpr>(lhs))
      return addTerms(rhs, scale * c.getValue(), form);
    return false;
  case AffineExprKind::FloorDiv:
  case AffineExprKind::Mod: {
    auto dim = dyn_cast<AffineDimExpr>(lhs);
    auto divisor = dyn_cast<AffineConstantExpr>(rhs);
    if (!dim || !divisor || divisor.getValue() < 1)
      return false;
    AtomKind kind = binary.getKind() == AffineExprKind::Mod
                        ? AtomKind::Mod
                        : AtomKind::FloorDiv;
    form.terms.push_back(
        {Atom{dim.getPosition(), kind, divisor.getValue()}, scale});
    return true;
  }
  default:
    return false;
  }
}

//===----------------------------------------------------------------------===//
// Virtual loops: the digits of each loop
//===----------------------------------------------------------------------===//

/// Loop `loop` = sum over its digits of digit * place; a digit runs over
/// [0, extent).
struct Digit {
  unsigned loop = 0;
  int64_t place = 1;
  int64_t extent = 1;
};

/// The digits of every loop: the places are 1 and every divisor below the
/// loop's extent, which must each divide the next and the extent (else the
/// groups are not whole and the loop has no mixed-radix form).
FailureOr<SmallVector<SmallVector<Digit>>>
digitsOf(ArrayRef<int64_t> extents, ArrayRef<SmallVector<IndexForm>> forms,
         std::string &whyNot) {
  SmallVector<SmallVector<int64_t>> places(extents.size(), {1});
  for (ArrayRef<IndexForm> operandForms : forms)
    for (const IndexForm &form : operandForms)
      for (auto [atom, coefficient] : form.terms)
        if (atom.kind != AtomKind::Loop && atom.divisor > 1 &&
            atom.divisor < extents[atom.loop])
          places[atom.loop].push_back(atom.divisor);
  SmallVector<SmallVector<Digit>> digits(extents.size());
  for (auto [loop, loopPlaces] : llvm::enumerate(places)) {
    llvm::sort(loopPlaces);
    loopPlaces.erase(llvm::unique(loopPlaces), loopPlaces.end());
    for (auto [i, place] : llvm::enumerate(loopPlaces)) {
      int64_t next =
          i + 1 < loopPlaces.size() ? loopPlaces[i + 1] : extents[loop];
      if (next % place != 0) {
        whyNot = "loop d" + std::to_string(loop) + " is divided by " +
                 std::to_string(place) + ", which does not divide " +
                 std::to_string(next) + ": the groups are not whole";
        return failure();
      }
      digits[loop].push_back(Digit{unsigned(loop), place, next / place});
    }
  }
  return digits;
}

/// The coefficient of each digit of the atom's loop in the atom's value.
SmallVector<int64_t> atomCoefficients(const Atom &atom, ArrayRef<Digit> digits,
                                      int64_t extent) {
  SmallVector<int64_t> coefficients(digits.size(), 0);
  bool whole = atom.kind == AtomKind::Loop || atom.divisor == 1 ||
               atom.divisor >= extent;
  if (whole && atom.kind != AtomKind::Loop) {
    // d floordiv 1 = d mod (>= extent) = d; d floordiv (>= extent) = 0,
    // d mod 1 = 0.
    bool isLoop = (atom.kind == AtomKind::FloorDiv) == (atom.divisor == 1);
    if (!isLoop)
      return coefficients;
  }
  for (auto [i, digit] : llvm::enumerate(digits)) {
    if (whole)
      coefficients[i] = digit.place;
    else if (atom.kind == AtomKind::FloorDiv && digit.place >= atom.divisor)
      coefficients[i] = digit.place / atom.divisor;
    else if (atom.kind == AtomKind::Mod && digit.place < atom.divisor)
      coefficients[i] = digit.place;
  }
  return coefficients;
}

//===----------------------------------------------------------------------===//
// Operands: strides along the virtual loops
//===----------------------------------------------------------------------===//

/// An operand's address as offset + sum_v stride[v] * v (elements).
struct Addressing {
  Value memref;
  int64_t offset = 0;
  SmallVector<int64_t> stride;
};

FailureOr<Addressing> addressingOf(Value memref, ArrayRef<IndexForm> forms,
                                   ArrayRef<SmallVector<Digit>> digits,
                                   ArrayRef<Digit> virtualLoops,
                                   ArrayRef<int64_t> extents,
                                   std::string &whyNot) {
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      llvm::any_of(strides, ShapedType::isDynamic)) {
    whyNot = "an operand has dynamic strides";
    return failure();
  }
  Addressing addressing{memref, 0, SmallVector<int64_t>(virtualLoops.size())};
  std::map<std::pair<unsigned, int64_t>, unsigned> position;
  for (auto [v, digit] : llvm::enumerate(virtualLoops))
    position[{digit.loop, digit.place}] = v;
  for (auto [dim, form] : llvm::enumerate(forms)) {
    addressing.offset += strides[dim] * form.constant;
    for (auto [atom, coefficient] : form.terms) {
      SmallVector<int64_t> perDigit =
          atomCoefficients(atom, digits[atom.loop], extents[atom.loop]);
      for (auto [digit, c] : llvm::zip(digits[atom.loop], perDigit)) {
        auto it = position.find({digit.loop, digit.place});
        if (it != position.end())
          addressing.stride[it->second] += strides[dim] * coefficient * c;
      }
    }
  }
  return addressing;
}

/// The memref a view was taken of, through any chain of views.
Value rootOf(Value memref) {
  while (auto view = memref.getDefiningOp<ViewLikeOpInterface>())
    memref = view.getViewSource();
  return memref;
}

/// Whether distinct virtual loops (of the given extents) give distinct
/// addresses: sorted by stride, each stride at least the span of the ones
/// below it. Loops of stride 0 are left out (the caller treats them).
bool isInjective(ArrayRef<int64_t> stride, ArrayRef<Digit> virtualLoops) {
  SmallVector<std::pair<int64_t, int64_t>> moving;
  for (auto [s, digit] : llvm::zip(stride, virtualLoops))
    if (s != 0)
      moving.push_back({s, digit.extent});
  llvm::sort(moving);
  int64_t span = 1;
  for (auto [s, extent] : moving) {
    if (s < span)
      return false;
    span = s * extent;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Roles and runs
//===----------------------------------------------------------------------===//

/// A role's loops collapsed into one: `size` elements, `stride` apart in
/// each operand that holds the role.
struct Run {
  int64_t size = 1;
  int64_t stride[3] = {0, 0, 0};
};

enum Operand { A = 0, B = 1, C = 2 };

/// The run that starts at `minor` in the loops `loops` of a role held by
/// `holders`: while some loop moves every holder by the span of the run so
/// far, it extends the run.
Run growRun(unsigned minor, ArrayRef<unsigned> loops, ArrayRef<Operand> holders,
            ArrayRef<Addressing> operands, ArrayRef<Digit> virtualLoops,
            SmallVector<unsigned> &members) {
  Run run;
  members.assign({minor});
  run.size = virtualLoops[minor].extent;
  for (Operand o : holders)
    run.stride[o] = operands[o].stride[minor];
  unsigned major = minor;
  for (bool grew = true; grew;) {
    grew = false;
    for (unsigned v : loops) {
      if (llvm::is_contained(members, v))
        continue;
      bool extends = llvm::all_of(holders, [&](Operand o) {
        return operands[o].stride[v] ==
               operands[o].stride[major] * virtualLoops[major].extent;
      });
      if (!extends)
        continue;
      members.push_back(v);
      run.size *= virtualLoops[v].extent;
      major = v;
      grew = true;
    }
  }
  return run;
}

/// Collapses the loops `loops` of one role, held by the operands `holders`,
/// into the longest strided run they form in every holder; the loops left
/// out go to `outer`, a loop around the call each.
Run collapseRole(ArrayRef<unsigned> loops, ArrayRef<Operand> holders,
                 ArrayRef<Addressing> operands, ArrayRef<Digit> virtualLoops,
                 SmallVector<unsigned> &outer) {
  Run best;
  SmallVector<unsigned> bestMembers, members;
  for (unsigned minor : loops) {
    Run run = growRun(minor, loops, holders, operands, virtualLoops, members);
    if (run.size > best.size || bestMembers.empty()) {
      best = run;
      bestMembers = members;
    }
  }
  for (unsigned v : loops)
    if (!llvm::is_contained(bestMembers, v))
      outer.push_back(v);
  return best;
}

/// A rows x cols matrix whose elements are rowStride and colStride apart,
/// as BLAS addresses it: row-major with leading dim `ld` (trans = false), or
/// the transpose of a row-major cols x rows matrix.
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

/// The preconditions on the op itself: two inputs and an output, buffers of
/// static shape, a multiply-add body, types BLAS computes.
LogicalResult checkOp(linalg::LinalgOp op, std::string &whyNot) {
  if (!isMultiplyAdd(op)) {
    whyNot = "the body is not `out + a * b`";
    return failure();
  }
  if (!op.hasPureBufferSemantics()) {
    whyNot = "its operands are not buffers";
    return failure();
  }
  auto elementType = [&](OpOperand *operand) {
    return cast<MemRefType>(operand->get().getType()).getElementType();
  };
  Type input = elementType(op.getDpsInputOperand(0));
  Type output = elementType(op.getDpsInitOperand(0));
  if (elementType(op.getDpsInputOperand(1)) != input ||
      !hasGemmRoutine(input, output)) {
    whyNot = "BLAS has no product of these element types";
    return failure();
  }
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  if (llvm::any_of(extents, ShapedType::isDynamic)) {
    whyNot = "a loop has a dynamic extent";
    return failure();
  }
  if (llvm::is_contained(extents, 0)) {
    whyNot = "there is nothing to compute";
    return failure();
  }
  Value out = rootOf(op.getDpsInitOperand(0)->get());
  if (out == rootOf(op.getDpsInputOperand(0)->get()) ||
      out == rootOf(op.getDpsInputOperand(1)->get())) {
    whyNot = "the output is a view of an input's buffer";
    return failure();
  }
  return success();
}

/// The virtual loops of `op` and every operand's addressing along them.
LogicalResult addressOperands(linalg::LinalgOp op,
                              SmallVector<Digit> &virtualLoops,
                              SmallVector<Addressing> &operands,
                              std::string &whyNot) {
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  // Per operand, each dim's index as a linear form.
  SmallVector<SmallVector<IndexForm>> forms(maps.size());
  for (auto [operand, map] : llvm::enumerate(maps)) {
    if (map.getNumSymbols() != 0) {
      whyNot = "an indexing map has symbols";
      return failure();
    }
    for (AffineExpr expr : map.getResults()) {
      IndexForm &form = forms[operand].emplace_back();
      if (!addTerms(expr, 1, form)) {
        whyNot = "an operand is indexed by an expression other than sums "
                 "of loops, `floordiv` and `mod` by constants";
        return failure();
      }
    }
  }
  FailureOr<SmallVector<SmallVector<Digit>>> digits =
      digitsOf(extents, forms, whyNot);
  if (failed(digits))
    return failure();
  // Digits of extent 1 take a single value: no loop at all.
  for (ArrayRef<Digit> loopDigits : *digits)
    for (const Digit &digit : loopDigits)
      if (digit.extent > 1)
        virtualLoops.push_back(digit);
  for (OpOperand &operand : op->getOpOperands()) {
    unsigned number = operand.getOperandNumber();
    FailureOr<Addressing> addressing = addressingOf(
        operand.get(), forms[number], *digits, virtualLoops, extents, whyNot);
    if (failed(addressing))
      return failure();
    operands.push_back(std::move(*addressing));
  }
  return success();
}

} // namespace

FailureOr<StridedGemm> dist::codegen::matchStridedGemm(linalg::LinalgOp op,
                                                       std::string &whyNot) {
  if (failed(checkOp(op, whyNot)))
    return failure();
  SmallVector<Digit> virtualLoops;
  SmallVector<Addressing> operands;
  if (failed(addressOperands(op, virtualLoops, operands, whyNot)))
    return failure();
  for (const Addressing &operand : operands)
    if (llvm::any_of(operand.stride, [](int64_t s) { return s < 0; })) {
      whyNot = "a loop runs backwards through an operand";
      return failure();
    }
  if (!isInjective(operands[C].stride, virtualLoops)) {
    whyNot = "distinct iterations write the same output element through "
             "different indices";
    return failure();
  }

  // Each virtual loop's role, by the operands that move along it.
  SmallVector<unsigned> batchLoops, mLoops, nLoops, kLoops, outer;
  for (unsigned v = 0; v < virtualLoops.size(); ++v) {
    bool inA = operands[A].stride[v] != 0, inB = operands[B].stride[v] != 0,
         inC = operands[C].stride[v] != 0;
    if (inA && inB && inC)
      batchLoops.push_back(v);
    else if (inA && !inB && inC)
      mLoops.push_back(v);
    else if (!inA && inB && inC)
      nLoops.push_back(v);
    else if (inA && inB && !inC)
      kLoops.push_back(v);
    else
      outer.push_back(v);
  }
  if (kLoops.empty()) {
    whyNot = "no loop is summed over both inputs";
    return failure();
  }
  Run batch =
      collapseRole(batchLoops, {C, A, B}, operands, virtualLoops, outer);
  Run m = collapseRole(mLoops, {C, A}, operands, virtualLoops, outer);
  Run n = collapseRole(nLoops, {C, B}, operands, virtualLoops, outer);
  Run k = collapseRole(kLoops, {A, B}, operands, virtualLoops, outer);

  // C row-major as it is, or its transpose: C^T = op(B)^T op(A)^T.
  std::optional<MatrixView> cView =
      viewOf(m.size, n.size, m.stride[C], n.stride[C]);
  if (!cView) {
    whyNot = "the output's rows and columns are not a BLAS matrix";
    return failure();
  }
  Operand left = A, right = B;
  Run rows = m, cols = n;
  if (cView->trans) {
    std::swap(left, right);
    std::swap(rows, cols);
  }
  std::optional<MatrixView> leftView =
      viewOf(rows.size, k.size, rows.stride[left], k.stride[left]);
  std::optional<MatrixView> rightView =
      viewOf(k.size, cols.size, k.stride[right], cols.stride[right]);
  if (!leftView || !rightView) {
    whyNot = "an input's rows and columns are not a BLAS matrix";
    return failure();
  }

  StridedGemm gemm;
  gemm.a = operands[left].memref;
  gemm.b = operands[right].memref;
  gemm.c = operands[C].memref;
  gemm.offsetA = operands[left].offset;
  gemm.offsetB = operands[right].offset;
  gemm.offsetC = operands[C].offset;
  gemm.transA = leftView->trans;
  gemm.transB = rightView->trans;
  gemm.m = rows.size;
  gemm.n = cols.size;
  gemm.k = k.size;
  gemm.lda = leftView->ld;
  gemm.ldb = rightView->ld;
  gemm.ldc = cView->ld;
  gemm.batch = batch.size;
  if (batch.size > 1) {
    gemm.strideA = batch.stride[left];
    gemm.strideB = batch.stride[right];
    gemm.strideC = batch.stride[C];
  }
  llvm::sort(outer, [&](unsigned x, unsigned y) {
    return operands[C].stride[x] > operands[C].stride[y];
  });
  for (unsigned v : outer)
    gemm.outer.push_back(
        GemmOuterLoop{virtualLoops[v].extent, operands[left].stride[v],
                      operands[right].stride[v], operands[C].stride[v]});
  auto elementType = [](Value memref) {
    return cast<MemRefType>(memref.getType()).getElementType();
  };
  gemm.inputType = elementType(gemm.a);
  gemm.outputType = elementType(gemm.c);
  return gemm;
}
