//===- BufferizableOpInterfaceImpl.h - dist bufferization -------*- C++ -*-===//

#ifndef DIST_DIALECT_DIST_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
#define DIST_DIALECT_DIST_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace dist {
/// Lets one-shot bufferization turn each dist.local.* op into a fresh
/// output buffer and the matching dist.buffer.* op.
void registerBufferizableOpInterfaceExternalModels(
    mlir::DialectRegistry &registry);
} // namespace dist

#endif // DIST_DIALECT_DIST_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
