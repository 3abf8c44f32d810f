//===- AttributeParserFuzzer.cpp - The dialect's textual forms ------------===//
//
// Input: first byte picks what the rest is parsed as - an attribute
// (#dist.sharding<...>), a type (a tensor with a sharding encoding, which
// runs its verifier), or a whole module (dist.mesh and the dist ops, then
// the verifier). What parses must print and parse back.

#include "FuzzSupport.h"

#include "dist/Dialect/Dist/IR/DistDialect.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <memory>

using namespace mlir;
using namespace dist::fuzz;

namespace {
/// A context keeps every attribute and type it ever uniqued, so it is
/// replaced now and then to keep the fuzzer's memory bounded.
MLIRContext &context() {
  static std::unique_ptr<MLIRContext> ctx;
  static unsigned uses = 0;
  if (!ctx || ++uses % 20000 == 0) {
    DialectRegistry registry;
    registry.insert<::dist::DistDialect, func::FuncDialect,
                    tensor::TensorDialect>();
    ctx = std::make_unique<MLIRContext>(registry);
    ctx->loadAllAvailableDialects();
    // Diagnostics are expected; only crashes count.
    ctx->getDiagEngine().registerHandler(
        [](Diagnostic &) { return success(); });
  }
  return *ctx;
}

template <typename T> std::string print(T value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  value.print(os);
  return text;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  MLIRContext &ctx = context();
  // MLIR's lexer reads up to a terminating NUL (what files and Python
  // strings have), so the input is copied into a std::string.
  std::string owned(reinterpret_cast<const char *>(data) + 1, size - 1);
  llvm::StringRef text(owned);
  switch (data[0] % 3) {
  case 0:
    if (Attribute attr = parseAttribute(text, &ctx)) {
      std::string printed = print(attr);
      fuzzCheck(parseAttribute(printed, &ctx) == attr,
                "an attribute prints and parses back");
    }
    break;
  case 1:
    if (Type type = parseType(text, &ctx)) {
      std::string printed = print(type);
      fuzzCheck(parseType(printed, &ctx) == type,
                "a type prints and parses back");
    }
    break;
  default: {
    ParserConfig config(&ctx);
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, config);
    if (module && succeeded(verify(*module))) {
      std::string printed = print(*module);
      OwningOpRef<ModuleOp> again =
          parseSourceString<ModuleOp>(printed, config);
      fuzzCheck(bool(again), "a verified module prints and parses back");
    }
    break;
  }
  }
  return 0;
}
