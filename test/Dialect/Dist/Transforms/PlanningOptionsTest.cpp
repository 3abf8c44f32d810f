//===- PlanningOptionsTest.cpp - Passes.td agrees with the table ----------===//
//
// The planning options are declared once (PlanningOptions.def) for the
// pipelines and dist-run; TableGen needs the passes' own written out in
// Passes.td. Each pass must take every row forwarded to it, under the same
// flag and with the same default as the pipelines.
//
//===----------------------------------------------------------------------===//

#include "dist/Dialect/Dist/Transforms/Passes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

using namespace dist;

namespace {

/// "name{a=1 b=x}" -> {a: 1, b: x} (values here hold no spaces or braces).
std::map<std::string, std::string> optionsOf(const std::string &text) {
  std::map<std::string, std::string> options;
  size_t open = text.find('{'), close = text.rfind('}');
  if (open == std::string::npos || close == std::string::npos)
    return options;
  std::string body = text.substr(open + 1, close - open - 1);
  size_t at = 0;
  while (at < body.size()) {
    size_t end = body.find(' ', at);
    if (end == std::string::npos)
      end = body.size();
    std::string item = body.substr(at, end - at);
    size_t eq = item.find('=');
    if (eq != std::string::npos)
      options[item.substr(0, eq)] = item.substr(eq + 1);
    at = end + 1;
  }
  return options;
}

std::string textOf(mlir::Pass &pass) {
  std::string text;
  llvm::raw_string_ostream os(text);
  pass.printAsTextualPipeline(os);
  return text;
}

struct Row {
  const char *flag;
  unsigned passes;
};

const Row kRows[] = {
#define DIST_PLANNING_OPTION(Member, Flag, Type, Default, Values, Passes,      \
                             Description)                                      \
  {Flag, Passes},
#define DIST_PLANNING_LIST_OPTION(Member, Flag, Description)                   \
  {Flag, kPlanningForBoth},
#include "dist/Dialect/Dist/Transforms/PlanningOptions.def"
};

TEST(PlanningOptions, PassesTakeEveryRowWithThePipelinesDefault) {
  ReshardPipelineOptions pipeline;
  std::string pipelineText;
  llvm::raw_string_ostream os(pipelineText);
  pipeline.print(os);
  std::map<std::string, std::string> defaults = optionsOf(pipelineText);
  std::map<std::string, std::string> partition =
      optionsOf(textOf(*createDistPartition()));
  std::map<std::string, std::string> lowering =
      optionsOf(textOf(*createDistLowerReshard()));
  // (An empty list option is not printed: absent everywhere then.)
  auto valueIn = [](std::map<std::string, std::string> &options,
                    const char *flag) {
    return options.count(flag) ? options[flag] : std::string("<absent>");
  };
  for (const Row &row : kRows) {
    SCOPED_TRACE(row.flag);
    if (row.passes & kPlanningForPartition) {
      EXPECT_EQ(valueIn(partition, row.flag), valueIn(defaults, row.flag));
    }
    if (row.passes & kPlanningForLowering) {
      EXPECT_EQ(valueIn(lowering, row.flag), valueIn(defaults, row.flag));
    }
  }
  // Every option the pipeline prints is a row.
  for (const auto &[flag, value] : defaults)
    EXPECT_TRUE(llvm::any_of(kRows, [&](const Row &row) {
      return flag == row.flag;
    })) << flag;
}

// A value set on the pipeline reaches the pass it is forwarded to.
TEST(PlanningOptions, PipelineValuesReachThePasses) {
  ReshardPipelineOptions pipeline;
  ASSERT_TRUE(mlir::succeeded(pipeline.parseFromString(
      "strategy=greedy moves=collective cache-dir=/tmp/p max-peak-bytes=64 "
      "chooser=per-op alpha=x=1e-5 topology=t.json")));
  DistPartitionOptions partition = pipeline.toPartitionOptions();
  DistLowerReshardOptions lowering = pipeline.toLowerReshardOptions();
  EXPECT_EQ(partition.strategy, planner::Strategy::Greedy);
  EXPECT_EQ(lowering.strategy, planner::Strategy::Greedy);
  EXPECT_EQ(partition.moves, planner::MoveSet::Collective);
  EXPECT_EQ(lowering.cacheDir, "/tmp/p");
  EXPECT_EQ(partition.topology, "t.json");
  EXPECT_EQ(partition.chooser, LayoutChooser::Greedy);
  EXPECT_EQ(lowering.maxPeakBytes, 64);
  ASSERT_EQ(partition.alpha.size(), 1u);
  EXPECT_EQ(partition.alpha[0], "x=1e-5");
}

} // namespace
