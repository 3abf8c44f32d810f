//===- CompilerBindings.cpp - compile(): run dist passes in-process -------===//
//
// Parses a module with every dialect a dist program uses, runs a textual
// pass pipeline over it and prints the result, like
// `dist-opt --pass-pipeline='builtin.module(PIPELINE)'`. Diagnostics are
// rendered exactly as dist-opt renders them (file:line:col, the source line,
// a caret) and handed back to Python rather than printed.
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"

#include <pybind11/stl.h>

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#ifdef DIST_PYTHON_WITH_MLIR
#include "dist/InitAllDist.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#endif

namespace py = pybind11;

namespace dist::python {

namespace {

#ifdef DIST_PYTHON_WITH_MLIR

struct Diagnostic {
  std::string severity; // "error", "warning", "remark", "note"
  std::string text;     // rendered like dist-opt, notes included
};

struct CompileOutcome {
  bool ok = false;
  std::string output;
  std::vector<Diagnostic> diagnostics;
};

const char *severityName(mlir::DiagnosticSeverity severity) {
  switch (severity) {
  case mlir::DiagnosticSeverity::Error:
    return "error";
  case mlir::DiagnosticSeverity::Warning:
    return "warning";
  case mlir::DiagnosticSeverity::Remark:
    return "remark";
  case mlir::DiagnosticSeverity::Note:
    return "note";
  }
  return "error";
}

// Holds the stream SourceMgrDiagnosticHandler writes into; a base class so
// that it is constructed before the handler that keeps a reference to it.
struct RenderBuffer {
  std::string text;
  llvm::raw_string_ostream stream{text};
};

/// Renders every diagnostic with the source manager (so the text matches
/// dist-opt's) and keeps one entry per diagnostic instead of printing it.
class CollectingDiagnosticHandler : private RenderBuffer,
                                    public mlir::SourceMgrDiagnosticHandler {
public:
  CollectingDiagnosticHandler(llvm::SourceMgr &sourceMgr,
                              mlir::MLIRContext *context,
                              std::vector<Diagnostic> &out)
      : SourceMgrDiagnosticHandler(sourceMgr, context, RenderBuffer::stream),
        out(out) {
    setHandler([this](mlir::Diagnostic &diag) {
      emitDiagnostic(diag);
      RenderBuffer::stream.flush();
      this->out.push_back({severityName(diag.getSeverity()), text});
      text.clear();
      return mlir::success();
    });
  }

private:
  std::vector<Diagnostic> &out;
};

CompileOutcome compileModule(const std::string &source,
                             llvm::StringRef pipeline,
                             const std::string &bufferName) {
  // Pass registration fills process-wide registries; once is enough and
  // twice would register every pass again.
  static std::once_flag registered;
  std::call_once(registered, [] { dist::registerAllDistPasses(); });

  CompileOutcome outcome;
  mlir::DialectRegistry registry;
  dist::registerAllDistDialects(registry);
  // No thread pool: contexts are made per call, and spawning a pool costs
  // more than it saves on the small modules one compiles from Python.
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  // The source line and caret already locate a diagnostic; dist-opt's extra
  // "see current operation" note would print whole modules into Python
  // exception texts and warnings.
  context.printOpOnDiagnostic(false);

  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, bufferName), llvm::SMLoc());
  CollectingDiagnosticHandler handler(sourceMgr, &context, outcome.diagnostics);

  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module)
    return outcome;

  // Accept the anchored form `builtin.module(...)` that --pass-pipeline
  // takes as well as a bare list `a,b{opt=1},func.func(c)` as the pass flags
  // spell it; MLIR's anchored parser also just strips the anchor.
  pipeline = pipeline.trim();
  llvm::StringRef body = pipeline;
  if (body.consume_front("builtin.module(")) {
    if (!body.consume_back(")")) {
      outcome.diagnostics.push_back(
          {"error", "invalid pass pipeline '" + pipeline.str() +
                        "': missing ')' after 'builtin.module('\n"});
      return outcome;
    }
  }
  mlir::PassManager pm(&context, mlir::ModuleOp::getOperationName(),
                       mlir::OpPassManager::Nesting::Implicit);
  std::string pipelineErrors;
  llvm::raw_string_ostream pipelineStream(pipelineErrors);
  if (mlir::failed(mlir::parsePassPipeline(body, pm, pipelineStream))) {
    pipelineStream.flush();
    outcome.diagnostics.push_back(
        {"error", "invalid pass pipeline '" + pipeline.str() + "': " +
                      llvm::StringRef(pipelineErrors).trim().str() + "\n"});
    return outcome;
  }
  if (mlir::failed(pm.run(*module))) {
    bool reported = false;
    for (const Diagnostic &diag : outcome.diagnostics)
      reported |= diag.severity == "error";
    if (!reported)
      outcome.diagnostics.push_back(
          {"error", "pass pipeline '" + pipeline.str() + "' failed\n"});
    return outcome;
  }
  llvm::raw_string_ostream os(outcome.output);
  module->print(os);
  // dist-opt ends its output with a newline; so do we, so that the two can
  // be compared byte for byte.
  os << "\n";
  outcome.ok = true;
  return outcome;
}

#endif // DIST_PYTHON_WITH_MLIR

} // namespace

void bindCompiler(py::module_ &m) {
  py::register_exception<CompileFailure>(m, "CompileError", PyExc_ValueError);
#ifdef DIST_PYTHON_WITH_MLIR
  m.attr("HAVE_MLIR") = true;
  m.def(
      "compile",
      [](const std::string &source, const std::string &pipeline,
         const std::string &bufferName) {
        CompileOutcome outcome;
        {
          py::gil_scoped_release release;
          outcome = compileModule(source, pipeline, bufferName);
        }
        std::vector<std::pair<std::string, std::string>> diagnostics;
        std::string errors;
        for (Diagnostic &diag : outcome.diagnostics) {
          if (diag.severity == "error")
            errors += diag.text;
          diagnostics.emplace_back(std::move(diag.severity),
                                   std::move(diag.text));
        }
        if (!outcome.ok)
          throw CompileFailure(errors);
        return py::make_tuple(outcome.output, diagnostics);
      },
      py::arg("source"), py::arg("pipeline"), py::arg("buffer_name"),
      "Returns (module text, [(severity, rendered diagnostic), ...]); raises "
      "CompileError with the rendered errors.");
#else
  m.attr("HAVE_MLIR") = false;
  m.def(
      "compile",
      [](const std::string &, const std::string &,
         const std::string &) -> py::tuple {
        throw std::runtime_error(
            "dist_mlir was built without MLIR (DIST_ENABLE_MLIR=OFF); "
            "compile() is unavailable");
      },
      py::arg("source"), py::arg("pipeline"), py::arg("buffer_name"));
#endif
}

} // namespace dist::python
