//===- MachineMemory.cpp - what memory a job can have ---------------------===//

#include "MachineMemory.h"

#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <optional>
#include <unistd.h>

/// A cgroup memory limit file's value; nullopt for "max" or no such file.
static std::optional<uint64_t> readLimit(const char *path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!file)
    return std::nullopt;
  uint64_t value = 0;
  if ((*file)->getBuffer().trim().getAsInteger(10, value))
    return std::nullopt;
  return value;
}

uint64_t dist::run::machineMemory() {
  long pages = ::sysconf(_SC_PHYS_PAGES), pageSize = ::sysconf(_SC_PAGE_SIZE);
  uint64_t memory = pages > 0 && pageSize > 0
                        ? uint64_t(pages) * uint64_t(pageSize)
                        : UINT64_MAX;
  // cgroup v2, then v1 (which says "unlimited" with a huge number).
  for (const char *path : {"/sys/fs/cgroup/memory.max",
                           "/sys/fs/cgroup/memory/memory.limit_in_bytes"})
    if (std::optional<uint64_t> limit = readLimit(path))
      memory = std::min(memory, *limit);
  return memory;
}
