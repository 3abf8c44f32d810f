//===- PartialAlgebraTest.cpp - the partial algebra against a reference ---===//
//
// For every scalar op the partitioner knows, every partial kind and every
// assignment of partial/replicated to the operands, transferFlow's verdict
// is checked against the definition: when it says the result stays partial,
// reducing the op's per-device results must equal the op applied to the
// reduced operands, on random values over 3 devices (max/min pieces include
// the identity -inf/+inf a device with an empty block holds). Verdicts of
// "broken" that the docs promise (p + r for sum, log for max, ...) must
// have a counterexample, so the table is not just conservative.
//
//===----------------------------------------------------------------------===//

#include "PartialAlgebra.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace mlir;
using dist::partition::Flow;
using dist::partition::transferFlow;
using dist::planner::ReductionKind;

namespace {

struct ScalarOp {
  std::string name;
  unsigned arity;
  std::function<Operation *(OpBuilder &, Location, ValueRange)> build;
  std::function<double(const std::vector<double> &)> eval;
  /// Operand i may only hold values in the evaluator's domain (the
  /// condition of a select is 0/1, a divisor never 0).
  std::function<double(std::mt19937 &, unsigned)> sample;
};

double uniform(std::mt19937 &rng) {
  return std::uniform_real_distribution<double>(-3, 3)(rng);
}

std::vector<ScalarOp> scalarOps() {
  auto binary = [](auto tag) {
    using OpTy = decltype(tag);
    return [](OpBuilder &b, Location loc, ValueRange v) -> Operation * {
      return OpTy::create(b, loc, v[0], v[1]);
    };
  };
  auto unary = [](auto tag) {
    using OpTy = decltype(tag);
    return [](OpBuilder &b, Location loc, ValueRange v) -> Operation * {
      return OpTy::create(b, loc, v[0]);
    };
  };
  auto any = [](std::mt19937 &rng, unsigned) { return uniform(rng); };
  std::vector<ScalarOp> ops = {
      {"addf", 2, binary(arith::AddFOp()), [](auto &x) { return x[0] + x[1]; },
       any},
      {"subf", 2, binary(arith::SubFOp()), [](auto &x) { return x[0] - x[1]; },
       any},
      {"mulf", 2, binary(arith::MulFOp()), [](auto &x) { return x[0] * x[1]; },
       any},
      {"divf", 2, binary(arith::DivFOp()), [](auto &x) { return x[0] / x[1]; },
       [](std::mt19937 &rng, unsigned i) {
         double v = uniform(rng);
         return i == 1 ? (v >= 0 ? v + 0.5 : v - 0.5) : v;
       }},
      {"maximumf", 2, binary(arith::MaximumFOp()),
       [](auto &x) { return std::max(x[0], x[1]); }, any},
      {"minimumf", 2, binary(arith::MinimumFOp()),
       [](auto &x) { return std::min(x[0], x[1]); }, any},
      {"negf", 1, unary(arith::NegFOp()), [](auto &x) { return -x[0]; }, any},
      {"exp", 1, unary(math::ExpOp()), [](auto &x) { return std::exp(x[0]); },
       any},
      {"tanh", 1, unary(math::TanhOp()),
       [](auto &x) { return std::tanh(x[0]); }, any},
      {"erf", 1, unary(math::ErfOp()), [](auto &x) { return std::erf(x[0]); },
       any},
      {"log", 1, unary(math::LogOp()), [](auto &x) { return std::log(x[0]); },
       any},
      {"absf", 1, unary(math::AbsFOp()),
       [](auto &x) { return std::fabs(x[0]); }, any},
      {"select", 3,
       [](OpBuilder &b, Location loc, ValueRange v) -> Operation * {
         return arith::SelectOp::create(b, loc, v[0], v[1], v[2]);
       },
       [](auto &x) { return x[0] != 0 ? x[1] : x[2]; },
       [](std::mt19937 &rng, unsigned i) {
         return i == 0 ? double(rng() % 2) : uniform(rng);
       }},
  };
  return ops;
}

double reduce(ReductionKind kind, const std::vector<double> &pieces) {
  double r = pieces[0];
  for (size_t i = 1; i < pieces.size(); ++i) {
    switch (kind) {
    case ReductionKind::Sum:
    case ReductionKind::Avg:
      r += pieces[i];
      break;
    case ReductionKind::Prod:
      r *= pieces[i];
      break;
    case ReductionKind::Max:
      r = std::max(r, pieces[i]);
      break;
    case ReductionKind::Min:
      r = std::min(r, pieces[i]);
      break;
    }
  }
  return kind == ReductionKind::Avg ? r / pieces.size() : r;
}

bool close(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b))
    return a == b;
  return std::fabs(a - b) <= 1e-9 * std::max({1.0, std::fabs(a), std::fabs(b)});
}

/// Whether op(reduce(pieces)) == reduce(op(pieces)) held in every trial.
bool commutesOnRandomValues(const ScalarOp &op, ReductionKind kind,
                            const std::vector<bool> &partial, unsigned trials) {
  std::mt19937 rng(1234);
  constexpr unsigned devices = 3;
  for (unsigned t = 0; t < trials; ++t) {
    // Per operand: one value per device (replicated operands: equal).
    std::vector<std::vector<double>> pieces(op.arity);
    for (unsigned i = 0; i < op.arity; ++i) {
      double shared = op.sample(rng, i);
      for (unsigned d = 0; d < devices; ++d)
        pieces[i].push_back(partial[i] ? op.sample(rng, i) : shared);
      // An empty block's piece is the identity of max/min.
      if (partial[i] && t % 4 == 0 &&
          (kind == ReductionKind::Max || kind == ReductionKind::Min))
        pieces[i][t % devices] = kind == ReductionKind::Max
                                     ? -std::numeric_limits<double>::infinity()
                                     : std::numeric_limits<double>::infinity();
      // A select's condition must be a condition on every device.
      if (op.name == "select" && i == 0 && partial[i])
        return false;
    }
    std::vector<double> global(op.arity), perDevice(devices);
    for (unsigned i = 0; i < op.arity; ++i)
      global[i] = partial[i] ? reduce(kind, pieces[i]) : pieces[i][0];
    for (unsigned d = 0; d < devices; ++d) {
      std::vector<double> args(op.arity);
      for (unsigned i = 0; i < op.arity; ++i)
        args[i] = pieces[i][d];
      perDevice[d] = op.eval(args);
    }
    if (!close(reduce(kind, perDevice), op.eval(global)))
      return false;
  }
  return true;
}

class PartialAlgebraTest : public ::testing::Test {
protected:
  PartialAlgebraTest() {
    context.loadDialect<arith::ArithDialect, math::MathDialect>();
  }
  /// The op applied to fresh f64 (i1 for a select's condition) values.
  Operation *build(const ScalarOp &op) {
    OpBuilder b(&context);
    Location loc = b.getUnknownLoc();
    module = ModuleOp::create(loc);
    b.setInsertionPointToEnd(module->getBody());
    SmallVector<Value> operands;
    for (unsigned i = 0; i < op.arity; ++i) {
      Type type = op.name == "select" && i == 0 ? Type(b.getI1Type())
                                                : Type(b.getF64Type());
      TypedAttr value = type.isInteger(1) ? TypedAttr(b.getBoolAttr(true))
                                          : TypedAttr(b.getF64FloatAttr(1.0));
      operands.push_back(arith::ConstantOp::create(b, loc, value).getResult());
    }
    return op.build(b, loc, operands);
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

const ReductionKind kKinds[] = {ReductionKind::Sum, ReductionKind::Avg,
                                ReductionKind::Max, ReductionKind::Min,
                                ReductionKind::Prod};

TEST_F(PartialAlgebraTest, EveryPartialVerdictIsExact) {
  unsigned partialVerdicts = 0;
  for (const ScalarOp &op : scalarOps()) {
    Operation *built = build(op);
    for (ReductionKind kind : kKinds) {
      for (unsigned mask = 1; mask < (1u << op.arity); ++mask) {
        std::vector<bool> partial(op.arity);
        SmallVector<Flow> flows;
        for (unsigned i = 0; i < op.arity; ++i) {
          partial[i] = (mask >> i) & 1;
          flows.push_back(partial[i] ? Flow::Partial : Flow::Replicated);
        }
        if (transferFlow(built, kind, flows) != Flow::Partial)
          continue;
        ++partialVerdicts;
        EXPECT_TRUE(commutesOnRandomValues(op, kind, partial, 400))
            << op.name << " with operand mask " << mask << " under "
            << dist::planner::stringifyReductionKind(kind).str()
            << " was judged partial but does not commute with the reduction";
      }
    }
  }
  // The table is not empty: linear ops for sum, monotone ones for max/min.
  EXPECT_GE(partialVerdicts, 20u);
}

TEST_F(PartialAlgebraTest, DocumentedBrokenCasesHaveCounterexamples) {
  struct Case {
    std::string op;
    ReductionKind kind;
    std::vector<bool> partial;
  };
  const Case cases[] = {
      {"addf", ReductionKind::Sum, {true, false}},    // p + r adds n*r
      {"mulf", ReductionKind::Sum, {true, true}},     // p * p is quadratic
      {"exp", ReductionKind::Sum, {true}},            // non-linear
      {"log", ReductionKind::Max, {true}},            // NaN at -inf pieces
      {"negf", ReductionKind::Max, {true}},           // turns max into min
      {"minimumf", ReductionKind::Max, {true, true}}, // min of two maxima
      {"absf", ReductionKind::Max, {true}},           // not monotone
      {"subf", ReductionKind::Max, {false, true}},    // r - p is antitone
      {"addf", ReductionKind::Prod, {true, false}},
  };
  std::vector<ScalarOp> ops = scalarOps();
  for (const Case &c : cases) {
    const ScalarOp &op =
        *llvm::find_if(ops, [&](const ScalarOp &o) { return o.name == c.op; });
    Operation *built = build(op);
    SmallVector<Flow> flows;
    for (bool p : c.partial)
      flows.push_back(p ? Flow::Partial : Flow::Replicated);
    EXPECT_EQ(transferFlow(built, c.kind, flows), Flow::Broken) << c.op;
    EXPECT_FALSE(commutesOnRandomValues(op, c.kind, c.partial, 400))
        << c.op << ": documented as broken, but no counterexample found";
  }
}

TEST_F(PartialAlgebraTest, ReplicatedOperandsStayReplicated) {
  for (const ScalarOp &op : scalarOps()) {
    Operation *built = build(op);
    SmallVector<Flow> flows(op.arity, Flow::Replicated);
    for (ReductionKind kind : kKinds)
      EXPECT_EQ(transferFlow(built, kind, flows), Flow::Replicated) << op.name;
  }
}

} // namespace
