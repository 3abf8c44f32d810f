//===- PairCostMemo.h - reshard costs of layout pairs -----------*- C++ -*-===//
//
// dist-partition prices every entry of every edge's table: a layout pair
// on a tensor type. A stack of layers asks for the same pairs once per
// layer, and each request would build the plan cache's text key again
// (printing both layouts and the mesh) before finding the cost: on 16
// Llama layers on a 2 x 2 x 2 mesh that was most of the 18 s the pass took.
// This memo answers a repeated pair from a compact binary key; an exact cost
// replaces a lower bound, never the other way round. Thread-safe (tables are
// priced on the context's threads).
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITION_PAIRCOSTMEMO_H
#define DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITION_PAIRCOSTMEMO_H

#include "dist/Planner/Layout.h"

#include "mlir/IR/Types.h"

#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>

namespace dist::partition {

/// Appends `value`'s bytes to a memo key.
inline void appendKeyBytes(std::string &bytes, int64_t value) {
  bytes.append(reinterpret_cast<const char *>(&value), sizeof(value));
}

/// A type, by its uniqued pointer.
inline void appendKeyBytes(std::string &bytes, mlir::Type type) {
  appendKeyBytes(bytes, reinterpret_cast<intptr_t>(type.getAsOpaquePointer()));
}

/// A layout, every field (equal layouts give equal bytes: canonical form).
inline void appendKeyBytes(std::string &bytes, const planner::Layout &layout) {
  appendKeyBytes(bytes, static_cast<int64_t>(layout.dimAxes.size()));
  for (const planner::AxisList &axes : layout.dimAxes) {
    appendKeyBytes(bytes, static_cast<int64_t>(axes.size()));
    for (unsigned axis : axes)
      appendKeyBytes(bytes, axis);
  }
  appendKeyBytes(bytes, static_cast<int64_t>(layout.partialAxes.size()));
  for (unsigned axis : layout.partialAxes)
    appendKeyBytes(bytes, axis);
  appendKeyBytes(bytes, layout.hasPartial()
                            ? static_cast<int64_t>(layout.partialKind)
                            : -1);
  appendKeyBytes(bytes, static_cast<int64_t>(layout.segments.size()));
  for (const std::vector<int64_t> &lengths : layout.segments) {
    appendKeyBytes(bytes, static_cast<int64_t>(lengths.size()));
    for (int64_t length : lengths)
      appendKeyBytes(bytes, length);
  }
}

class PairCostMemo {
public:
  struct Entry {
    double seconds;
    /// Whether `seconds` is the planned cost (else a lower bound on it).
    bool exact;
  };

  std::optional<Entry> lookup(mlir::Type type, const planner::Layout &src,
                              const planner::Layout &dst) const {
    std::string k = key(type, src, dst);
    std::shared_lock<std::shared_mutex> lock(mutex);
    auto it = entries.find(k);
    if (it == entries.end())
      return std::nullopt;
    return it->second;
  }

  void store(mlir::Type type, const planner::Layout &src,
             const planner::Layout &dst, Entry entry) {
    std::string k = key(type, src, dst);
    std::unique_lock<std::shared_mutex> lock(mutex);
    auto [it, inserted] = entries.try_emplace(std::move(k), entry);
    if (!inserted && entry.exact)
      it->second = entry;
  }

private:
  /// The type and both layouts, as bytes.
  static std::string key(mlir::Type type, const planner::Layout &src,
                         const planner::Layout &dst) {
    std::string bytes;
    appendKeyBytes(bytes, type);
    appendKeyBytes(bytes, src);
    appendKeyBytes(bytes, dst);
    return bytes;
  }

  /// Lookups (most calls) share it; stores take it alone.
  mutable std::shared_mutex mutex;
  std::unordered_map<std::string, Entry> entries;
};

} // namespace dist::partition

#endif // DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITION_PAIRCOSTMEMO_H
