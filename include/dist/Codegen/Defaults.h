//===- Defaults.h - the defaults of the local compute's code generation ---===//
//
// One place for the knobs' defaults that the passes (Passes.td), the
// pipelines' options (dist/Conversion/Pipelines.h) and dist-run share.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_CODEGEN_DEFAULTS_H
#define DIST_CODEGEN_DEFAULTS_H

#include <cstdint>

namespace dist::codegen {

/// The vector width in bytes: AVX-512 (LLVM splits wider vectors for
/// narrower ISAs).
inline constexpr int64_t kDefaultVectorBytes = 64;

/// About how many elements a block of rows that dist-fuse-rows computes
/// together holds: one row of 512 f32 or more. Small blocks let the core
/// overlap one row's reads from memory with the previous row's arithmetic
/// (a [16, 512, 512] masked softmax: 2.3 ms at 512, 3.0 ms at 4096).
inline constexpr int64_t kDefaultRowTileElements = 512;

/// How many vectors of partial results a reduction along the innermost
/// loop keeps: independent chains that hide the combine's latency.
inline constexpr int64_t kDefaultAccumulators = 4;

} // namespace dist::codegen

#endif // DIST_CODEGEN_DEFAULTS_H
