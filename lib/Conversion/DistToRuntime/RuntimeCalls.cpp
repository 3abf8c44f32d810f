//===- RuntimeCalls.cpp - building calls into the dist runtime ------------===//

#include "RuntimeCalls.h"

// The constants of the C ABI the emitted calls target (header only: the
// compiler does not link the runtime).
#include "dist/Runtime/DistRuntime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace dist;

std::optional<int32_t> dist::getRuntimeDType(Type type) {
  // The type's name in IR is the table's (f32, bf16, i1, ...).
  std::string name;
  llvm::raw_string_ostream os(name);
  type.print(os);
#define DIST_ELEMENT_TYPE(Enum, Name, Bytes, IsFloat, Code)                    \
  if (name == Name)                                                            \
    return Code;
#include "dist/Support/ElementTypes.def"
  return std::nullopt;
}

int32_t dist::getRuntimeReduction(ReductionKind kind) {
  switch (kind) {
  case ReductionKind::sum:
    return DIST_RT_SUM;
  case ReductionKind::max:
    return DIST_RT_MAX;
  case ReductionKind::min:
    return DIST_RT_MIN;
  case ReductionKind::prod:
    return DIST_RT_PROD;
  case ReductionKind::avg:
    return DIST_RT_AVG;
  }
  return DIST_RT_SUM;
}

func::FuncOp RuntimeCalls::declare(StringRef name, FunctionType type) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto func = func::FuncOp::create(b, module.getLoc(), name, type);
  func.setPrivate();
  return func;
}

namespace {
// The argument kinds of RuntimeEntryPoints.def.
enum class Kind { I32, I64, Ptr };
constexpr Kind I32 = Kind::I32, I64 = Kind::I64, Ptr = Kind::Ptr;

struct EntryRow {
  const char *symbol;
  Kind result;
  std::initializer_list<Kind> arguments;
};

const EntryRow &rowOf(RuntimeEntry entry) {
  static const EntryRow rows[] = {
#define DIST_RT_ENTRY(Enum, Symbol, Result, ...)                               \
  {#Symbol, Result, {__VA_ARGS__}},
#include "RuntimeEntryPoints.def"
  };
  return rows[static_cast<size_t>(entry)];
}

} // namespace

llvm::StringRef dist::runtimeEntrySymbol(RuntimeEntry entry) {
  return rowOf(entry).symbol;
}

namespace {
// Every row against the declaration in DistRuntime.h, at build time.
template <typename T> constexpr bool isKind(Kind kind) {
  switch (kind) {
  case Kind::I32:
    return std::is_same_v<T, int32_t>;
  case Kind::I64:
    return std::is_same_v<T, int64_t>;
  case Kind::Ptr:
    return std::is_pointer_v<T>;
  }
  return false;
}
template <typename R, typename... A>
constexpr bool matches(R (*)(A...), Kind result,
                       std::initializer_list<Kind> arguments) {
  if (!isKind<R>(result) || arguments.size() != sizeof...(A))
    return false;
  const Kind *kind = arguments.begin();
  return (isKind<A>(*kind++) && ...);
}
#define DIST_RT_ENTRY(Enum, Symbol, Result, ...)                               \
  static_assert(matches(&Symbol, Result, {__VA_ARGS__}),                       \
                "RuntimeEntryPoints.def: " #Symbol                             \
                " differs from its declaration in DistRuntime.h");
#include "RuntimeEntryPoints.def"

Type typeOf(MLIRContext *context, Kind kind) {
  switch (kind) {
  case Kind::I32:
    return IntegerType::get(context, 32);
  case Kind::I64:
    return IntegerType::get(context, 64);
  case Kind::Ptr:
    return LLVM::LLVMPointerType::get(context);
  }
  return {};
}
} // namespace

ValueRange RuntimeCalls::call(OpBuilder &b, Location loc, RuntimeEntry entry,
                              ValueRange args) {
  const EntryRow &row = rowOf(entry);
  MLIRContext *context = b.getContext();
  SmallVector<Type> inputs;
  for (Kind kind : row.arguments)
    inputs.push_back(typeOf(context, kind));
  if (TypeRange(args) != TypeRange(inputs)) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "dist: internal error: a call to " << row.symbol << " with (";
    llvm::interleaveComma(args.getTypes(), os);
    os << "), but the runtime takes (";
    llvm::interleaveComma(inputs, os);
    os << ")";
    llvm::report_fatal_error(llvm::StringRef(text));
  }
  func::FuncOp callee = declare(
      row.symbol, b.getFunctionType(inputs, {typeOf(context, row.result)}));
  return func::CallOp::create(b, loc, callee, args).getResults();
}

Value RuntimeCalls::i64(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(b, loc, value, 64);
}

Value RuntimeCalls::i32(OpBuilder &b, Location loc, int32_t value) {
  return arith::ConstantIntOp::create(b, loc, value, 32);
}

Value RuntimeCalls::nullPtr(OpBuilder &b, Location loc) {
  return LLVM::ZeroOp::create(b, loc,
                              LLVM::LLVMPointerType::get(b.getContext()));
}

Value RuntimeCalls::constArray(OpBuilder &b, Location loc,
                               ArrayRef<int64_t> values) {
  std::vector<int64_t> key(values.begin(), values.end());
  auto type =
      MemRefType::get({static_cast<int64_t>(values.size())}, b.getI64Type());
  std::string &name = arrays[key];
  if (name.empty()) {
    name = uniqueName("__dist_table_");
    OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
    auto tensorType = RankedTensorType::get(type.getShape(), b.getI64Type());
    memref::GlobalOp::create(top, module.getLoc(), name,
                             top.getStringAttr("private"), type,
                             DenseIntElementsAttr::get(tensorType, values),
                             /*constant=*/true, /*alignment=*/nullptr);
  }
  Value table = memref::GetGlobalOp::create(b, loc, type, name);
  return bufferPtr(b, loc, table);
}

std::string RuntimeCalls::uniqueName(StringRef prefix) {
  // Unique against symbols already in the module (a second run of the pass,
  // or user symbols).
  std::string name;
  do
    name = (prefix + std::to_string(nextArray++)).str();
  while (module.lookupSymbol(name));
  return name;
}

Value RuntimeCalls::constScalar(OpBuilder &b, Location loc, TypedAttr value) {
  auto type = MemRefType::get({1}, value.getType());
  std::string name = uniqueName("__dist_scalar_");
  OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
  auto tensorType = RankedTensorType::get({1}, value.getType());
  memref::GlobalOp::create(top, module.getLoc(), name,
                           top.getStringAttr("private"), type,
                           DenseElementsAttr::get(tensorType, value),
                           /*constant=*/true, /*alignment=*/nullptr);
  return memref::GetGlobalOp::create(b, loc, type, name);
}

Value RuntimeCalls::bufferPtr(OpBuilder &b, Location loc, Value memref) {
  // Identity-layout buffers start at the aligned pointer (offset 0).
  Value index = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  Value address = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), address);
}

Value RuntimeCalls::elementPtr(OpBuilder &b, Location loc, Value memref) {
  return elementPtr(b, loc, memref, arith::ConstantIndexOp::create(b, loc, 0));
}

Value RuntimeCalls::elementPtr(OpBuilder &b, Location loc, Value memref,
                               Value elements) {
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  int64_t bytes =
      (cast<MemRefType>(memref.getType()).getElementTypeBitWidth() + 7) / 8;
  Value first = arith::AddIOp::create(b, loc, meta.getOffset(), elements);
  Value offsetBytes = arith::MulIOp::create(
      b, loc, first, arith::ConstantIndexOp::create(b, loc, bytes));
  Value address = arith::IndexCastOp::create(
      b, loc, b.getI64Type(), arith::AddIOp::create(b, loc, base, offsetBytes));
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), address);
}

Value RuntimeCalls::mesh(OpBuilder &b, Location loc, MeshOp meshOp) {
  ArrayRef<int64_t> sizes = meshOp.getAxisSizes();
  Value devices = nullPtr(b, loc);
  if (std::optional<ArrayRef<int64_t>> ids = meshOp.getDevices())
    devices = constArray(b, loc, *ids);
  Value args[] = {i64(b, loc, sizes.size()), constArray(b, loc, sizes),
                  devices};
  return call(b, loc, RuntimeEntry::MeshCreate, args)[0];
}

Value RuntimeCalls::group(OpBuilder &b, Location loc, Value mesh,
                          ArrayRef<int64_t> axes) {
  Value args[] = {mesh, i64(b, loc, axes.size()), constArray(b, loc, axes)};
  return call(b, loc, RuntimeEntry::Group, args)[0];
}

Value RuntimeCalls::groupIndex(OpBuilder &b, Location loc, Value mesh,
                               MeshOp meshOp, ArrayRef<int64_t> axes) {
  Value index = arith::ConstantIndexOp::create(b, loc, 0);
  for (int64_t axis : axes) {
    Value args[] = {mesh, i64(b, loc, axis)};
    Value coord = call(b, loc, RuntimeEntry::MeshCoord, args)[0];
    Value size =
        arith::ConstantIndexOp::create(b, loc, meshOp.getAxisSizes()[axis]);
    index = arith::MulIOp::create(b, loc, index, size);
    index = arith::AddIOp::create(
        b, loc, index,
        arith::IndexCastOp::create(b, loc, b.getIndexType(), coord));
  }
  return index;
}
