//===- dist-plan-bench.cpp - Planner speed and plan quality ---------------===//
//
// Meshes of rank 1 to 6, 3-D tensors, random source/target layout pairs from
// a fixed seed (so every run plans the same cases). Two modes:
//
//   dist-plan-bench [google benchmark flags]
//       BM_Optimal/<mesh rank> and BM_Greedy/<mesh rank>: time per plan,
//       cycling through that rank's cases (uncached: each call plans).
//   dist-plan-bench --summary [--summary-json=FILE] [--cases=N]
//       Times every case on its own (median of 5 runs) and prints, per mesh
//       rank, the median and worst optimal plan time, the greedy time, and
//       how the optimal plans' cost compares with greedy's on the same
//       cases. The JSON form is for scripts (utils/bench.sh).
//       --dump-plans=FILE also writes every case (mesh rank, shape x element
//       bytes, source -> target) and its optimal plan (semantics §4 JSON after
//       a tab), one line per case, so that a planner change can be checked to
//       leave every plan byte-identical. --min-rank=R / --max-rank=R keep
//       the meshes of rank R and up / up to R (e.g. one rank, to profile).
//
//===----------------------------------------------------------------------===//

#include "dist/Planner/Planner.h"

#include "benchmark/benchmark.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace dist::planner;

namespace {

/// One mesh per rank: size-2 axes and one size-4 axis (a tensor-parallel
/// group), 8 to 128 devices.
Mesh meshOfRank(unsigned rank) {
  std::vector<MeshAxis> axes;
  for (unsigned a = 0; a < rank; ++a)
    axes.push_back({std::string(1, char('a' + a)),
                    a + 1 == rank ? (rank == 1 ? 8 : 4) : 2});
  return cantFail(Mesh::create(axes));
}

struct Case {
  std::vector<int64_t> shape;
  int64_t elementBytes;
  Layout from, to;
};

/// Each axis: replicated, splitting one of the 3 dims, or (sources: 1 in 6,
/// targets: 1 in 12) partial; random order inside dims. Shapes mix even and
/// uneven extents.
std::vector<Case> makeCases(const Mesh &mesh, unsigned count, uint64_t seed) {
  static const std::vector<std::vector<int64_t>> shapes = {
      {4096, 1024, 512}, {2048, 2048, 128}, {1000, 768, 3},
      {8192, 4096, 16},  {513, 1024, 1024}, {96, 96, 96}};
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  auto layout = [&](int partialOdds) {
    Layout l = Layout::replicated(3);
    for (unsigned a = 0; a < mesh.getNumAxes(); ++a) {
      int64_t choice = pick(0, 3 * partialOdds - 1);
      if (choice == 0)
        l.partialAxes.push_back(a);
      else if (choice % 3 == 0 || choice > 3 * partialOdds - 4)
        continue; // replicated
      else
        l.dimAxes[pick(0, 2)].push_back(a);
    }
    for (auto &axes : l.dimAxes)
      std::shuffle(axes.begin(), axes.end(), rng);
    l.partialKind = pick(0, 3) ? ReductionKind::Sum : ReductionKind::Max;
    return l;
  };
  std::vector<Case> cases;
  while (cases.size() < count) {
    Case c;
    c.shape = shapes[pick(0, shapes.size() - 1)];
    c.elementBytes = pick(0, 1) ? 2 : 4;
    c.from = layout(2);
    c.to = layout(4);
    if (c.from != c.to)
      cases.push_back(std::move(c));
  }
  return cases;
}

PlanRequest requestFor(const Mesh &mesh, const Case &c, Strategy strategy) {
  PlanRequest request(mesh, c.shape, c.elementBytes, c.from, c.to);
  request.strategy = strategy;
  return request;
}

unsigned gCases = 200;
unsigned gMaxRank = 6;
unsigned gMinRank = 1;
double gReportSlowUs = 0; // --report-slow=US: print cases slower than this
llvm::raw_ostream *gDumpPlans = nullptr; // --dump-plans=FILE

void runBenchmark(benchmark::State &state, Strategy strategy) {
  Mesh mesh = meshOfRank(state.range(0));
  std::vector<Case> cases = makeCases(mesh, gCases, 42 + state.range(0));
  size_t next = 0;
  for (auto _ : state) {
    llvm::Expected<Plan> plan =
        planReshard(requestFor(mesh, cases[next], strategy));
    if (!plan) {
      state.SkipWithError(llvm::toString(plan.takeError()).c_str());
      return;
    }
    benchmark::DoNotOptimize(plan->cost);
    next = (next + 1) % cases.size();
  }
  state.SetLabel(mesh.str());
}
void BM_Optimal(benchmark::State &state) {
  runBenchmark(state, Strategy::Optimal);
}
void BM_Greedy(benchmark::State &state) {
  runBenchmark(state, Strategy::Greedy);
}
BENCHMARK(BM_Optimal)->DenseRange(1, 6)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Greedy)->DenseRange(1, 6)->Unit(benchmark::kMicrosecond);

std::string fmt(double v, int digits = 1) {
  char buf[64];
  snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

struct RankSummary {
  unsigned rank;
  std::string mesh;
  size_t cases = 0;
  double optimalMedianUs = 0, optimalP90Us = 0, optimalWorstUs = 0;
  // The same over the cases with no partial axis in either layout.
  size_t plainCases = 0;
  double plainMedianUs = 0, plainWorstUs = 0;
  double greedyMedianUs = 0;
  double meanStates = 0;
  size_t greedyWorse = 0; // cases where greedy's plan costs more
  double meanRatio = 0;   // geometric mean of greedy / optimal cost
  double worstRatio = 0;  // max greedy / optimal
  double optimalTotalCost = 0, greedyTotalCost = 0;
};

double timeUs(const PlanRequest &request, Plan *out, SearchStats *stats) {
  double best[5];
  for (double &t : best) {
    auto start = std::chrono::steady_clock::now();
    llvm::Expected<Plan> plan = planReshard(request, stats);
    auto end = std::chrono::steady_clock::now();
    if (!plan) {
      llvm::errs() << "dist-plan-bench: " << llvm::toString(plan.takeError())
                   << "\n";
      std::exit(1);
    }
    *out = std::move(*plan);
    t = std::chrono::duration<double, std::micro>(end - start).count();
  }
  std::sort(best, best + 5);
  return best[2];
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  size_t i = std::min(v.size() - 1, size_t(q * (v.size() - 1) + 0.5));
  return v[i];
}

std::vector<RankSummary> summarise() {
  std::vector<RankSummary> result;
  for (unsigned rank = gMinRank; rank <= gMaxRank; ++rank) {
    Mesh mesh = meshOfRank(rank);
    std::vector<Case> cases = makeCases(mesh, gCases, 42 + rank);
    RankSummary s;
    s.rank = rank;
    s.mesh = mesh.str();
    s.cases = cases.size();
    std::vector<double> optimalUs, greedyUs, plainUs;
    double logRatio = 0;
    for (const Case &c : cases) {
      Plan optimal, greedy;
      SearchStats stats;
      optimalUs.push_back(
          timeUs(requestFor(mesh, c, Strategy::Optimal), &optimal, &stats));
      s.meanStates += double(stats.states) / 5 / cases.size();
      if (gDumpPlans)
        *gDumpPlans << rank << " " << c.shape[0] << "x" << c.shape[1] << "x"
                    << c.shape[2] << "x" << c.elementBytes << " "
                    << printLayout(mesh, c.from) << " -> "
                    << printLayout(mesh, c.to) << "\t"
                    << planToJSON(mesh, optimal) << "\n";
      if (!c.from.hasPartial() && !c.to.hasPartial())
        plainUs.push_back(optimalUs.back());
      if (gReportSlowUs > 0 && optimalUs.back() > gReportSlowUs)
        llvm::errs() << "slow: " << fmt(optimalUs.back()) << " us, "
                     << stats.states / 5 << " states, " << stats.expanded / 5
                     << " expanded, " << stats.generated / 5 << " edges, "
                     << mesh.str() << " " << c.shape[0] << "x" << c.shape[1]
                     << "x" << c.shape[2] << " from "
                     << printLayout(mesh, c.from) << " to "
                     << printLayout(mesh, c.to) << "\n";
      greedyUs.push_back(
          timeUs(requestFor(mesh, c, Strategy::Greedy), &greedy, &stats));
      double ratio = optimal.cost > 0 ? greedy.cost / optimal.cost : 1;
      s.greedyWorse += greedy.cost > optimal.cost * (1 + 1e-9);
      logRatio += std::log(ratio);
      s.worstRatio = std::max(s.worstRatio, ratio);
      s.optimalTotalCost += optimal.cost;
      s.greedyTotalCost += greedy.cost;
    }
    s.optimalMedianUs = percentile(optimalUs, 0.5);
    s.optimalP90Us = percentile(optimalUs, 0.9);
    s.optimalWorstUs = *std::max_element(optimalUs.begin(), optimalUs.end());
    s.greedyMedianUs = percentile(greedyUs, 0.5);
    s.plainCases = plainUs.size();
    if (!plainUs.empty()) {
      s.plainMedianUs = percentile(plainUs, 0.5);
      s.plainWorstUs = *std::max_element(plainUs.begin(), plainUs.end());
    }
    s.meanRatio = std::exp(logRatio / cases.size());
    result.push_back(s);
  }
  return result;
}

void printSummary(const std::vector<RankSummary> &rows) {
  llvm::outs() << "| mesh rank | mesh | cases | optimal median (us) | optimal "
                  "p90 (us) | optimal worst (us) | no partial: cases, median, "
                  "worst (us) | greedy median (us) | mean "
                  "states | greedy costlier | greedy/optimal cost (geomean) | "
                  "worst ratio | total cost optimal / greedy (ms) |\n"
               << "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const RankSummary &s : rows)
    llvm::outs() << "| " << s.rank << " | `" << s.mesh << "` | " << s.cases
                 << " | " << fmt(s.optimalMedianUs) << " | "
                 << fmt(s.optimalP90Us) << " | " << fmt(s.optimalWorstUs)
                 << " | " << s.plainCases << ", " << fmt(s.plainMedianUs)
                 << ", " << fmt(s.plainWorstUs) << " | "
                 << fmt(s.greedyMedianUs) << " | " << fmt(s.meanStates, 0)
                 << " | " << s.greedyWorse << " ("
                 << fmt(100.0 * s.greedyWorse / s.cases, 0) << "%) | "
                 << fmt(s.meanRatio, 3) << " | " << fmt(s.worstRatio, 2)
                 << " | " << fmt(s.optimalTotalCost * 1e3, 2) << " / "
                 << fmt(s.greedyTotalCost * 1e3, 2) << " |\n";
}

std::string summaryJSON(const std::vector<RankSummary> &rows) {
  std::string out =
      "{\"benchmark\": \"dist-plan-bench\", \"planner_version\": " +
      std::to_string(kPlannerVersion) +
      ", \"cases_per_rank\": " + std::to_string(gCases) + ", \"ranks\": [";
  for (size_t i = 0; i < rows.size(); ++i) {
    const RankSummary &s = rows[i];
    std::string mesh;
    for (char c : s.mesh)
      mesh += c == '"' ? std::string("\\\"") : std::string(1, c);
    out += (i ? ", " : "") + std::string("{\"mesh_rank\": ") +
           std::to_string(s.rank) + ", \"mesh\": \"" + mesh +
           "\", \"cases\": " + std::to_string(s.cases) +
           ", \"optimal_median_us\": " + formatDouble(s.optimalMedianUs) +
           ", \"optimal_p90_us\": " + formatDouble(s.optimalP90Us) +
           ", \"optimal_worst_us\": " + formatDouble(s.optimalWorstUs) +
           ", \"no_partial_cases\": " + std::to_string(s.plainCases) +
           ", \"no_partial_median_us\": " + formatDouble(s.plainMedianUs) +
           ", \"no_partial_worst_us\": " + formatDouble(s.plainWorstUs) +
           ", \"greedy_median_us\": " + formatDouble(s.greedyMedianUs) +
           ", \"mean_states\": " + formatDouble(s.meanStates) +
           ", \"greedy_costlier_cases\": " + std::to_string(s.greedyWorse) +
           ", \"greedy_over_optimal_geomean\": " + formatDouble(s.meanRatio) +
           ", \"greedy_over_optimal_worst\": " + formatDouble(s.worstRatio) +
           ", \"optimal_total_cost_s\": " + formatDouble(s.optimalTotalCost) +
           ", \"greedy_total_cost_s\": " + formatDouble(s.greedyTotalCost) +
           "}";
  }
  return out + "]}";
}

} // namespace

int main(int argc, char **argv) {
  bool summary = false;
  std::string jsonPath, dumpPath;
  std::vector<char *> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "--summary") {
      summary = true;
    } else if (arg.consume_front("--summary-json=")) {
      summary = true;
      jsonPath = arg.str();
    } else if (arg.consume_front("--dump-plans=")) {
      dumpPath = arg.str();
    } else if (arg.consume_front("--max-rank=")) {
      if (arg.getAsInteger(10, gMaxRank) || gMaxRank < 1 || gMaxRank > 6) {
        llvm::errs() << "dist-plan-bench: --max-rank: expected 1..6\n";
        return 2;
      }
    } else if (arg.consume_front("--min-rank=")) {
      if (arg.getAsInteger(10, gMinRank) || gMinRank < 1 || gMinRank > 6) {
        llvm::errs() << "dist-plan-bench: --min-rank: expected 1..6\n";
        return 2;
      }
    } else if (arg.consume_front("--report-slow=")) {
      if (arg.getAsDouble(gReportSlowUs)) {
        llvm::errs()
            << "dist-plan-bench: --report-slow: expected microseconds\n";
        return 2;
      }
    } else if (arg.consume_front("--cases=")) {
      if (arg.getAsInteger(10, gCases) || gCases == 0) {
        llvm::errs()
            << "dist-plan-bench: --cases: expected a positive integer\n";
        return 2;
      }
    } else {
      rest.push_back(argv[i]);
    }
  }
  if (gMinRank > gMaxRank) {
    llvm::errs() << "dist-plan-bench: --min-rank=" << gMinRank
                 << " is above --max-rank=" << gMaxRank << "\n";
    return 2;
  }
  if (summary) {
    std::optional<llvm::raw_fd_ostream> dump;
    if (!dumpPath.empty()) {
      std::error_code ec;
      dump.emplace(dumpPath, ec);
      if (ec) {
        llvm::errs() << "dist-plan-bench: --dump-plans: cannot write '"
                     << dumpPath << "': " << ec.message() << "\n";
        return 2;
      }
      gDumpPlans = &*dump;
    }
    std::vector<RankSummary> rows = summarise();
    printSummary(rows);
    if (!jsonPath.empty()) {
      std::error_code ec;
      llvm::raw_fd_ostream os(jsonPath, ec);
      if (ec) {
        llvm::errs() << "dist-plan-bench: --summary-json: cannot write '"
                     << jsonPath << "': " << ec.message() << "\n";
        return 2;
      }
      os << summaryJSON(rows) << "\n";
    }
    return 0;
  }
  int restArgc = rest.size();
  benchmark::Initialize(&restArgc, rest.data());
  if (benchmark::ReportUnrecognizedArguments(restArgc, rest.data()))
    return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
