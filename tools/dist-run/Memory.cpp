//===- Memory.cpp - what a job needs against what the machine has ---------===//

#include "Memory.h"

#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/PlannerInterop.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace dist;
using namespace dist::run;

static uint64_t sum(const std::vector<RankBuffer> &buffers) {
  uint64_t total = 0;
  for (const RankBuffer &buffer : buffers)
    total = llvm::SaturatingAdd(total, buffer.bytes);
  return total;
}

uint64_t RankMemory::argumentBytes() const { return sum(arguments); }
uint64_t RankMemory::resultBytes() const { return sum(results); }
uint64_t RankMemory::total() const {
  return llvm::SaturatingAdd(
      llvm::SaturatingAdd(argumentBytes(), resultBytes()),
      largestIntermediate ? largestIntermediate->bytes : 0);
}

const RankBuffer *RankMemory::largest() const {
  const RankBuffer *best = nullptr;
  auto consider = [&](const RankBuffer &buffer) {
    if (!best || buffer.bytes > best->bytes)
      best = &buffer;
  };
  llvm::for_each(arguments, consider);
  llvm::for_each(results, consider);
  if (largestIntermediate)
    consider(*largestIntermediate);
  return best;
}

static RankBuffer fromSignature(const TensorSignature &sig, std::string what) {
  std::vector<int64_t> shape = sig.localShape();
  return {std::move(what), sig.typeText, shape, uint64_t(sig.localBytes())};
}

static std::string printed(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}
/// "f.mlir:3:8" where the location has a file position, else MLIR's form.
static std::string printed(Location loc) {
  if (auto file = loc->findInstanceOf<FileLineColLoc>())
    return (file.getFilename().getValue() + ":" + llvm::Twine(file.getLine()) +
            ":" + llvm::Twine(file.getColumn()))
        .str();
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}

/// The local buffer one rank holds of a value of `type`: its layout's block
/// for a sharded tensor, the whole tensor for an unsharded one (every rank
/// holds it). nullopt for what has no static size in bytes.
static std::optional<RankBuffer> localBuffer(Type type, Operation *user,
                                             SymbolTableCollection &symbols) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() ||
      !tensor.getElementType().isIntOrFloat())
    return std::nullopt;
  uint64_t elementBytes =
      (tensor.getElementType().getIntOrFloatBitWidth() + 7) / 8;
  std::vector<int64_t> shape(tensor.getShape().begin(),
                             tensor.getShape().end());
  if (auto sharding = dyn_cast_or_null<ShardingAttr>(tensor.getEncoding())) {
    // The module verified: the mesh and its axes exist.
    auto mesh = symbols.lookupNearestSymbolFrom<MeshOp>(
        user, sharding.getMesh().getAttr());
    if (!mesh)
      return std::nullopt;
    auto quiet = [&] { return user->emitError(); };
    FailureOr<planner::Mesh> plannerMesh = getPlannerMesh(mesh, quiet);
    FailureOr<planner::Layout> layout = getPlannerLayout(sharding, mesh, quiet);
    if (failed(plannerMesh) || failed(layout))
      return std::nullopt;
    shape = planner::localShape(*plannerMesh, *layout, shape);
  }
  uint64_t bytes = elementBytes;
  for (int64_t extent : shape)
    bytes = llvm::SaturatingMultiply(bytes, uint64_t(extent));
  return RankBuffer{"", printed(type), std::move(shape), bytes};
}

RankMemory dist::run::rankMemory(const EntrySignature &signature,
                                 ModuleOp planned) {
  RankMemory need;
  for (auto [k, sig] : llvm::enumerate(signature.arguments))
    need.arguments.push_back(fromSignature(
        sig, "argument #" + std::to_string(k) + " of @" + signature.name));
  for (auto [k, sig] : llvm::enumerate(signature.results))
    need.results.push_back(fromSignature(sig, "result #" + std::to_string(k) +
                                                  " of @" + signature.name));

  if (!planned)
    return need;
  // The entry's results live in the caller's buffers (counted above); a
  // function's arguments are its caller's values.
  llvm::DenseSet<Value> returned;
  if (auto entry = planned.lookupSymbol<func::FuncOp>(signature.name))
    entry.walk([&](func::ReturnOp ret) {
      returned.insert(ret.getOperands().begin(), ret.getOperands().end());
    });
  SymbolTableCollection symbols;
  auto consider = [&](Value value, Operation *user, llvm::StringRef what) {
    if (returned.contains(value))
      return;
    std::optional<RankBuffer> buffer =
        localBuffer(value.getType(), user, symbols);
    if (!buffer || (need.largestIntermediate &&
                    buffer->bytes <= need.largestIntermediate->bytes))
      return;
    buffer->what = what.str();
    need.largestIntermediate = std::move(*buffer);
  };
  for (auto func : planned.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    func.walk([&](Operation *op) {
      for (OpResult result : op->getResults())
        consider(result, op,
                 "result #" + std::to_string(result.getResultNumber()) +
                     " of '" + op->getName().getStringRef().str() + "' at " +
                     printed(op->getLoc()));
      for (Region &region : op->getRegions())
        for (Block &block : region)
          if (op != func.getOperation() || !block.isEntryBlock())
            for (BlockArgument arg : block.getArguments())
              consider(arg, op,
                       "block argument #" + std::to_string(arg.getArgNumber()) +
                           " at " + printed(arg.getLoc()));
    });
  }
  return need;
}

std::string dist::run::formatBytes(uint64_t bytes) {
  static const char *units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  std::string text = std::to_string(bytes) + " bytes";
  if (bytes < 1024)
    return text;
  double value = double(bytes);
  int unit = -1;
  while (value >= 1024 && unit + 1 < 6) {
    value /= 1024;
    ++unit;
  }
  return text + " (" + llvm::formatv("{0:f2}", value).str() + " " +
         units[unit] + ")";
}

llvm::Error dist::run::checkJobMemory(const RankMemory &need, int64_t ranks,
                                      uint64_t limit,
                                      llvm::StringRef limitSource) {
  uint64_t perRank = need.total();
  uint64_t job = llvm::SaturatingMultiply(perRank, uint64_t(ranks));
  if (job <= limit)
    return llvm::Error::success();
  const RankBuffer *largest = need.largest();
  std::string shape;
  for (int64_t extent : largest->localShape)
    shape += (shape.empty() ? "" : "x") + std::to_string(extent);
  std::string message;
  llvm::raw_string_ostream os(message);
  os << "the job cannot fit in memory: " << ranks << " rank"
     << (ranks == 1 ? " needs" : "s need") << " at least " << formatBytes(job)
     << ", more than the " << formatBytes(limit) << " " << limitSource
     << "; each rank needs " << formatBytes(perRank) << " (arguments "
     << formatBytes(need.argumentBytes()) << ", results "
     << formatBytes(need.resultBytes()) << ", largest other tensor "
     << formatBytes(need.largestIntermediate ? need.largestIntermediate->bytes
                                             : 0)
     << "), the largest buffer being " << largest->what << " (" << largest->type
     << "): " << formatBytes(largest->bytes) << " on every rank (local shape "
     << (shape.empty() ? "scalar" : shape) << ")";
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}
