//===- PartialAlgebra.cpp - when partial values may flow through an op ----===//

#include "PartialAlgebra.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dist;
using namespace dist::partition;
using planner::ReductionKind;

std::optional<ReductionKind> partition::combinerKind(Operation *op) {
  if (isa<arith::AddFOp, arith::AddIOp>(op))
    return ReductionKind::Sum;
  if (isa<arith::MulFOp, arith::MulIOp>(op))
    return ReductionKind::Prod;
  if (isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MaxSIOp, arith::MaxUIOp>(
          op))
    return ReductionKind::Max;
  if (isa<arith::MinimumFOp, arith::MinNumFOp, arith::MinSIOp, arith::MinUIOp>(
          op))
    return ReductionKind::Min;
  if (isa<arith::OrIOp>(op) && op->getResultTypes()[0].isInteger(1))
    return ReductionKind::Max;
  if (isa<arith::AndIOp>(op) && op->getResultTypes()[0].isInteger(1))
    return ReductionKind::Min;
  return std::nullopt;
}

namespace {
bool isMaxOp(Operation *op) {
  return isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MaxSIOp,
             arith::MaxUIOp>(op);
}
bool isMinOp(Operation *op) {
  return isa<arith::MinimumFOp, arith::MinNumFOp, arith::MinSIOp,
             arith::MinUIOp>(op);
}
/// Non-decreasing on the whole extended real line, -inf included: a device
/// whose piece of a max/min-partial value is an identity (-inf, +inf) must
/// not turn it into NaN. (log and sqrt are monotone but fail that.)
bool isMonotoneEverywhere(Operation *op) {
  return isa<math::ExpOp, math::Exp2Op, math::ExpM1Op, math::TanhOp,
             math::AtanOp, math::ErfOp, math::CbrtOp, arith::ExtFOp,
             arith::TruncFOp, arith::ExtSIOp>(op);
}
} // namespace

Flow partition::transferFlow(Operation *op, ReductionKind kind,
                             ArrayRef<Flow> operands) {
  if (llvm::is_contained(operands, Flow::Broken))
    return Flow::Broken;
  unsigned partial = llvm::count(operands, Flow::Partial);
  if (partial == 0)
    return Flow::Replicated;
  // `select c, a, b` picks per element, so it is exact when the condition is
  // the same on every device and both picks are partial.
  if (isa<arith::SelectOp>(op))
    return operands[0] == Flow::Replicated && operands[1] == Flow::Partial &&
                   operands[2] == Flow::Partial
               ? Flow::Partial
               : Flow::Broken;

  switch (kind) {
  case ReductionKind::Sum:
  case ReductionKind::Avg: {
    // Linear maps: sum_i f(x_i) = f(sum_i x_i).
    if (isa<arith::AddFOp, arith::AddIOp, arith::SubFOp, arith::SubIOp>(op)) {
      if (partial == 2)
        return Flow::Partial;
      // x + c is affine, not linear: the sum over p devices adds p * c. The
      // mean adds c once, so it stays exact for avg.
      return kind == ReductionKind::Avg ? Flow::Partial : Flow::Broken;
    }
    if (isa<arith::NegFOp>(op))
      return Flow::Partial;
    if (isa<arith::MulFOp, arith::MulIOp>(op))
      return partial == 1 ? Flow::Partial : Flow::Broken;
    if (isa<arith::DivFOp>(op))
      return operands[0] == Flow::Partial && operands[1] == Flow::Replicated
                 ? Flow::Partial
                 : Flow::Broken;
    // Rounding casts of floats are exact up to rounding; truncating an
    // integer is a ring homomorphism modulo 2^n.
    if (isa<arith::ExtFOp, arith::TruncFOp, arith::TruncIOp>(op))
      return Flow::Partial;
    return Flow::Broken;
  }
  case ReductionKind::Max:
  case ReductionKind::Min: {
    bool sameKind = kind == ReductionKind::Max ? isMaxOp(op) : isMinOp(op);
    bool otherKind = kind == ReductionKind::Max ? isMinOp(op) : isMaxOp(op);
    // max_i max(a_i, b_i) = max(max_i a_i, max_i b_i); and a monotone g in
    // one partial argument commutes: max_i g(a_i, c) = g(max_i a_i, c).
    if (sameKind)
      return Flow::Partial;
    if (otherKind)
      return partial == 1 ? Flow::Partial : Flow::Broken;
    if (isa<arith::AddFOp, arith::AddIOp>(op))
      return partial == 1 ? Flow::Partial : Flow::Broken;
    if (isa<arith::SubFOp, arith::SubIOp>(op))
      return operands[0] == Flow::Partial && operands[1] == Flow::Replicated
                 ? Flow::Partial
                 : Flow::Broken;
    if (isMonotoneEverywhere(op))
      return Flow::Partial;
    return Flow::Broken;
  }
  case ReductionKind::Prod:
    if (isa<arith::MulFOp, arith::MulIOp>(op))
      return partial == 2 ? Flow::Partial : Flow::Broken;
    return Flow::Broken;
  }
  return Flow::Broken;
}

bool partition::yieldsPartial(Block &body, ReductionKind kind,
                              ArrayRef<bool> argIsPartial) {
  llvm::DenseMap<Value, Flow> flows;
  for (auto [arg, partial] : llvm::zip(body.getArguments(), argIsPartial))
    flows[arg] = partial ? Flow::Partial : Flow::Replicated;
  auto flowOf = [&](Value value) {
    auto it = flows.find(value);
    // Values from outside the body (captured scalars) are the same on every
    // device.
    return it == flows.end() ? Flow::Replicated : it->second;
  };
  for (Operation &op : body) {
    if (auto yield = dyn_cast<linalg::YieldOp>(op))
      return llvm::all_of(yield.getOperands(), [&](Value value) {
        return flowOf(value) == Flow::Partial;
      });
    if (op.getNumRegions() != 0)
      return false;
    SmallVector<Flow> operands;
    for (Value operand : op.getOperands())
      operands.push_back(flowOf(operand));
    Flow flow = transferFlow(&op, kind, operands);
    for (Value result : op.getResults())
      flows[result] = flow;
  }
  return false;
}
