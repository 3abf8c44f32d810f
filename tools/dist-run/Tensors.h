//===- Tensors.h - placements of a program's tensors ------------*- C++ -*-===//
//
// The front's side of dist-run's inputs and outputs (common/Inputs.h): from
// an entry's signature (mesh, layout, global shape, semantics §1-§2), where
// each rank's local padded shard sits in the global tensor, by the
// planner's block semantics (interleaved dims included). The workers get
// these placements through the job file and need no planner.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_TOOLS_DIST_RUN_TENSORS_H
#define DIST_TOOLS_DIST_RUN_TENSORS_H

#include "Program.h"
#include "common/Inputs.h"
#include "common/JobFile.h"
#include "common/Placement.h"

#include <cstdint>

namespace dist::run {

/// Where world rank `rank` holds its part of a tensor of `sig`.
ShardPlacement placementOf(const TensorSignature &sig, int64_t rank);

/// The job file's record of a tensor: its type and every rank's placement.
TensorJob tensorJobOf(const TensorSignature &sig, int64_t numRanks);

/// Fills `buffer` (sig.localBytes() bytes) with the local padded shard
/// world rank `rank` holds of an iota or random:SEED input.
void materializeArgument(const TensorSignature &sig, const InputSpec &input,
                         int64_t rank, void *buffer);

} // namespace dist::run

#endif // DIST_TOOLS_DIST_RUN_TENSORS_H
