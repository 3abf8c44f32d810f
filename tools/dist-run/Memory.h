//===- Memory.h - what a job needs against what the machine has -*- C++ -*-===//
//
// Every rank allocates its local shard of every argument and result before
// the call, and the call allocates its intermediates. A program whose shards
// cannot fit (a 10^6 x 10^6 f32 tensor over 2 ranks is 2 TB per rank) used
// to make every rank abort in an allocator with a stack dump; dist-run now
// refuses it before any rank starts, naming the largest buffer and its
// per-rank size. All ranks run on this machine (dist-mpirun uses shared
// memory only), so the job's need is the ranks' needs summed.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_TOOLS_DIST_RUN_MEMORY_H
#define DIST_TOOLS_DIST_RUN_MEMORY_H

#include "Program.h"
#include "common/MachineMemory.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dist::run {

/// One buffer every rank allocates.
struct RankBuffer {
  /// For messages: "argument #0 of @f", "result #0 of 'dist.all_gather' at
  /// f.mlir:3:8".
  std::string what;
  std::string type; // the global type as written
  std::vector<int64_t> localShape;
  uint64_t bytes = 0;
};

/// A lower bound of what each rank holds while the entry runs: all of its
/// arguments and results (allocated before the call, live until after it)
/// and the largest other tensor of the planned program (the call allocates
/// it).
struct RankMemory {
  std::vector<RankBuffer> arguments, results;
  std::optional<RankBuffer> largestIntermediate;

  uint64_t argumentBytes() const;
  uint64_t resultBytes() const;
  /// Saturating: never wraps around.
  uint64_t total() const;
  /// The largest of all the buffers above.
  const RankBuffer *largest() const;
};

/// The entry's arguments and results from `signature`, and with `planned`
/// (the global view after planProgram: every tensor has its layout) the
/// largest other tensor of its functions.
RankMemory rankMemory(const EntrySignature &signature, mlir::ModuleOp planned);

/// An error naming the largest buffer when `ranks` ranks of `need` each do
/// not fit in `limit` bytes; `limitSource` says where the limit comes from.
llvm::Error checkJobMemory(const RankMemory &need, int64_t ranks,
                           uint64_t limit, llvm::StringRef limitSource);

/// "2000000000000 bytes (1.82 TiB)".
std::string formatBytes(uint64_t bytes);

} // namespace dist::run

#endif // DIST_TOOLS_DIST_RUN_MEMORY_H
