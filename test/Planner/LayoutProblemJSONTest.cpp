//===- LayoutProblemJSONTest.cpp - the solver's JSON door -----------------===//
//
// A problem read from JSON is the problem built through the API (the same
// choice and cost on random problems), and every malformed problem is an
// error that names its fault, never a crash.
//
//===----------------------------------------------------------------------===//

#include "dist/Planner/LayoutProblemJSON.h"
#include "dist/Planner/LayoutSolver.h"

#include "llvm/Support/JSON.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

using namespace dist::planner::layout;
using ::testing::HasSubstr;

namespace {

std::string errorOf(llvm::StringRef problem) {
  llvm::Expected<std::string> answer = solveLayoutProblemJSON(problem);
  if (answer)
    return "<answer> " + *answer;
  return llvm::toString(answer.takeError());
}

llvm::json::Object answerOf(llvm::StringRef problem) {
  llvm::Expected<std::string> answer = solveLayoutProblemJSON(problem);
  EXPECT_TRUE(bool(answer))
      << (answer ? "" : llvm::toString(answer.takeError()));
  if (!answer)
    return {};
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(*answer);
  EXPECT_TRUE(bool(parsed));
  return *parsed->getAsObject();
}

TEST(LayoutProblemJSON, SolvesTheSmallestExample) {
  // Keep both on layout 1: compute 1 s, no move (layout 0 would compute 2 s;
  // switching costs 5 s).
  llvm::json::Object answer = answerOf(R"({
    "nodes": [{"work": [1, 1], "seconds": [0, 0]},
              {"work": [1, 1], "seconds": [2, 1]}],
    "edges": [{"from": 0, "to": 1, "table": [0, 5, 5, 0]}]})");
  EXPECT_EQ(llvm::json::Value(answer["choice"]),
            llvm::json::Value(llvm::json::Array{1, 1}));
  EXPECT_EQ(answer.getNumber("time"), 1.0);
  EXPECT_EQ(answer.getBoolean("optimal"), true);
}

TEST(LayoutProblemJSON, HonoursTheMemoryBudget) {
  // The cheap strategy holds 100 bytes; a budget of 60 forces the other.
  const char *problem = R"({
    "nodes": [{"work": [1, 1], "seconds": [1, 3], "bytes": [100, 50]}],
    "options": {"memory_budget": %s}})";
  auto with = [&](const char *budget) {
    std::string text = problem;
    text.replace(text.find("%s"), 2, budget);
    return text;
  };
  EXPECT_EQ(llvm::json::Value(answerOf(with("0"))["choice"]),
            llvm::json::Value(llvm::json::Array{0}));
  EXPECT_EQ(llvm::json::Value(answerOf(with("60"))["choice"]),
            llvm::json::Value(llvm::json::Array{1}));
  llvm::Expected<std::string> none = solveLayoutProblemJSON(with("10"));
  ASSERT_FALSE(bool(none));
  std::error_code code = llvm::errorToErrorCode(none.takeError());
  EXPECT_EQ(code, std::errc::result_out_of_range);
}

TEST(LayoutProblemJSON, NamesEveryFault) {
  EXPECT_THAT(errorOf("not json"), HasSubstr("not JSON"));
  EXPECT_THAT(errorOf("[]"), HasSubstr("must be a JSON object"));
  EXPECT_THAT(errorOf("{}"), HasSubstr("\"nodes\": must be a non-empty"));
  EXPECT_THAT(errorOf(R"({"nodes": [{"work": [1]}], "edge": []})"),
              HasSubstr("\"edge\": is not a known key"));
  EXPECT_THAT(errorOf(R"({"nodes": [{"work": []}]})"),
              HasSubstr("\"nodes[0].work\": must give every strategy"));
  EXPECT_THAT(errorOf(R"({"nodes": [{"work": [1, -1]}]})"),
              HasSubstr("\"nodes[0].work\": must hold numbers >= 0"));
  EXPECT_THAT(errorOf(R"({"nodes": [{"work": [1, 1], "seconds": [1]}]})"),
              HasSubstr("\"nodes[0].seconds\": must have one entry per "
                        "strategy (2)"));
  EXPECT_THAT(errorOf(R"({"nodes": [{"work": [1], "colour": 1}]})"),
              HasSubstr("\"nodes[0].colour\": is not a known key"));
  const char *two = R"({"nodes": [{"work": [1, 1]}, {"work": [1, 1]}],
                        "edges": [%s]})";
  auto edge = [&](const char *e) {
    std::string text = two;
    text.replace(text.find("%s"), 2, e);
    return errorOf(text);
  };
  EXPECT_THAT(edge(R"({"from": 1, "to": 0, "table": [0, 0, 0, 0]})"),
              HasSubstr("must go from a lower node to a higher one"));
  EXPECT_THAT(edge(R"({"from": 0, "to": 2, "table": [0]})"),
              HasSubstr("\"edges[0].to\": must be an integer from 0 to 1"));
  EXPECT_THAT(edge(R"({"from": 0, "to": 1, "table": [0, 0, 0]})"),
              HasSubstr("\"edges[0].table\": must hold 2 x 2 seconds"));
  EXPECT_THAT(edge(R"({"from": 0, "to": 1, "table": [0, 0, 0, 0],
                       "from_layout": [0]})"),
              HasSubstr("\"edges[0].from_layout\": must have one entry per "
                        "strategy of node 0 (2)"));
  EXPECT_THAT(edge(R"({"from": 0, "to": 1, "table": [0, "a", 0, 0]})"),
              HasSubstr("null: impossible"));
  EXPECT_THAT(edge(R"({"from": 0, "to": 1, "table": [null, null, null,
                       null]})"),
              HasSubstr("every choice of strategies has an impossible move"));
  EXPECT_THAT(errorOf(R"({"nodes": [{"work": [1]}],
                          "options": {"chooser": "best"}})"),
              HasSubstr("'best' is not one of optimal, greedy, keep-larger"));
  EXPECT_THAT(errorOf(R"({"nodes": [{"work": [1]}],
                          "options": {"time_limit": -1}})"),
              HasSubstr("\"options.time_limit\": must be a finite number"));
  // Nesting past the reader's limit: an error, not a stack overflow.
  EXPECT_THAT(errorOf(std::string(100000, '[')), HasSubstr("not JSON"));
}

// Random problems: the JSON door answers exactly what the API does.
TEST(LayoutProblemJSON, AgreesWithTheAPIOnRandomProblems) {
  std::mt19937 engine(48);
  auto below = [&](unsigned n) { return unsigned(engine() % n); };
  for (int round = 0; round < 200; ++round) {
    LayoutProblem direct;
    llvm::json::Array nodes, edges;
    unsigned n = 2 + below(6);
    std::vector<unsigned> strategies;
    for (unsigned i = 0; i < n; ++i) {
      NodeSpec spec;
      unsigned s = 1 + below(4);
      strategies.push_back(s);
      llvm::json::Array work, seconds, bytes;
      for (unsigned k = 0; k < s; ++k) {
        spec.work.push_back(below(8));
        spec.seconds.push_back(below(100) * 1e-3);
        spec.bytes.push_back(below(50));
        work.push_back(spec.work.back());
        seconds.push_back(spec.seconds.back());
        bytes.push_back(spec.bytes.back());
      }
      direct.addNode(spec);
      nodes.push_back(llvm::json::Object{{"work", std::move(work)},
                                         {"seconds", std::move(seconds)},
                                         {"bytes", std::move(bytes)}});
    }
    for (unsigned to = 1; to < n; ++to) {
      unsigned from = below(to);
      std::vector<double> table;
      llvm::json::Array entries;
      for (unsigned k = 0; k < strategies[from] * strategies[to]; ++k) {
        bool impossible = below(10) == 0;
        table.push_back(impossible ? std::numeric_limits<double>::infinity()
                                   : below(100) * 1e-3);
        entries.push_back(impossible ? llvm::json::Value(nullptr)
                                     : llvm::json::Value(table.back()));
      }
      std::vector<unsigned> fromLayout(strategies[from]),
          toLayout(strategies[to]);
      for (unsigned k = 0; k < fromLayout.size(); ++k)
        fromLayout[k] = k;
      for (unsigned k = 0; k < toLayout.size(); ++k)
        toLayout[k] = k;
      direct.addEdge(from, to, fromLayout, toLayout, strategies[to], table, 0);
      edges.push_back(llvm::json::Object{
          {"from", from}, {"to", to}, {"table", std::move(entries)}});
    }
    llvm::json::Object problem{{"nodes", std::move(nodes)},
                               {"edges", std::move(edges)}};
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::json::Value(std::move(problem));
    Solution expected = direct.solve(SolveOptions());
    llvm::Expected<std::string> answer = solveLayoutProblemJSON(text);
    if (expected.choice.empty() || std::isinf(expected.total.time)) {
      EXPECT_FALSE(bool(answer)) << text;
      if (!answer)
        llvm::consumeError(answer.takeError());
      continue;
    }
    ASSERT_TRUE(bool(answer)) << llvm::toString(answer.takeError()) << text;
    llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(*answer);
    ASSERT_TRUE(bool(parsed));
    const llvm::json::Object &got = *parsed->getAsObject();
    llvm::json::Array choice;
    for (unsigned s : expected.choice)
      choice.push_back(s);
    EXPECT_EQ(*got.get("choice"), llvm::json::Value(std::move(choice))) << text;
    EXPECT_DOUBLE_EQ(*got.getNumber("time"), expected.total.time) << text;
    EXPECT_EQ(*got.getBoolean("optimal"), expected.optimal);
  }
}

} // namespace
