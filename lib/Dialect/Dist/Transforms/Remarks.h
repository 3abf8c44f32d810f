//===- Remarks.h - the -dist-remarks flag shared by the passes --*- C++ -*-===//

#ifndef DIST_LIB_DIALECT_DIST_TRANSFORMS_REMARKS_H
#define DIST_LIB_DIALECT_DIST_TRANSFORMS_REMARKS_H

namespace dist {
/// True when the tool was given -dist-remarks.
bool remarksRequested();
} // namespace dist

#endif
