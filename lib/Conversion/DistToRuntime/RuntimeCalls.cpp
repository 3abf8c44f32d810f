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
  if (type.isF16())
    return DIST_RT_F16;
  if (type.isBF16())
    return DIST_RT_BF16;
  if (type.isF32())
    return DIST_RT_F32;
  if (type.isF64())
    return DIST_RT_F64;
  if (auto integer = dyn_cast<IntegerType>(type)) {
    switch (integer.getWidth()) {
    case 1:
      return DIST_RT_I1;
    case 8:
      return DIST_RT_I8;
    case 16:
      return DIST_RT_I16;
    case 32:
      return DIST_RT_I32;
    case 64:
      return DIST_RT_I64;
    default:
      return std::nullopt;
    }
  }
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

ValueRange RuntimeCalls::call(OpBuilder &b, Location loc, StringRef name,
                              TypeRange results, ValueRange args) {
  func::FuncOp callee =
      declare(name, b.getFunctionType(args.getTypes(), results));
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
  return call(b, loc, "distRtMeshCreate", b.getI64Type(), args)[0];
}

Value RuntimeCalls::group(OpBuilder &b, Location loc, Value mesh,
                          ArrayRef<int64_t> axes) {
  Value args[] = {mesh, i64(b, loc, axes.size()), constArray(b, loc, axes)};
  return call(b, loc, "distRtGroup", b.getI64Type(), args)[0];
}

Value RuntimeCalls::groupIndex(OpBuilder &b, Location loc, Value mesh,
                               MeshOp meshOp, ArrayRef<int64_t> axes) {
  Value index = arith::ConstantIndexOp::create(b, loc, 0);
  for (int64_t axis : axes) {
    Value args[] = {mesh, i64(b, loc, axis)};
    Value coord = call(b, loc, "distRtMeshCoord", b.getI64Type(), args)[0];
    Value size =
        arith::ConstantIndexOp::create(b, loc, meshOp.getAxisSizes()[axis]);
    index = arith::MulIOp::create(b, loc, index, size);
    index = arith::AddIOp::create(
        b, loc, index,
        arith::IndexCastOp::create(b, loc, b.getIndexType(), coord));
  }
  return index;
}
