//===- JobFile.h - what the front tells every rank worker -------*- C++ -*-===//
//
// dist-run's front process compiles the program once into a shared object
// and writes a job file beside it; every rank runs dist-run-worker on that
// file (docs/dist-run.md, "What happens"). The job file holds everything a
// rank needs without MLIR or the planner: the entry and its packed symbol,
// the backend, the inputs, and per argument and result its element type,
// global shape and every rank's placement (Placement.h).
//
// The format is text, one record per line, words separated by spaces; the
// values that may hold spaces (paths, type texts) take the rest of their
// line:
//
//   dist-run-job 1
//   entry NAME                    the function, for messages
//   symbol NAME                   the packed wrapper in the library
//   library PATH                  the shared object (relative: to the job
//                                 file's folder)
//   backend mpi|nccl
//   target cpu|gpu                (optional, cpu) what the program was
//                                 compiled for
//   ranks N
//   input iota|random:SEED|npy:DIR
//   dump DIR                      (optional)
//   fault KIND:RANK               (optional; tests)
//   reps R                        (optional) timed calls after a warm-up
//   modelled SECONDS              (optional) the program's modelled cost
//   argument|result K ELEMENT RANK D0 .. D(RANK-1) TYPE-TEXT
//   rank R HOLDS IDENTITY L0 .. L(RANK-1) then per dim: NRUNS (LOCAL GLOBAL
//   COUNT)*
//                                 one per rank after each tensor, in rank
//                                 order; IDENTITY is an integer or '-'
//   end
//
//===----------------------------------------------------------------------===//
#ifndef DIST_TOOLS_DIST_RUN_COMMON_JOBFILE_H
#define DIST_TOOLS_DIST_RUN_COMMON_JOBFILE_H

#include "Elements.h"
#include "Placement.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dist::run {

struct TensorJob {
  ElementKind element = ElementKind::F32;
  std::vector<int64_t> globalShape;
  /// The global type as the program writes it, for messages.
  std::string typeText;
  /// One per world rank.
  std::vector<ShardPlacement> ranks;
};

struct JobFile {
  std::string entry;
  std::string symbol;
  std::string library;
  std::string backend = "mpi";
  /// The code's target: gpu code on the mpi backend keeps its buffers in
  /// device memory where a GPU is visible (DIST_RT_MPI_MEMORY=auto).
  std::string target = "cpu";
  int64_t numRanks = 0;
  std::string input = "iota";
  std::string dump;
  std::string fault;
  /// semantics §5 --reps: calls timed after the first (0: just the first).
  int64_t reps = 0;
  /// The modelled cost of the program's reshards, printed beside the
  /// measured times.
  double modelledSeconds = 0;
  std::vector<TensorJob> arguments, results;
};

/// Writes `job` to `path`.
llvm::Error writeJobFile(llvm::StringRef path, const JobFile &job);

/// Reads and checks a job file: every record, the ranks of every tensor,
/// and that every placement fits its local shape. Errors name the line.
/// A relative library path is made relative to the file's folder.
llvm::Expected<JobFile> readJobFile(llvm::StringRef path);

} // namespace dist::run

#endif // DIST_TOOLS_DIST_RUN_COMMON_JOBFILE_H
