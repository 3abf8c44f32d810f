//===- Program.cpp - load, lower, JIT and call a dist program -------------===//

#include "Program.h"
#include "common/OutputFile.h"

#include "dist/Conversion/Pipelines.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/PlannerInterop.h"
#include "dist/InitAllDist.h"
#include "dist/Runtime/DistRuntime.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace dist::run {

std::vector<int64_t> TensorSignature::localShape() const {
  return planner::localShape(mesh, layout, globalShape);
}

int64_t TensorSignature::localElements() const {
  int64_t n = 1;
  for (int64_t extent : localShape())
    n *= extent;
  return n;
}

std::vector<std::pair<std::string, planner::Mesh>>
EntrySignature::meshes() const {
  std::vector<std::pair<std::string, planner::Mesh>> out;
  auto add = [&](const TensorSignature &sig) {
    for (const auto &[name, mesh] : out)
      if (name == sig.meshName)
        return;
    out.emplace_back(sig.meshName, sig.mesh);
  };
  llvm::for_each(arguments, add);
  llvm::for_each(results, add);
  return out;
}

void registerDistRunDialects(DialectRegistry &registry) {
  // What the pipeline needs (dialects and bufferization models), from the
  // one place that knows, plus the translations of the lowered module.
  registerAllDistDialects(registry);
  // buffer-results-to-out-params (hoist-static-allocs) writes a result
  // straight into the caller's buffer only when memref.alloc implements
  // AllocationOpInterface; without this model every result is computed into
  // a temporary and copied, doubling the memory traffic of each reshard.
  // Registering it twice is harmless.
  memref::registerAllocationOpInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}

OwningOpRef<ModuleOp> parseProgram(llvm::StringRef path, MLIRContext &context) {
  llvm::SourceMgr sourceMgr;
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(path, &error);
  if (!file) {
    llvm::errs() << "dist-run: cannot read '" << path << "': " << error << "\n";
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  return parseSourceFile<ModuleOp>(sourceMgr, &context);
}

OwningOpRef<ModuleOp> parseProgramText(llvm::StringRef text,
                                       MLIRContext &context) {
  return parseSourceString<ModuleOp>(text, &context);
}

std::vector<std::string> publicFunctions(ModuleOp module) {
  std::vector<std::string> names;
  for (auto func : module.getOps<func::FuncOp>())
    if (func.isPublic() && !func.isExternal())
      names.push_back(func.getSymName().str());
  return names;
}

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static std::string typeToString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

static std::optional<ElementKind> getElementKind(Type type) {
  if (type.isF16())
    return ElementKind::F16;
  if (type.isBF16())
    return ElementKind::BF16;
  if (type.isF32())
    return ElementKind::F32;
  if (type.isF64())
    return ElementKind::F64;
  auto intType = dyn_cast<IntegerType>(type);
  // The runtime reduces integers as signed values, so unsigned types would
  // get max/min wrong: only signless and signed integers are accepted.
  if (!intType || intType.isUnsigned())
    return std::nullopt;
  switch (intType.getWidth()) {
  case 1:
    return ElementKind::I1;
  case 8:
    return ElementKind::I8;
  case 16:
    return ElementKind::I16;
  case 32:
    return ElementKind::I32;
  case 64:
    return ElementKind::I64;
  default:
    return std::nullopt;
  }
}

static llvm::Expected<TensorSignature>
describe(func::FuncOp entry, llvm::StringRef what, unsigned index, Type type,
         SymbolTableCollection &symbols) {
  std::string where =
      (what + " #" + llvm::Twine(index) + " of @" + entry.getSymName() +
       " has type '" + typeToString(type) + "'")
          .str();
  auto tensor = dyn_cast<RankedTensorType>(type);
  auto sharding =
      tensor ? dyn_cast_or_null<ShardingAttr>(tensor.getEncoding()) : nullptr;
  // Semantics §6a: in a dist.auto function a tensor without an encoding is
  // free; until dist-partition chooses its layout it stands as replicated on
  // the function's mesh (the most memory it can take).
  if (!sharding && tensor)
    if (auto meshName = entry->getAttrOfType<FlatSymbolRefAttr>("dist.auto"))
      if (FailureOr<MeshOp> meshOp = lookupMesh(entry, meshName, symbols);
          succeeded(meshOp))
        sharding =
            getShardingAttr(entry.getContext(), *meshOp,
                            planner::Layout::replicated(tensor.getRank()));
  if (!sharding)
    return makeError(where +
                     ", which is not a sharded tensor: every argument and "
                     "result of the entry must be a tensor with a "
                     "#dist.sharding encoding, so that dist-run knows which "
                     "part of the global tensor each rank holds");
  if (!tensor.hasStaticShape())
    return makeError(where + ": dist-run needs a static global shape");
  std::optional<ElementKind> element = getElementKind(tensor.getElementType());
  if (!element)
    return makeError(where + ": the element type is not one dist-run can feed "
                             "(f16, bf16, f32, f64, i1, i8, i16, i32, i64)");
  auto emitError = [&] { return entry.emitError(); };
  FailureOr<MeshOp> meshOp = lookupMesh(entry, sharding.getMesh(), symbols);
  if (failed(meshOp))
    return makeError(where + ": unknown mesh");
  FailureOr<planner::Mesh> mesh = getPlannerMesh(*meshOp, emitError);
  if (failed(mesh))
    return makeError(where + ": invalid mesh");
  FailureOr<planner::Layout> layout =
      getPlannerLayout(sharding, *meshOp, emitError);
  if (failed(layout))
    return makeError(where + ": invalid layout");
  return TensorSignature{
      meshOp->getSymName().str(),
      std::move(*mesh),
      std::move(*layout),
      std::vector<int64_t>(tensor.getShape().begin(), tensor.getShape().end()),
      *element,
      typeToString(type)};
}

llvm::Expected<EntrySignature> readEntrySignature(ModuleOp module,
                                                  llvm::StringRef entryName) {
  std::vector<std::string> candidates = publicFunctions(module);
  auto list = [&] {
    std::string text;
    for (const std::string &name : candidates)
      text += (text.empty() ? "@" : ", @") + name;
    return text.empty() ? std::string("none") : text;
  };
  func::FuncOp entry;
  if (entryName.empty()) {
    if (candidates.empty())
      return makeError("the program has no public function with a body to "
                       "run");
    if (candidates.size() > 1)
      return makeError("the program has several public functions (" + list() +
                       "); choose one with --entry");
    entry = module.lookupSymbol<func::FuncOp>(candidates.front());
  } else {
    entry = module.lookupSymbol<func::FuncOp>(entryName);
    if (!entry)
      return makeError("no function @" + entryName +
                       " in the program (public functions: " + list() + ")");
    if (entry.isExternal())
      return makeError("@" + entryName + " is a declaration without a body");
    // Private functions may be inlined or dropped by the pipeline; only
    // public ones are guaranteed to keep their calling convention.
    if (!entry.isPublic())
      return makeError("@" + entryName +
                       " is not public; dist-run calls public functions");
  }

  EntrySignature signature;
  signature.name = entry.getSymName().str();
  SymbolTableCollection symbols;
  for (auto [i, type] : llvm::enumerate(entry.getArgumentTypes())) {
    llvm::Expected<TensorSignature> sig =
        describe(entry, "argument", i, type, symbols);
    if (!sig)
      return sig.takeError();
    signature.arguments.push_back(std::move(*sig));
  }
  for (auto [i, type] : llvm::enumerate(entry.getResultTypes())) {
    llvm::Expected<TensorSignature> sig =
        describe(entry, "result", i, type, symbols);
    if (!sig)
      return sig.takeError();
    signature.results.push_back(std::move(*sig));
  }
  return signature;
}

LogicalResult planProgram(ModuleOp module,
                          const DistToLLVMPipelineOptions &options,
                          double *modelledSeconds) {
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  buildPartitionPipeline(pm, options);
  DistLowerReshardOptions lowering = options.toLowerReshardOptions();
  // The modelled cost is what dist-lower-reshard's summary remark says
  // (semantics §5 --reps): ask for its remarks, read the summary, and show
  // none of them (dist-run prints no remarks).
  lowering.remarks = modelledSeconds != nullptr;
  buildReshardLoweringPipeline(pm, lowering);
  if (!modelledSeconds)
    return pm.run(module);
  *modelledSeconds = 0;
  ScopedDiagnosticHandler capture(module.getContext(), [&](Diagnostic &diag) {
    if (diag.getSeverity() != DiagnosticSeverity::Remark)
      return failure(); // errors and warnings go on to the next handler
    const std::string message = diag.str();
    llvm::StringRef text = message;
    if (text.consume_front("dist-lower-reshard: ")) {
      size_t at = text.rfind("modelled cost ");
      double seconds = 0;
      if (at != llvm::StringRef::npos &&
          !text.drop_front(at + 14).split(' ').first.getAsDouble(seconds))
        *modelledSeconds += seconds;
    }
    return success();
  });
  return pm.run(module);
}

LogicalResult lowerPlannedToLLVM(ModuleOp module,
                                 const DistToLLVMPipelineOptions &options) {
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  buildDistLocalToLLVMPipeline(pm, options);
  return pm.run(module);
}

LogicalResult lowerToLLVM(ModuleOp module,
                          const DistToLLVMPipelineOptions &options) {
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  buildDistToLLVMPipeline(pm, options);
  return pm.run(module);
}

llvm::Error checkLoweredEntry(ModuleOp lowered,
                              const EntrySignature &signature) {
  auto func = lowered.lookupSymbol<LLVM::LLVMFuncOp>(signature.name);
  if (!func || func.isExternal())
    return makeError("the lowered program has no llvm.func @" + signature.name);
  size_t expected = 0;
  for (const TensorSignature &sig : signature.arguments)
    expected += expandedDescriptorSize(sig.globalShape.size());
  for (const TensorSignature &sig : signature.results)
    expected += expandedDescriptorSize(sig.globalShape.size());
  LLVM::LLVMFunctionType type = func.getFunctionType();
  if (type.getNumParams() != expected ||
      !isa<LLVM::LLVMVoidType>(type.getReturnType()))
    return makeError(
        "the lowered @" + signature.name + " has type " + typeToString(type) +
        ", but the calling convention of "
        "dist/Conversion/Pipelines.h promises a void function of " +
        llvm::Twine(expected) +
        " values (one expanded memref descriptor per argument, then per "
        "result)");
  return llvm::Error::success();
}

llvm::Error writeBytecode(ModuleOp module, llvm::StringRef path) {
  return writeOutputFile(path, [&](llvm::raw_pwrite_stream &os) -> llvm::Error {
    if (failed(writeBytecodeToFile(module, os)))
      return makeError("cannot write the bytecode of the lowered program");
    return llvm::Error::success();
  });
}

llvm::Expected<std::unique_ptr<ExecutionEngine>> createExecutionEngine(
    ModuleOp lowered, unsigned optLevel,
    llvm::function_ref<llvm::orc::SymbolMap(llvm::orc::MangleAndInterner)>
        symbols) {
  // Compile for this host's CPU and features, so that the local data
  // movement the pipeline emits as loops gets vectorised like native code.
  llvm::Expected<llvm::orc::JITTargetMachineBuilder> builder =
      llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  llvm::CodeGenOptLevel codeGenLevel =
      optLevel == 0   ? llvm::CodeGenOptLevel::None
      : optLevel == 1 ? llvm::CodeGenOptLevel::Less
      : optLevel == 2 ? llvm::CodeGenOptLevel::Default
                      : llvm::CodeGenOptLevel::Aggressive;
  builder->setCodeGenOptLevel(codeGenLevel);
  // The optimiser needs its own target machine (the engine takes ownership of
  // the other); it only has to live until create() has run the transformer.
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> optimizerMachine =
      builder->createTargetMachine();
  if (!optimizerMachine)
    return optimizerMachine.takeError();
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> engineMachine =
      builder->createTargetMachine();
  if (!engineMachine)
    return engineMachine.takeError();
  std::function<llvm::Error(llvm::Module *)> transformer =
      makeOptimizingTransformer(optLevel, /*sizeLevel=*/0,
                                optimizerMachine->get());

  // memref.copy between non-contiguous memrefs lowers to a call to
  // memrefCopy, which lives in MLIR's C runner utilities.
  llvm::SmallVector<llvm::StringRef, 1> libraries;
  if (llvm::sys::fs::exists(DIST_RUN_C_RUNNER_UTILS))
    libraries.push_back(DIST_RUN_C_RUNNER_UTILS);

  ExecutionEngineOptions options;
  options.transformer = transformer;
  options.jitCodeGenOptLevel = codeGenLevel;
  options.sharedLibPaths = libraries;
  options.enablePerfNotificationListener = false;
  auto engine =
      ExecutionEngine::create(lowered, options, std::move(*engineMachine));
  if (!engine)
    return engine.takeError();
  if (symbols)
    (*engine)->registerSymbols(symbols);
  // Run global constructors now, with every symbol in place, rather than on
  // the first call (which benchmarks time).
  (*engine)->initialize();
  return std::move(*engine);
}

} // namespace dist::run
