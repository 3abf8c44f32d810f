//===- dist-plan.cpp - the planner on the command line (§4) ---------------===//
//
//   dist-plan --mesh '<["x"=2, "y"=4]>' --shape 1024x1024xf32
//             --from '[{"x"}, {"y"}]' --to '[{"y"}, {"x"}]'
//             [--topology FILE | --alpha x=1e-5,y=1e-5 --beta x=..,y=..]
//             [--strategy optimal|greedy] [--moves all|collective]
//             [--to-mesh MESH] [--cache DIR]
//             [--max-peak-bytes N] [--format text|json]
//             [--replay PLAN.json]
//   dist-plan --layout-problem PROBLEM.json
//
// --replay prices a given plan under this topology instead of planning:
// --format json's output, or a plan given by its moves alone (a peer's, a
// person's: semantics §4); what a plan made for one machine costs on
// another (utils/bench/model_fidelity.py prices each plan under the
// defaults and under dist-calibrate's file).
//
// --layout-problem solves a layout problem given as JSON with the solver
// dist-partition uses (dist/Planner/LayoutProblemJSON.h; docs/
// partitioning.md, "The solver on its own") and prints the answer.
//
// Exit codes: 0 plan printed; 1 no plan (the reason is printed); 2 a bad
// argument (the message names it). Arguments are parsed by hand rather than
// with llvm::cl so that every failure maps to these codes and messages.
//
//===----------------------------------------------------------------------===//

#include "dist/Planner/LayoutProblemJSON.h"
#include "dist/Planner/PlanCache.h"
#include "dist/Planner/Planner.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <optional>
#include <string>

using namespace dist::planner;

namespace {

constexpr int kExitNoPlan = 1;
constexpr int kExitBadArgument = 2;

const char *const kUsage =
    "usage: dist-plan --mesh MESH --shape SHAPE --from LAYOUT --to LAYOUT\n"
    "                 [--topology FILE | --alpha AXIS=SECONDS,... "
    "--beta AXIS=SECONDS_PER_BYTE,...]\n"
    "                 [--strategy optimal|greedy] [--moves all|collective]\n"
    "                 [--to-mesh MESH] [--cache DIR]\n"
    "                 [--max-peak-bytes N] [--format text|json]\n"
    "                 [--replay PLAN.json]\n"
    "       dist-plan --layout-problem PROBLEM.json\n"
    "\n"
    "  --mesh     '<[\"x\"=2, \"y\"=4]>' (optionally with devices = [...])\n"
    "  --shape    global tensor type, e.g. 1024x1024xf32\n"
    "  --from/--to  sharding body, e.g. '[{\"x\"}, {}], partial = sum "
    "{\"y\"}'\n"
    "  --to-mesh  the target's mesh for a cross-mesh reshard (--to is on it)\n"
    "  --moves    collective: no point-to-point redistribute steps\n"
    "  --replay   price this plan (--format json output, or the moves "
    "alone) instead of planning\n"
    "  --layout-problem  choose a strategy per node of this problem "
    "(JSON) and print the choice\n"
    "  --topology JSON {\"axes\": {\"x\": {\"alpha\": 1e-5, \"beta\": "
    "2.7e-12}}, \"transfer\": {...}}\n"
    "Defaults: alpha = 1e-5 s and beta = 1/370e9 s/B on every axis; "
    "strategy optimal; format text.\n"
    "Exit codes: 0 plan printed, 1 no plan exists, 2 bad argument.\n";

[[noreturn]] void badArgument(const llvm::Twine &argument,
                              const llvm::Twine &message) {
  llvm::errs() << "dist-plan: " << argument << ": " << message << "\n";
  std::exit(kExitBadArgument);
}

struct Options {
  llvm::StringMap<std::string> values;
};

Options parseArguments(int argc, char **argv) {
  // The request's parts (PlanRequestKeys.def), then what only the tool
  // takes.
  static const char *const kKnown[] = {
#define DIST_PLAN_REQUEST_KEY(Flag, Key, Keyword) Flag,
#include "dist/Planner/PlanRequestKeys.def"
      "--format", "--replay", "--layout-problem"};
  Options options;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      llvm::outs() << kUsage;
      std::exit(0);
    }
    auto [name, inlineValue] = arg.split('=');
    bool known = false;
    for (const char *k : kKnown)
      known |= *k && name == k;
    if (!known) {
      llvm::errs() << "dist-plan: unknown argument '" << arg << "'\n" << kUsage;
      std::exit(kExitBadArgument);
    }
    std::string value;
    if (arg.contains('=')) {
      value = inlineValue.str();
    } else {
      if (i + 1 >= argc)
        badArgument(name, "missing value");
      value = argv[++i];
    }
    if (!options.values.try_emplace(name, value).second)
      badArgument(name, "given more than once");
  }
  return options;
}

std::optional<std::string> take(Options &options, llvm::StringRef name) {
  auto it = options.values.find(name);
  if (it == options.values.end())
    return std::nullopt;
  return it->second;
}

std::string required(Options &options, llvm::StringRef name) {
  std::optional<std::string> value = take(options, name);
  if (!value)
    badArgument(name, "is required (see --help)");
  return *value;
}

/// --layout-problem FILE: the answer on stdout (exit 0); no choice within
/// the problem's memory budget: exit 1; a bad problem: exit 2.
[[noreturn]] void solveLayoutProblem(Options &options) {
  std::string file = *take(options, "--layout-problem");
  if (options.values.size() != 1)
    badArgument("--layout-problem", "takes no other argument");
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(file);
  if (!buffer)
    badArgument("--layout-problem",
                "cannot read '" + file + "': " + buffer.getError().message());
  llvm::Expected<std::string> answer =
      dist::planner::layout::solveLayoutProblemJSON((*buffer)->getBuffer());
  if (answer) {
    llvm::outs() << *answer << "\n";
    std::exit(0);
  }
  dist::planner::layout::LayoutProblemFailure failure =
      dist::planner::layout::describeLayoutProblemError(answer.takeError());
  if (failure.noChoiceFits) {
    llvm::errs() << "dist-plan: " << file << ": " << failure.message << "\n";
    std::exit(kExitNoPlan);
  }
  badArgument("--layout-problem", file + ": " + failure.message);
}

} // namespace

int main(int argc, char **argv) {
  Options options = parseArguments(argc, argv);
  if (options.values.count("--layout-problem"))
    solveLayoutProblem(options);

  std::string meshText = required(options, "--mesh");
  llvm::Expected<Mesh> mesh = Mesh::parse(meshText);
  if (!mesh)
    badArgument("--mesh", llvm::toString(mesh.takeError()));
  // A mesh too large to plan on is a bad argument, not an unreachable target.
  auto checkPlannable = [](llvm::StringRef option, const Mesh &m) {
    if (m.getNumDevices() > kMaxPlannedDevices)
      badArgument(option, "mesh has " + std::to_string(m.getNumDevices()) +
                              " devices; the planner plans on meshes of at "
                              "most 2^24 (" +
                              std::to_string(kMaxPlannedDevices) + ")");
  };
  checkPlannable("--mesh", *mesh);

  llvm::Expected<TensorSpec> tensor =
      parseTensorSpec(required(options, "--shape"));
  if (!tensor)
    badArgument("--shape", llvm::toString(tensor.takeError()));

  std::optional<Mesh> targetMesh;
  if (std::optional<std::string> text = take(options, "--to-mesh")) {
    llvm::Expected<Mesh> parsed = Mesh::parse(*text);
    if (!parsed)
      badArgument("--to-mesh", llvm::toString(parsed.takeError()));
    checkPlannable("--to-mesh", *parsed);
    targetMesh = std::move(*parsed);
  }
  auto layoutArg = [&](llvm::StringRef name, const Mesh &on) {
    llvm::Expected<Layout> layout = parseLayout(on, required(options, name));
    if (!layout)
      badArgument(name, llvm::toString(layout.takeError()));
    if (llvm::Error e = verifyLayout(on, *layout, tensor->shape.size()))
      badArgument(name, llvm::toString(std::move(e)) + " (--shape " +
                            required(options, "--shape") + ")");
    if (llvm::Error e = verifyLayoutShape(*layout, tensor->shape))
      badArgument(name, llvm::toString(std::move(e)) + " (--shape " +
                            required(options, "--shape") + ")");
    return *layout;
  };
  Layout from = layoutArg("--from", *mesh);
  Layout to = layoutArg("--to", targetMesh ? *targetMesh : *mesh);

  Topology topology;
  std::optional<std::string> topologyFile = take(options, "--topology");
  std::optional<std::string> alpha = take(options, "--alpha");
  std::optional<std::string> beta = take(options, "--beta");
  if (topologyFile && (alpha || beta))
    badArgument("--topology", "cannot be combined with --alpha/--beta");
  if (topologyFile) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
        llvm::MemoryBuffer::getFile(*topologyFile);
    if (!buffer)
      badArgument("--topology", "cannot read '" + *topologyFile +
                                    "': " + buffer.getError().message());
    llvm::Expected<Topology> parsed =
        Topology::parseJSON((*buffer)->getBuffer());
    if (!parsed)
      badArgument("--topology",
                  *topologyFile + ": " + llvm::toString(parsed.takeError()));
    topology = std::move(*parsed);
  }
  if (alpha)
    if (llvm::Error e = topology.setFromList(*alpha, /*alpha=*/true))
      badArgument("--alpha", llvm::toString(std::move(e)));
  if (beta)
    if (llvm::Error e = topology.setFromList(*beta, /*alpha=*/false))
      badArgument("--beta", llvm::toString(std::move(e)));
  const char *topologyArg = topologyFile ? "--topology"
                            : alpha      ? "--alpha"
                                         : "--beta";
  // A cross-mesh topology names the axes of both meshes: each model takes
  // its own, and a name in neither is an error.
  for (const auto &[name, params] : topology.axes)
    if (targetMesh && !mesh->findAxis(name) && !targetMesh->findAxis(name))
      badArgument(topologyArg, "axis \"" + name + "\" is in neither mesh");
  llvm::Expected<AlphaBetaCostModel> model = AlphaBetaCostModel::create(
      *mesh, targetMesh ? topology.restrictedTo(*mesh) : topology);
  if (!model)
    badArgument(topologyArg, llvm::toString(model.takeError()));
  std::optional<AlphaBetaCostModel> targetModel;
  if (targetMesh)
    targetModel.emplace(cantFail(AlphaBetaCostModel::create(
        *targetMesh, topology.restrictedTo(*targetMesh))));
  if (topology.transfer && !targetMesh)
    badArgument("--topology", "a \"transfer\" link needs --to-mesh");
  MoveSet moves = MoveSet::All;
  if (std::optional<std::string> text = take(options, "--moves")) {
    std::optional<MoveSet> parsed = parseMoveSet(*text);
    if (!parsed)
      badArgument("--moves", "'" + *text + "' is not one of all, collective");
    moves = *parsed;
  }

  Strategy strategy = Strategy::Optimal;
  if (std::optional<std::string> text = take(options, "--strategy")) {
    std::optional<Strategy> parsed = parseStrategy(*text);
    if (!parsed)
      badArgument("--strategy",
                  "'" + *text + "' is not one of optimal, greedy");
    strategy = *parsed;
  }
  bool json = false;
  if (std::optional<std::string> text = take(options, "--format")) {
    if (*text != "text" && *text != "json")
      badArgument("--format", "'" + *text + "' is not one of text, json");
    json = *text == "json";
  }
  std::optional<int64_t> maxPeak;
  if (std::optional<std::string> text = take(options, "--max-peak-bytes")) {
    int64_t value;
    if (llvm::StringRef(*text).getAsInteger(10, value) || value < 0)
      badArgument("--max-peak-bytes",
                  "'" + *text + "' is not a non-negative integer");
    maxPeak = value;
  }
  // The same on-disk store as dist-lower-reshard's cache-dir: a plan made
  // by either is a hit for the other.
  std::optional<std::string> cacheDir = take(options, "--cache");
  if (cacheDir && cacheDir->empty())
    badArgument("--cache", "needs a directory");

  PlanRequest request(*mesh, tensor->shape, tensor->elementBytes, from, to);
  request.strategy = strategy;
  request.costModel = &*model;
  request.maxPeakBytes = maxPeak;
  request.moves = moves;
  if (targetMesh) {
    request.targetMesh = *targetMesh;
    request.targetCostModel = &*targetModel;
    request.transfer = topology.transfer;
  }
  std::optional<PlanCache> cache;
  if (cacheDir) {
    PlanCache::Options cacheOptions;
    cacheOptions.directory = *cacheDir;
    cache.emplace(std::move(cacheOptions), [](llvm::StringRef warning) {
      llvm::errs() << "dist-plan: warning: " << warning << "\n";
    });
  }
  std::optional<std::string> replayFile = take(options, "--replay");
  if (replayFile && cache)
    badArgument("--replay", "cannot be combined with --cache");
  const Mesh *toMesh = targetMesh ? &*targetMesh : nullptr;
  // The plan read back and replayed under this request's cost model; a
  // plan that does not take --from to --to has no price here.
  auto replay = [&](const std::string &file) -> llvm::Expected<Plan> {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
        llvm::MemoryBuffer::getFile(file);
    if (!buffer)
      badArgument("--replay",
                  "cannot read '" + file + "': " + buffer.getError().message());
    std::vector<std::optional<Layout>> stated;
    llvm::Expected<Plan> read = planMovesFromJSON(
        *mesh, (*buffer)->getBuffer(), toMesh, request.strategy, stated);
    if (!read)
      badArgument("--replay", file + ": " + llvm::toString(read.takeError()));
    if (llvm::Error e = replayPlan(request, *read))
      return std::move(e);
    // A layout the file states after a step must be the one it reaches.
    const Mesh *at = &*mesh;
    for (size_t i = 0; i < read->steps.size(); ++i) {
      const PlanStep &step = read->steps[i];
      if (step.move.crossMesh)
        at = toMesh;
      if (!stated[i])
        continue;
      Layout said = *stated[i];
      said.canonicalize();
      if (said != step.layout)
        return llvm::createStringError(
            "step " + std::to_string(i + 1) + ": the file says it reaches " +
            printLayout(*at, said) + ", but it reaches " +
            printLayout(*at, step.layout));
    }
    return read;
  };
  llvm::Expected<Plan> plan = replayFile ? replay(*replayFile)
                              : cache    ? cache->getOrPlan(request)
                                         : planReshard(request);
  if (!plan) {
    llvm::errs() << "dist-plan: no plan: " << llvm::toString(plan.takeError())
                 << "\n";
    return kExitNoPlan;
  }
  if (json)
    llvm::outs() << planToJSON(*mesh, *plan, toMesh) << "\n";
  else
    llvm::outs() << printPlanTable(*mesh, *plan, toMesh,
                                   replayFile ? "replayed" : "");
  return 0;
}
