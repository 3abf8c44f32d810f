//===- PassOptionValues.h - the enum options of dist's passes ---*- C++ -*-===//
//
// Every pass option that picks one of a few words is an enum, and its words
// are spelled in one place: the planner's own (planner::stringifyStrategy,
// stringifyMoveSet) or the tables below. The passes (Passes.td), the
// pipelines (ReshardPlanningOptions) and dist-run's flags all take their
// values from here, so an unknown word is refused by the option parser with
// the list of valid ones, pointing into the pipeline text, before any pass
// runs.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_TRANSFORMS_PASSOPTIONVALUES_H
#define DIST_DIALECT_DIST_TRANSFORMS_PASSOPTIONVALUES_H

#include "dist/Planner/LayoutSolver.h"
#include "dist/Planner/Plan.h"
#include "dist/Planner/Planner.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

namespace dist {

/// How dist-partition chooses layouts (the MLIR-free layout solver's
/// choosers, dist/Planner/LayoutSolver.h).
using planner::layout::LayoutChooser;

/// The last step dist-partition runs (the pipeline is staged: every step can
/// be inspected on its own).
enum class PartitionStep { Normalize, Partition };

/// Where compiled programs keep their buffers and run local data movement:
/// host memory with host loops (the MPI backend), or device memory with the
/// runtime's kernels on a stream (NCCL; the MPI backend runs it too).
enum class RuntimeTarget { Cpu, Gpu };

/// How compiled programs compute their local matrix products: through the
/// runtime's batched GEMM (BLAS on the host, cuBLAS on a GPU), or as the
/// loops linalg lowers to (docs/compiler.md, "Contractions").
enum class ContractionLowering { Runtime, Loops };

/// How compiled programs compute the rest of their local compute (elementwise
/// ops, reductions, fills): fused, tiled and vectorized loop nests
/// (docs/compiler.md, "Local compute"), or the loops linalg lowers each op
/// to.
enum class ComputeLowering { Fused, Loops };

/// One word of an enum option.
template <typename Enum> struct EnumWord {
  Enum value;
  const char *word;
  const char *description;
};

inline constexpr EnumWord<PartitionStep> kPartitionStepWords[] = {
    {PartitionStep::Normalize, "normalize",
     "compute rewritten to linalg ops, constants to fills, no layout chosen"},
    {PartitionStep::Partition, "partition", "everything"}};

inline constexpr EnumWord<RuntimeTarget> kRuntimeTargetWords[] = {
    {RuntimeTarget::Cpu, "cpu", "host buffers, MPI"},
    {RuntimeTarget::Gpu, "gpu", "device buffers, NCCL, a stream"}};

inline constexpr EnumWord<ContractionLowering> kContractionLoweringWords[] = {
    {ContractionLowering::Runtime, "runtime",
     "the runtime's GEMM (BLAS on the host, cuBLAS on a GPU)"},
    {ContractionLowering::Loops, "loops", "the loops linalg lowers to"}};

inline constexpr EnumWord<ComputeLowering> kComputeLoweringWords[] = {
    {ComputeLowering::Fused, "fused",
     "fused, tiled and vectorized loop nests (dist-fuse-elementwise, "
     "dist-fuse-rows, dist-vectorize)"},
    {ComputeLowering::Loops, "loops", "the loops linalg lowers each op to"}};

/// An option modifier (like llvm::cl::values) that offers `words`.
template <typename Enum> class EnumOptionValues {
public:
  explicit EnumOptionValues(llvm::ArrayRef<EnumWord<Enum>> words)
      : words(words.begin(), words.end()) {}
  template <typename Opt> void apply(Opt &option) const {
    for (const EnumWord<Enum> &word : words)
      option.getParser().addLiteralOption(word.word, word.value,
                                          word.description);
  }

private:
  llvm::SmallVector<EnumWord<Enum>> words;
};

inline EnumOptionValues<planner::Strategy> strategyOptionValues() {
  using planner::Strategy;
  static const EnumWord<Strategy> words[] = {
      {Strategy::Optimal, planner::stringifyStrategy(Strategy::Optimal).data(),
       "the exact search (cheapest plan)"},
      {Strategy::Greedy, planner::stringifyStrategy(Strategy::Greedy).data(),
       "the greedy baseline"}};
  return EnumOptionValues<Strategy>(words);
}

inline EnumOptionValues<planner::MoveSet> moveSetOptionValues() {
  using planner::MoveSet;
  static const EnumWord<MoveSet> words[] = {
      {MoveSet::All, planner::stringifyMoveSet(MoveSet::All).data(),
       "every move"},
      {MoveSet::Collective,
       planner::stringifyMoveSet(MoveSet::Collective).data(),
       "no point-to-point redistribute within a mesh"}};
  return EnumOptionValues<MoveSet>(words);
}

inline EnumOptionValues<LayoutChooser> layoutChooserOptionValues() {
  static const llvm::SmallVector<EnumWord<LayoutChooser>> words = [] {
    llvm::SmallVector<EnumWord<LayoutChooser>> all;
    for (const planner::layout::LayoutChooserWord &word :
         planner::layout::layoutChooserWords())
      all.push_back({word.chooser, word.word, word.description});
    return all;
  }();
  return EnumOptionValues<LayoutChooser>(words);
}

inline EnumOptionValues<PartitionStep> partitionStepOptionValues() {
  return EnumOptionValues<PartitionStep>(kPartitionStepWords);
}

inline EnumOptionValues<RuntimeTarget> runtimeTargetOptionValues() {
  return EnumOptionValues<RuntimeTarget>(kRuntimeTargetWords);
}

inline EnumOptionValues<ComputeLowering> computeLoweringOptionValues() {
  return EnumOptionValues<ComputeLowering>(kComputeLoweringWords);
}

inline EnumOptionValues<ContractionLowering> contractionLoweringOptionValues() {
  return EnumOptionValues<ContractionLowering>(kContractionLoweringWords);
}

/// An option modifier that offers nothing (free-text options in tables of
/// options whose rows all name one, PlanningOptions.def).
struct NoOptionValues {
  template <typename Opt> void apply(Opt &) const {}
};
inline NoOptionValues noOptionValues() { return {}; }

/// Which passes' options a planning option goes to (PlanningOptions.def).
enum PlanningPasses : unsigned {
  kPlanningForPartition = 1,
  kPlanningForLowering = 2,
  kPlanningForBoth = 3,
};

/// The word of `value` in `words` (as the option takes it).
template <typename Enum>
llvm::StringRef stringifyEnumWord(llvm::ArrayRef<EnumWord<Enum>> words,
                                  Enum value) {
  for (const EnumWord<Enum> &word : words)
    if (word.value == value)
      return word.word;
  return "";
}
using planner::layout::stringifyLayoutChooser;
inline llvm::StringRef stringifyRuntimeTarget(RuntimeTarget value) {
  return stringifyEnumWord<RuntimeTarget>(kRuntimeTargetWords, value);
}

} // namespace dist

#endif // DIST_DIALECT_DIST_TRANSFORMS_PASSOPTIONVALUES_H
