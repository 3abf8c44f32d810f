//===- SharedObject.cpp - compile a lowered program once ------------------===//

#include "SharedObject.h"
#include "common/OutputFile.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <cstdlib>

namespace dist::run {

namespace {

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Adds `void symbol(void **args)`, which calls `entry` with *args[i] as
/// its i-th parameter: the form a caller can use for any signature.
llvm::Error addPackedWrapper(llvm::Module &module, llvm::StringRef entry,
                             llvm::StringRef symbol) {
  llvm::Function *function = module.getFunction(entry);
  if (!function || function->isDeclaration())
    return makeError("the compiled program has no function @" + entry);
  llvm::LLVMContext &context = module.getContext();
  llvm::Type *ptr = llvm::PointerType::getUnqual(context);
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(context), {ptr},
                                       /*isVarArg=*/false);
  llvm::Function *wrapper = llvm::Function::Create(
      type, llvm::GlobalValue::ExternalLinkage, symbol, module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", wrapper));
  llvm::Value *args = wrapper->getArg(0);
  llvm::SmallVector<llvm::Value *> values;
  for (auto [i, parameter] : llvm::enumerate(function->args())) {
    llvm::Value *slot = b.CreateConstGEP1_64(ptr, args, i);
    llvm::Value *address = b.CreateLoad(ptr, slot);
    values.push_back(b.CreateLoad(parameter.getType(), address));
  }
  b.CreateCall(function, values);
  b.CreateRetVoid();
  return llvm::Error::success();
}

/// Everything the program defines stays inside the shared object except
/// the wrapper: a user's function named like a libc or runtime symbol must
/// not interpose on it, nor the other way round.
void hideAllBut(llvm::Module &module, llvm::StringRef symbol) {
  for (llvm::GlobalValue &value : module.global_values()) {
    if (value.isDeclaration() || value.getName() == symbol ||
        value.hasLocalLinkage())
      continue;
    value.setVisibility(llvm::GlobalValue::HiddenVisibility);
  }
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const SharedObjectOptions &options) {
  llvm::orc::JITTargetMachineBuilder builder{
      llvm::Triple(llvm::sys::getProcessTriple())};
  if (options.cpu.empty()) {
    // This host's CPU and features, so that the loops the pipeline emits get
    // vectorised like native code.
    llvm::Expected<llvm::orc::JITTargetMachineBuilder> host =
        llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!host)
      return host.takeError();
    builder = std::move(*host);
  } else {
    builder.setCPU(options.cpu);
  }
  builder.setRelocationModel(llvm::Reloc::PIC_);
  builder.setCodeGenOptLevel(
      options.optLevel == 0   ? llvm::CodeGenOptLevel::None
      : options.optLevel == 1 ? llvm::CodeGenOptLevel::Less
      : options.optLevel == 2 ? llvm::CodeGenOptLevel::Default
                              : llvm::CodeGenOptLevel::Aggressive);
  return builder.createTargetMachine();
}

/// Runs `program` with `args`, its output into `log`; the log's text on
/// failure.
llvm::Error runTool(llvm::StringRef program,
                    llvm::ArrayRef<llvm::StringRef> args, llvm::StringRef log) {
  std::string message;
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log, log};
  int status = llvm::sys::ExecuteAndWait(program, args, std::nullopt, redirects,
                                         0, 0, &message);
  if (status == 0)
    return llvm::Error::success();
  std::string output;
  if (auto text = llvm::MemoryBuffer::getFile(log))
    output = (*text)->getBuffer().trim().str();
  std::string command;
  for (llvm::StringRef arg : args)
    command += (command.empty() ? "" : " ") + arg.str();
  std::string why =
      status < 0 ? message : "exit status " + std::to_string(status);
  return makeError("linking the compiled program failed (" + command + ": " +
                   why + ")" + (output.empty() ? "" : ":\n" + output));
}

} // namespace

bool isKnownCpu(llvm::StringRef cpu) {
  const llvm::Triple triple(llvm::sys::getProcessTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return false;
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      target->createMCSubtargetInfo(triple, "", ""));
  return info && info->isCPUStringValid(cpu);
}

std::string packedSymbol(llvm::StringRef entry) {
  return ("_dist_run_packed_" + entry).str();
}

llvm::Error compileSharedObject(mlir::ModuleOp lowered, llvm::StringRef entry,
                                const SharedObjectOptions &options,
                                llvm::StringRef objectPath,
                                llvm::StringRef libraryPath) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module =
      mlir::translateModuleToLLVMIR(lowered, context, "dist-program");
  if (!module)
    return makeError("translating the lowered program to LLVM IR failed");
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      createTargetMachine(options);
  if (!machine)
    return machine.takeError();
  module->setDataLayout((*machine)->createDataLayout());
  module->setTargetTriple((*machine)->getTargetTriple());
  const std::string symbol = packedSymbol(entry);
  if (llvm::Error error = addPackedWrapper(*module, entry, symbol))
    return error;
  hideAllBut(*module, symbol);
  if (llvm::Error error = mlir::makeOptimizingTransformer(
          options.optLevel, /*sizeLevel=*/0, machine->get())(module.get()))
    return error;

  if (llvm::Error error = writeOutputFile(
          objectPath, [&](llvm::raw_pwrite_stream &os) -> llvm::Error {
            llvm::legacy::PassManager codegen;
            if ((*machine)->addPassesToEmitFile(
                    codegen, os, nullptr, llvm::CodeGenFileType::ObjectFile))
              return makeError("LLVM cannot emit object files for " +
                               (*machine)->getTargetTriple().str());
            codegen.run(*module);
            return llvm::Error::success();
          }))
    return error;

  std::string cc = DIST_RUN_CC;
  if (const char *chosen = std::getenv("DIST_RUN_CC"); chosen && *chosen)
    cc = chosen;
  llvm::ErrorOr<std::string> linker = llvm::sys::findProgramByName(cc);
  if (!linker || !llvm::sys::fs::can_execute(*linker))
    return makeError("cannot find the C compiler '" + cc +
                     "' that links the compiled program (set DIST_RUN_CC to "
                     "one on this machine)");
  llvm::SmallVector<llvm::StringRef> args = {*linker, "-shared", "-o",
                                             libraryPath, objectPath};
  // Half and bfloat16 conversions are library calls on CPUs without them;
  // older C runtimes (GCC 12's libgcc) lack the bfloat16 ones.
  if (llvm::sys::fs::exists(DIST_RUN_BUILTINS))
    args.push_back(DIST_RUN_BUILTINS);
  args.push_back("-lm");
  llvm::SmallString<256> log(libraryPath);
  log += ".link.log";
  if (llvm::Error error = runTool(*linker, args, log))
    return error;
  // The shared object is all the ranks need.
  llvm::sys::fs::remove(objectPath);
  llvm::sys::fs::remove(log);
  return llvm::Error::success();
}

} // namespace dist::run
