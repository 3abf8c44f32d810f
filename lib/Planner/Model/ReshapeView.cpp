//===- ReshapeView.cpp - reshapes that move no data (semantics §2a) -------===//

#include "dist/Planner/ReshapeView.h"
#include "dist/Support/MixedRadix.h"

#include "Model/Syntax.h"

#include "llvm/ADT/Twine.h"

using namespace dist::planner;
using llvm::Error;
using llvm::Expected;
using llvm::Twine;

namespace {

Error fail(const Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), why);
}

using AxisLists = std::vector<AxisList>;

int64_t product(const Mesh &mesh, llvm::ArrayRef<unsigned> axes) {
  int64_t p = 1;
  for (unsigned axis : axes)
    p *= mesh.getAxisSize(axis);
  return p;
}

std::string names(const Mesh &mesh, llvm::ArrayRef<unsigned> axes) {
  std::string out = "{";
  for (size_t i = 0; i < axes.size(); ++i)
    out += (i ? ", " : "") + detail::quoteName(mesh.getAxis(axes[i]).name);
  return out + "}";
}

int64_t productOf(llvm::ArrayRef<int64_t> extents) {
  int64_t p = 1;
  for (int64_t m : extents)
    p *= m;
  return p;
}

/// Whether splitting dim `dim` of the row-major dims `extents` into
/// `parts` padded blocks gives every device the same run as splitting their
/// flattening: the dims before it must have extent 1 (else a device's run
/// would skip the padding), and the padded block times the trailing dims
/// must be the flattened padded block.
bool paddedRunMatches(llvm::ArrayRef<int64_t> extents, size_t dim,
                      int64_t parts) {
  for (size_t j = 0; j < dim; ++j)
    if (extents[j] != 1)
      return false;
  int64_t trailing = productOf(extents.drop_front(dim + 1));
  using dist::mixed_radix::ceilDiv;
  return ceilDiv(extents[dim] * trailing, parts) ==
         ceilDiv(extents[dim], parts) * trailing;
}

/// How the axes `axes` (P parts) of a contiguous run of extent
/// prod(extents) split the row-major dims `extents` so that each device's
/// block stays the same run: major-first, each dim fully split before the
/// next takes an axis.
Expected<AxisLists> splitRun(const Mesh &mesh, llvm::ArrayRef<unsigned> axes,
                             llvm::ArrayRef<int64_t> extents) {
  AxisLists out(extents.size());
  if (axes.empty())
    return out;
  int64_t total = productOf(extents);
  int64_t parts = product(mesh, axes);
  if (total % parts != 0) {
    // Padded blocks: only one dim can take the axes (earlier split dims
    // would need their blocks whole); the first of extent > 1.
    size_t dim = 0;
    while (dim + 1 < extents.size() && extents[dim] == 1)
      ++dim;
    if (extents.empty() || !paddedRunMatches(extents, dim, parts))
      return fail(names(mesh, axes) + " splits " + Twine(total) + " into " +
                  Twine(parts) +
                  " padded blocks, which are not whole blocks of the "
                  "reshaped dims");
    out[dim].assign(axes.begin(), axes.end());
    return out;
  }
  size_t next = 0;
  for (size_t j = 0; j < extents.size() && next < axes.size(); ++j) {
    int64_t p = 1;
    while (next < axes.size() &&
           extents[j] % (p * mesh.getAxisSize(axes[next])) == 0) {
      p *= mesh.getAxisSize(axes[next]);
      out[j].push_back(axes[next++]);
    }
    if (next < axes.size() && p != extents[j])
      return fail("axis " +
                  Twine(detail::quoteName(mesh.getAxis(axes[next]).name)) +
                  " would split a reshaped dim (extent " + Twine(extents[j]) +
                  ") that its major axes split into only " + Twine(p) +
                  " parts; a block is then not one run of the flattened dim");
  }
  if (next < axes.size())
    return fail(names(mesh, axes) + " has more parts than the reshaped dims "
                                    "have elements");
  return out;
}

/// The inverse of splitRun: the axes of the run that `dimAxes` on the
/// row-major dims `extents` amount to, if each device's block is one run.
Expected<AxisList> joinRun(const Mesh &mesh, const AxisLists &dimAxes,
                           llvm::ArrayRef<int64_t> extents) {
  AxisList axes;
  size_t last = 0;
  bool any = false;
  for (size_t j = 0; j < extents.size(); ++j)
    if (!dimAxes[j].empty()) {
      last = j;
      any = true;
    }
  if (!any)
    return axes;
  for (size_t j = 0; j < extents.size(); ++j) {
    int64_t p = product(mesh, dimAxes[j]);
    if (j < last && p != extents[j])
      return fail("dim of extent " + Twine(extents[j]) + " split by " +
                  names(mesh, dimAxes[j]) + " into " + Twine(p) +
                  " parts is followed by a split dim, so a block is not one "
                  "run of the flattened dim");
    if (j == last && extents[j] % p != 0 &&
        !paddedRunMatches(extents, j, product(mesh, axes) * p))
      return fail(names(mesh, dimAxes[j]) +
                  " leaves padded blocks in a dim that is flattened with "
                  "others");
    axes.insert(axes.end(), dimAxes[j].begin(), dimAxes[j].end());
  }
  return axes;
}

} // namespace

Error dist::planner::verifyReshapeDims(const ReshapeDims &dims) {
  if (dims.groups.size() != dims.collapsedShape.size())
    return fail("the reshape has " + Twine(dims.groups.size()) +
                " groups for a collapsed rank of " +
                Twine(dims.collapsedShape.size()));
  unsigned next = 0;
  for (size_t i = 0; i < dims.groups.size(); ++i) {
    if (dims.groups[i].empty())
      return fail("group " + Twine(i) + " is empty");
    std::vector<int64_t> extents;
    for (unsigned d : dims.groups[i]) {
      if (d != next || d >= dims.expandedShape.size())
        return fail("group " + Twine(i) +
                    " does not continue the expanded dims in order");
      extents.push_back(dims.expandedShape[next++]);
    }
    if (productOf(extents) != dims.collapsedShape[i])
      return fail("group " + Twine(i) + " multiplies to " +
                  Twine(productOf(extents)) + ", not " +
                  Twine(dims.collapsedShape[i]));
  }
  if (next != dims.expandedShape.size() && !dims.groups.empty())
    return fail("the groups cover " + Twine(next) + " of " +
                Twine(dims.expandedShape.size()) + " expanded dims");
  return Error::success();
}

Expected<Layout> dist::planner::expandedView(const Mesh &mesh,
                                             const Layout &collapsed,
                                             const ReshapeDims &dims) {
  if (Error e = verifyReshapeDims(dims))
    return std::move(e);
  if (Error e = verifyLayout(mesh, collapsed, dims.collapsedShape.size()))
    return std::move(e);
  Layout out = Layout::replicated(dims.expandedShape.size());
  out.partialAxes = collapsed.partialAxes;
  out.partialKind = collapsed.partialKind;
  for (size_t i = 0; i < dims.groups.size(); ++i) {
    const std::vector<unsigned> &group = dims.groups[i];
    const AxisList &axes = collapsed.dimAxes[i];
    auto prefix = [&](const Twine &why) {
      return fail("dim " + Twine(i) + ": " + why);
    };
    if (group.size() == 1) {
      out.dimAxes[group[0]] = axes;
      if (collapsed.isSegmented(i)) {
        out.segments.resize(out.getRank());
        out.segments[group[0]] = collapsed.segments[i];
      }
      continue;
    }
    std::vector<int64_t> extents;
    for (unsigned d : group)
      extents.push_back(dims.expandedShape[d]);
    size_t first = 0; // the expanded dims that split the run
    if (collapsed.isSegmented(i)) {
      const std::vector<int64_t> &segments = collapsed.segments[i];
      for (int64_t length : segments)
        if (length != segments.front())
          return prefix("its segments have different lengths, so they are "
                        "not the rows of an expanded dim");
      // The leading dims enumerate the segments.
      int64_t count = 1;
      while (first < extents.size() &&
             count < static_cast<int64_t>(segments.size()))
        count *= extents[first++];
      if (count != static_cast<int64_t>(segments.size()))
        return prefix("its " + Twine(segments.size()) +
                      " segments are not enumerated by leading expanded dims");
    }
    Expected<AxisLists> split = splitRun(
        mesh, axes, llvm::ArrayRef<int64_t>(extents).drop_front(first));
    if (!split)
      return prefix(llvm::toString(split.takeError()));
    for (size_t j = 0; j < split->size(); ++j)
      out.dimAxes[group[first + j]] = std::move((*split)[j]);
  }
  out.canonicalize();
  return out;
}

Expected<Layout> dist::planner::collapsedView(const Mesh &mesh,
                                              const Layout &expanded,
                                              const ReshapeDims &dims) {
  if (Error e = verifyReshapeDims(dims))
    return std::move(e);
  if (Error e = verifyLayout(mesh, expanded, dims.expandedShape.size()))
    return std::move(e);
  Layout out = Layout::replicated(dims.collapsedShape.size());
  out.partialAxes = expanded.partialAxes;
  out.partialKind = expanded.partialKind;
  for (size_t i = 0; i < dims.groups.size(); ++i) {
    const std::vector<unsigned> &group = dims.groups[i];
    auto prefix = [&](const Twine &why) {
      return fail("dims " + Twine(group.front()) + ".." + Twine(group.back()) +
                  ": " + why);
    };
    if (group.size() == 1) {
      out.dimAxes[i] = expanded.dimAxes[group[0]];
      if (expanded.isSegmented(group[0])) {
        out.segments.resize(out.getRank());
        out.segments[i] = expanded.segments[group[0]];
      }
      continue;
    }
    AxisLists dimAxes;
    std::vector<int64_t> extents;
    for (unsigned d : group) {
      if (expanded.isSegmented(d))
        return prefix("dim " + Twine(d) +
                      " has segments, which do not flatten with other dims");
      dimAxes.push_back(expanded.dimAxes[d]);
      extents.push_back(dims.expandedShape[d]);
    }
    // Unsplit leading dims of product K > 1 enumerate K equal segments of
    // the run the other dims make.
    size_t first = 0;
    while (first < group.size() && dimAxes[first].empty())
      ++first;
    if (first == group.size())
      continue;
    int64_t count =
        productOf(llvm::ArrayRef<int64_t>(extents).take_front(first));
    Expected<AxisList> axes =
        joinRun(mesh, AxisLists(dimAxes.begin() + first, dimAxes.end()),
                llvm::ArrayRef<int64_t>(extents).drop_front(first));
    if (!axes)
      return prefix(llvm::toString(axes.takeError()));
    out.dimAxes[i] = std::move(*axes);
    if (count > 1) {
      if (dims.collapsedShape[i] == 0)
        return prefix("a segmented view needs segments of at least one row");
      out.segments.resize(out.getRank());
      out.segments[i].assign(count, dims.collapsedShape[i] / count);
    }
  }
  out.canonicalize();
  return out;
}
