//===- Elements.h - the element types dist-run feeds and reads --*- C++ -*-===//
//
// Part of dist-run's common code (tools/dist-run/common): what the front
// process and the rank workers share. It uses LLVM's Support library only
// (no MLIR, no planner), so that the worker (dist-run-worker) can link it
// statically and run where no LLVM or MLIR is installed.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_TOOLS_DIST_RUN_COMMON_ELEMENTS_H
#define DIST_TOOLS_DIST_RUN_COMMON_ELEMENTS_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace dist::run {

/// The element types dist programs exchange; each has a runtime dtype.
/// One per row of dist/Support/ElementTypes.def.
enum class ElementKind {
#define DIST_ELEMENT_TYPE(Enum, Name, Bytes, IsFloat, Code) Enum,
#include "dist/Support/ElementTypes.def"
};

/// Bytes per element in a memref (i1 takes one byte, as MLIR lays it out).
int64_t elementBytes(ElementKind kind);
/// The DIST_RT_* dtype constant of DistRuntime.h.
int32_t runtimeDType(ElementKind kind);
/// "f32", "bf16", "i1", ...
llvm::StringRef elementName(ElementKind kind);
/// The inverse of elementName.
std::optional<ElementKind> parseElementName(llvm::StringRef name);
bool isFloat(ElementKind kind);

/// Rounds `value` to the nearest value of a float kind, ties to even, in one
/// step (f16 and bf16 included), and stores it at `dst`.
void storeFloat(ElementKind kind, double value, void *dst);
/// Stores `value` wrapped to an integer kind's width (two's complement; i1
/// keeps the lowest bit).
void storeInt(ElementKind kind, int64_t value, void *dst);
/// storeFloat or storeInt, whichever `kind` takes.
void storeNumber(ElementKind kind, int64_t value, void *dst);

} // namespace dist::run

#endif // DIST_TOOLS_DIST_RUN_COMMON_ELEMENTS_H
