//===- LoopRule.cpp - how a loop nest may be split, from its indexing maps ===//

#include "LoopRule.h"
#include "PartialAlgebra.h"
#include "dist/Support/MixedRadix.h"

#include "mlir/IR/AffineExpr.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <functional>

using namespace mlir;
using namespace dist;
using namespace dist::partition;

/// The combiner of result `r`: its yielded value must be `combine(acc, v)`
/// where `acc` is the result's own block argument, used nowhere else.
static std::optional<planner::ReductionKind> findCombiner(linalg::LinalgOp op,
                                                          unsigned result) {
  OpOperand *init = op.getDpsInitOperand(result);
  BlockArgument acc = op.getMatchingBlockArgument(init);
  auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
  Operation *combine = yield.getOperand(result).getDefiningOp();
  if (!combine || combine->getNumOperands() != 2 || !acc.hasOneUse() ||
      combine->getBlock() != op.getBlock() ||
      !llvm::is_contained(combine->getOperands(), Value(acc)))
    return std::nullopt;
  return combinerKind(combine);
}

static std::string printed(AffineExpr expr) {
  std::string text;
  llvm::raw_string_ostream os(text);
  expr.print(os);
  return text;
}

/// `loop floordiv G` or `loop mod M` with a constant G, M >= 1: the loop's
/// position and the constant.
static std::optional<std::pair<unsigned, int64_t>>
matchDivision(AffineExpr expr, AffineExprKind kind) {
  auto binary = dyn_cast<AffineBinaryOpExpr>(expr);
  if (!binary || binary.getKind() != kind)
    return std::nullopt;
  auto dim = dyn_cast<AffineDimExpr>(binary.getLHS());
  auto constant = dyn_cast<AffineConstantExpr>(binary.getRHS());
  if (!dim || !constant || constant.getValue() < 1)
    return std::nullopt;
  return std::make_pair(dim.getPosition(), constant.getValue());
}

static void markUnsplittable(LoopRule &rule, unsigned loop,
                             const llvm::Twine &why) {
  if (!rule.splittable[loop])
    return;
  rule.splittable[loop] = false;
  rule.whyNotSplit[loop] = why.str();
}

llvm::Expected<LoopRule> LoopRule::get(linalg::LinalgOp op) {
  auto fail = [](const llvm::Twine &why) {
    return llvm::createStringError(why);
  };
  if (!op.hasPureTensorSemantics())
    return fail("it works on buffers; dist-partition handles tensors");
  LoopRule rule;
  rule.op = op;
  rule.numLoops = op.getNumLoops();
  rule.numInputs = op.getNumDpsInputs();
  for (int64_t extent : op.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(extent))
      return fail("its iteration space is dynamic; dist-partition needs "
                  "static shapes");
    rule.loopExtents.push_back(extent);
  }
  for (utils::IteratorType type : op.getIteratorTypesArray())
    rule.isReduction.push_back(type == utils::IteratorType::reduction);
  rule.splittable.assign(rule.numLoops, true);
  rule.whyNotSplit.assign(rule.numLoops, "");
  rule.loopModuli.resize(rule.numLoops);

  for (OpOperand &operand : op->getOpOperands()) {
    auto tensor = dyn_cast<RankedTensorType>(operand.get().getType());
    rule.operandIsTensor.push_back(static_cast<bool>(tensor));
    SmallVector<int64_t> dimLoops, divisors, shape;
    if (tensor) {
      shape.assign(tensor.getShape().begin(), tensor.getShape().end());
      AffineMap map = op.getMatchingIndexingMap(&operand);
      for (auto [d, expr] : llvm::enumerate(map.getResults())) {
        divisors.push_back(1);
        if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
          dimLoops.push_back(dim.getPosition());
          continue;
        }
        dimLoops.push_back(-1);
        if (auto group = matchDivision(expr, AffineExprKind::FloorDiv)) {
          dimLoops.back() = group->first;
          divisors.back() = group->second;
          continue;
        }
        if (auto period = matchDivision(expr, AffineExprKind::Mod)) {
          rule.loopModuli[period->first].push_back(period->second);
          continue;
        }
        // A window (d0 + d1, 2 * d0, ...): a device's block of this operand
        // would need its neighbours' elements, so none of these loops may
        // be split.
        std::string why =
            llvm::formatv("operand #{0} indexes dim {1} by "
                          "`{2}`, which needs neighbouring "
                          "blocks",
                          operand.getOperandNumber(), d, printed(expr));
        expr.walk([&](AffineExpr sub) {
          if (auto dim = dyn_cast<AffineDimExpr>(sub))
            markUnsplittable(rule, dim.getPosition(), why);
        });
      }
    }
    rule.operandDimLoops.push_back(std::move(dimLoops));
    rule.operandDimDivisors.push_back(std::move(divisors));
    rule.operandShapes.push_back(std::move(shape));
  }

  std::optional<unsigned> uncombined;
  for (unsigned r = 0; r < op->getNumResults(); ++r) {
    rule.combiners.push_back(findCombiner(op, r));
    if (!rule.combiners.back() && !uncombined)
      uncombined = r;
  }
  if (uncombined) {
    // Partial results of a split reduction are merged with the combiner;
    // a result updated any other way (an argmax's index) has none.
    std::string why = llvm::formatv(
        "result #{0} is not updated by add, max, min or mul of its value so "
        "far (an index of the maximum, say), so partial results could not be "
        "merged",
        *uncombined);
    for (unsigned loop = 0; loop < rule.numLoops; ++loop)
      if (rule.isReduction[loop])
        markUnsplittable(rule, loop, why);
  }
  return rule;
}

LoopRule LoopRule::identity(ArrayRef<int64_t> shape) {
  LoopRule rule;
  rule.numLoops = shape.size();
  rule.numInputs = 1;
  rule.loopExtents.assign(shape.begin(), shape.end());
  rule.isReduction.assign(rule.numLoops, false);
  rule.splittable.assign(rule.numLoops, true);
  rule.whyNotSplit.assign(rule.numLoops, "");
  rule.loopModuli.resize(rule.numLoops);
  rule.operandIsTensor.push_back(true);
  rule.operandShapes.emplace_back(shape.begin(), shape.end());
  rule.operandDimLoops.emplace_back();
  rule.operandDimDivisors.emplace_back(rule.numLoops, 1);
  for (unsigned d = 0; d < rule.numLoops; ++d)
    rule.operandDimLoops.back().push_back(d);
  return rule;
}

/// Whether splitting `loop` into `parts` blocks of `block` keeps every
/// group `loop floordiv G` and period `loop mod M` whole on one device; if
/// not, why.
static std::optional<std::string>
cutsGroups(const LoopRule &rule, unsigned loop, int64_t parts, int64_t block) {
  for (unsigned o = 0; o < rule.operandDimLoops.size(); ++o)
    for (unsigned d = 0; d < rule.operandDimLoops[o].size(); ++d) {
      int64_t group = rule.operandDimDivisors[o][d];
      if (rule.operandDimLoops[o][d] != int64_t(loop) || group == 1)
        continue;
      int64_t dimBlock =
          dist::mixed_radix::blockSize(rule.operandShapes[o][d], parts);
      if (block % group != 0 || dimBlock != block / group)
        return llvm::formatv(
                   "loop d{0} is not split into {1} parts: operand #{2} "
                   "indexes dim {3} by `d{0} floordiv {4}`, and blocks of {5} "
                   "iterations are not whole groups of {4} matching that "
                   "dim's blocks of {6}",
                   loop, parts, o, d, group, block, dimBlock)
            .str();
    }
  for (int64_t period : rule.loopModuli[loop])
    if (block % period != 0)
      return llvm::formatv("loop d{0} is not split into {1} parts: `d{0} mod "
                           "{2}` needs blocks of whole periods, not {3} "
                           "iterations",
                           loop, parts, period, block)
          .str();
  return std::nullopt;
}

std::optional<PartitionStrategy>
partition::layoutsOf(const LoopRule &rule, const planner::Mesh &mesh,
                     const LoopStrategy &strategy,
                     std::set<std::string> *notes) {
  PartitionStrategy out;
  planner::AxisList reductionAxes;
  out.localWork = 1;
  auto segmentsOf = [&](int64_t loop) -> const std::vector<int64_t> * {
    if (loop < 0 || size_t(loop) >= strategy.loopSegments.size() ||
        strategy.loopSegments[loop].empty())
      return nullptr;
    return &strategy.loopSegments[loop];
  };
  for (unsigned loop = 0; loop < rule.numLoops; ++loop) {
    int64_t parts = 1;
    for (unsigned axis : strategy.loopAxes[loop]) {
      parts *= mesh.getAxisSize(axis);
      if (rule.isReduction[loop])
        reductionAxes.push_back(axis);
    }
    parts = std::max<int64_t>(parts, 1);
    int64_t block = dist::mixed_radix::blockSize(rule.loopExtents[loop], parts);
    if (const std::vector<int64_t> *segments = segmentsOf(loop)) {
      // Padding inside segments would sit between a device's indices of a
      // reduction, where the masking of padded blocks (dist-localize) does
      // not look; only evenly split segments may be reduced over. Groups
      // and periods are not followed across segments.
      if (!rule.loopModuli[loop].empty())
        return std::nullopt;
      for (unsigned o = 0; o < rule.operandDimLoops.size(); ++o)
        for (unsigned d = 0; d < rule.operandDimLoops[o].size(); ++d)
          if (rule.operandDimLoops[o][d] == int64_t(loop) &&
              rule.operandDimDivisors[o][d] != 1)
            return std::nullopt;
      block = 0;
      for (int64_t n : *segments) {
        if (rule.isReduction[loop] && n % parts != 0)
          return std::nullopt;
        block += dist::mixed_radix::blockSize(n, parts);
      }
    } else if (parts > 1) {
      if (std::optional<std::string> why =
              cutsGroups(rule, loop, parts, block)) {
        if (notes)
          notes->insert(*why);
        return std::nullopt;
      }
    }
    out.localWork *= static_cast<double>(block);
  }
  llvm::sort(reductionAxes);

  auto dimsOf = [&](unsigned operand) {
    planner::Layout layout;
    for (int64_t loop : rule.operandDimLoops[operand]) {
      layout.dimAxes.emplace_back();
      if (loop >= 0)
        layout.dimAxes.back().assign(strategy.loopAxes[loop].begin(),
                                     strategy.loopAxes[loop].end());
      if (const std::vector<int64_t> *segments = segmentsOf(loop)) {
        layout.segments.resize(rule.operandDimLoops[operand].size());
        layout.segments[layout.dimAxes.size() - 1] = *segments;
      }
    }
    layout.canonicalize();
    return layout;
  };

  unsigned numResults = rule.combiners.size();
  for (unsigned r = 0; r < numResults; ++r) {
    planner::Layout layout = dimsOf(rule.numInputs + r);
    if (!reductionAxes.empty()) {
      if (!rule.combiners[r])
        return std::nullopt;
      if (strategy.partial && strategy.partial->kind != *rule.combiners[r])
        return std::nullopt;
      layout.partialKind = *rule.combiners[r];
      layout.partialAxes = reductionAxes;
    } else if (strategy.partial) {
      layout.partialKind = strategy.partial->kind;
    }
    if (strategy.partial)
      layout.partialAxes.insert(layout.partialAxes.end(),
                                strategy.partial->axes.begin(),
                                strategy.partial->axes.end());
    layout.canonicalize();
    out.results.push_back(std::move(layout));
  }

  for (unsigned o = 0; o < rule.operandIsTensor.size(); ++o) {
    if (!rule.operandIsTensor[o]) {
      out.operands.emplace_back();
      continue;
    }
    if (o >= rule.numInputs && o - rule.numInputs < out.results.size()) {
      out.operands.push_back(out.results[o - rule.numInputs]);
      continue;
    }
    planner::Layout layout = dimsOf(o);
    if (strategy.partial && (strategy.partialInputs >> o) & 1) {
      layout.partialKind = strategy.partial->kind;
      layout.partialAxes = strategy.partial->axes;
    }
    out.operands.push_back(std::move(layout));
  }

  if (strategy.partial) {
    // The init arguments are partial too (they carry the result's layout).
    linalg::LinalgOp op = rule.op;
    if (!op)
      return std::nullopt;
    Block *body = op.getBlock();
    SmallVector<bool> argIsPartial;
    for (OpOperand &operand : rule.op->getOpOperands()) {
      unsigned o = operand.getOperandNumber();
      argIsPartial.push_back(o >= rule.numInputs ||
                             ((strategy.partialInputs >> o) & 1));
    }
    if (argIsPartial.size() != body->getNumArguments() ||
        !yieldsPartial(*body, strategy.partial->kind, argIsPartial))
      return std::nullopt;
  }
  return out;
}

std::vector<Assignment>
partition::enumerateAssignments(const LoopRule &rule, const planner::Mesh &mesh,
                                ArrayRef<unsigned> excluded, size_t limit) {
  SmallVector<unsigned> axes;
  for (unsigned axis = 0; axis < mesh.getNumAxes(); ++axis)
    if (mesh.getAxisSize(axis) > 1 && !llvm::is_contained(excluded, axis))
      axes.push_back(axis);
  SmallVector<unsigned> loops;
  for (unsigned loop = 0; loop < rule.numLoops; ++loop)
    if (rule.splittable[loop] && rule.loopExtents[loop] > 1)
      loops.push_back(loop);

  std::vector<Assignment> result;
  SmallVector<SmallVector<unsigned, 2>> current(rule.numLoops);
  SmallVector<int64_t> parts(rule.numLoops, 1);
  bool anyOrder = true;
  // Axis by axis (mesh order): leave it replicating, or insert it into a
  // loop's list at any position (only at the end once `anyOrder` is off).
  // Splitting a loop into more parts than it has iterations only creates
  // empty blocks, so such assignments are skipped.
  std::function<void(size_t)> visit = [&](size_t i) {
    if (result.size() >= limit)
      return;
    if (i == axes.size()) {
      result.push_back(current);
      return;
    }
    visit(i + 1);
    unsigned axis = axes[i];
    for (unsigned loop : loops) {
      int64_t p = parts[loop] * mesh.getAxisSize(axis);
      if (p > rule.loopExtents[loop])
        continue;
      size_t first = anyOrder ? 0 : current[loop].size();
      for (size_t pos = first; pos <= current[loop].size(); ++pos) {
        current[loop].insert(current[loop].begin() + pos, axis);
        parts[loop] = p;
        visit(i + 1);
        parts[loop] /= mesh.getAxisSize(axis);
        current[loop].erase(current[loop].begin() + pos);
      }
    }
  };
  visit(0);
  if (result.size() >= limit) {
    result.clear();
    anyOrder = false;
    visit(0);
  }
  return result;
}

/// The assignment under which operand `operand` reads `layout` as it is, if
/// there is one (each of its split dims indexed by a loop, no loop asked to
/// take two different axis lists, no excluded or unsplittable loop split).
static std::optional<Assignment>
assignmentReading(const LoopRule &rule, unsigned operand,
                  const planner::Layout &layout, ArrayRef<unsigned> excluded) {
  const SmallVector<int64_t> &dimLoops = rule.operandDimLoops[operand];
  if (dimLoops.size() != layout.dimAxes.size())
    return std::nullopt;
  Assignment assignment(rule.numLoops);
  for (auto [loop, axes] : llvm::zip(dimLoops, layout.dimAxes)) {
    if (axes.empty())
      continue;
    if (loop < 0 || !rule.splittable[loop] || !assignment[loop].empty())
      return std::nullopt;
    for (unsigned axis : axes)
      if (llvm::is_contained(excluded, axis))
        return std::nullopt;
    assignment[loop].assign(axes.begin(), axes.end());
  }
  return assignment;
}

/// Both assignments at once, if they use disjoint axes and loops.
static std::optional<Assignment> merge(const Assignment &a,
                                       const Assignment &b) {
  Assignment merged = a;
  for (unsigned loop = 0; loop < b.size(); ++loop) {
    if (b[loop].empty())
      continue;
    if (!merged[loop].empty() && merged[loop] != b[loop])
      return std::nullopt;
    for (unsigned other = 0; other < a.size(); ++other)
      if (other != loop)
        for (unsigned axis : b[loop])
          if (llvm::is_contained(a[other], axis))
            return std::nullopt;
    merged[loop] = b[loop];
  }
  return merged;
}

std::vector<Assignment>
partition::candidateAssignments(const LoopRule &rule, const planner::Mesh &mesh,
                                ArrayRef<unsigned> excluded,
                                ArrayRef<std::vector<planner::Layout>> offered,
                                size_t budget) {
  std::vector<Assignment> all =
      enumerateAssignments(rule, mesh, excluded, budget + 1);
  if (all.size() <= budget)
    return all;

  std::vector<Assignment> result;
  auto add = [&](const Assignment &assignment) {
    if (result.size() < budget && !llvm::is_contained(result, assignment))
      result.push_back(assignment);
  };
  std::vector<Assignment> seeds;
  for (unsigned operand = 0; operand < offered.size(); ++operand)
    for (const planner::Layout &layout : offered[operand])
      if (std::optional<Assignment> seed =
              assignmentReading(rule, operand, layout, excluded))
        if (!llvm::is_contained(seeds, *seed))
          seeds.push_back(std::move(*seed));
  for (const Assignment &seed : seeds)
    add(seed);
  for (size_t i = 0; i < seeds.size() && result.size() < budget; ++i)
    for (size_t j = i + 1; j < seeds.size(); ++j)
      if (std::optional<Assignment> both = merge(seeds[i], seeds[j]))
        add(*both);
  add(Assignment(rule.numLoops));
  for (const Assignment &assignment : all)
    add(assignment);
  return result;
}
