//===- Layout.cpp - Layout syntax, verification and equality --------------===//

#include "dist/Planner/Layout.h"
#include "Model/Syntax.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace dist::planner;
using llvm::createStringError;
using llvm::Error;
using llvm::Expected;
using llvm::inconvertibleErrorCode;

std::optional<ReductionKind>
dist::planner::parseReductionKind(llvm::StringRef text) {
  if (text == "sum")
    return ReductionKind::Sum;
  if (text == "max")
    return ReductionKind::Max;
  if (text == "min")
    return ReductionKind::Min;
  if (text == "prod")
    return ReductionKind::Prod;
  if (text == "avg")
    return ReductionKind::Avg;
  return std::nullopt;
}

llvm::StringRef dist::planner::stringifyReductionKind(ReductionKind kind) {
  switch (kind) {
  case ReductionKind::Sum:
    return "sum";
  case ReductionKind::Max:
    return "max";
  case ReductionKind::Min:
    return "min";
  case ReductionKind::Prod:
    return "prod";
  case ReductionKind::Avg:
    return "avg";
  }
  return "sum";
}

static AxisList sortedCopy(llvm::ArrayRef<unsigned> v) {
  AxisList out(v.begin(), v.end());
  std::sort(out.begin(), out.end());
  return out;
}

bool Layout::hasSegments() const {
  for (const std::vector<int64_t> &list : segments)
    if (!list.empty())
      return true;
  return false;
}

bool Layout::operator==(const Layout &other) const {
  if (dimAxes != other.dimAxes ||
      partialAxes.size() != other.partialAxes.size())
    return false;
  for (unsigned d = 0; d < dimAxes.size(); ++d) {
    static const std::vector<int64_t> none;
    const std::vector<int64_t> &a = d < segments.size() ? segments[d] : none;
    const std::vector<int64_t> &b =
        d < other.segments.size() ? other.segments[d] : none;
    if (a != b)
      return false;
  }
  if (partialAxes.empty())
    return true;
  return partialKind == other.partialKind &&
         sortedCopy(partialAxes) == sortedCopy(other.partialAxes);
}

bool Layout::isPartial(unsigned axis) const {
  return std::find(partialAxes.begin(), partialAxes.end(), axis) !=
         partialAxes.end();
}

std::optional<unsigned> Layout::dimOf(unsigned axis) const {
  for (unsigned d = 0; d < dimAxes.size(); ++d)
    if (std::find(dimAxes[d].begin(), dimAxes[d].end(), axis) !=
        dimAxes[d].end())
      return d;
  return std::nullopt;
}

int64_t Layout::shardCount(const Mesh &mesh, unsigned dim) const {
  int64_t count = 1;
  if (dim >= dimAxes.size())
    return count;
  for (unsigned axis : dimAxes[dim])
    if (axis < mesh.getNumAxes())
      count *= mesh.getAxisSize(axis);
  return count;
}

void Layout::canonicalize() {
  std::sort(partialAxes.begin(), partialAxes.end());
  // A dim without axes holds the same data with or without segments, and a
  // single segment is the contiguous dim (semantics §2).
  bool any = false;
  for (unsigned d = 0; d < segments.size(); ++d) {
    if (d >= dimAxes.size() || dimAxes[d].empty() || segments[d].size() < 2)
      segments[d].clear();
    any |= !segments[d].empty();
  }
  if (!any)
    segments.clear();
  else
    segments.resize(dimAxes.size());
}

static std::string axisName(const Mesh &mesh, unsigned axis) {
  if (axis < mesh.getNumAxes())
    return detail::quoteName(mesh.getAxis(axis).name);
  return "#" + std::to_string(axis);
}

Error dist::planner::verifyLayout(const Mesh &mesh, const Layout &layout,
                                  size_t tensorRank) {
  auto fail = [](const llvm::Twine &msg) -> Error {
    return createStringError(inconvertibleErrorCode(), msg);
  };
  if (layout.dimAxes.size() != tensorRank)
    return fail("layout has " + llvm::Twine(layout.dimAxes.size()) +
                " dims but the tensor has rank " + llvm::Twine(tensorRank));
  // Where each axis was first seen (kUnseen, a dim, or kPartial), to name
  // both places on a duplicate; text is built only for an error, since the
  // planner verifies every layout it is handed.
  constexpr int kUnseen = -1, kPartial = -2;
  llvm::SmallVector<int, 16> seenAt(mesh.getNumAxes(), kUnseen);
  auto place = [](int where) {
    return where == kPartial ? std::string("partial")
                             : "dim " + std::to_string(where);
  };
  auto visit = [&](unsigned axis, int where) -> Error {
    if (axis >= mesh.getNumAxes())
      return fail("layout refers to mesh axis #" + llvm::Twine(axis) +
                  " but the mesh has " + llvm::Twine(mesh.getNumAxes()) +
                  " axes");
    if (seenAt[axis] != kUnseen)
      return fail("mesh axis " + axisName(mesh, axis) +
                  " appears more than once in the layout (" +
                  place(seenAt[axis]) + " and " + place(where) + ")");
    seenAt[axis] = where;
    return Error::success();
  };
  for (unsigned d = 0; d < layout.dimAxes.size(); ++d)
    for (unsigned axis : layout.dimAxes[d])
      if (Error e = visit(axis, int(d)))
        return e;
  for (unsigned axis : layout.partialAxes)
    if (Error e = visit(axis, kPartial))
      return e;
  if (layout.segments.size() > tensorRank)
    return fail("layout has segments for " +
                llvm::Twine(layout.segments.size()) +
                " dims but the tensor has rank " + llvm::Twine(tensorRank));
  for (unsigned d = 0; d < layout.segments.size(); ++d)
    for (int64_t n : layout.segments[d])
      if (n < 1)
        return fail("dim " + llvm::Twine(d) + " has a segment of " +
                    llvm::Twine(n) + " elements; segments must be >= 1");
  return Error::success();
}

Error dist::planner::verifyLayoutShape(const Layout &layout,
                                       llvm::ArrayRef<int64_t> shape) {
  for (unsigned d = 0; d < layout.segments.size() && d < shape.size(); ++d) {
    if (layout.segments[d].empty())
      continue;
    int64_t sum = 0;
    for (int64_t n : layout.segments[d])
      if (llvm::AddOverflow(sum, n, sum))
        return createStringError(inconvertibleErrorCode(),
                                 "dim " + llvm::Twine(d) +
                                     "'s segments overflow 64 bits");
    if (sum != shape[d])
      return createStringError(
          inconvertibleErrorCode(),
          "dim " + llvm::Twine(d) + "'s segments sum to " + llvm::Twine(sum) +
              " but the dim has extent " + llvm::Twine(shape[d]));
  }
  return Error::success();
}

Expected<Layout> dist::planner::parseLayout(const Mesh &mesh,
                                            llvm::StringRef body) {
  detail::Cursor cur(body, "layout");
  auto parseAxis = [&](unsigned &axis) -> Error {
    size_t at = (cur.skipSpace(), cur.position());
    std::string name;
    if (Error e = cur.parseString(name))
      return e;
    std::optional<unsigned> index = mesh.findAxis(name);
    if (!index)
      return createStringError(inconvertibleErrorCode(),
                               "invalid layout '" + body +
                                   "': " + detail::quoteName(name) +
                                   " is not an axis of mesh " + mesh.str() +
                                   " (column " + llvm::Twine(at + 1) + ")");
    axis = *index;
    return Error::success();
  };
  auto parseAxisSet = [&](AxisList &axes) -> Error {
    if (Error e = cur.expect('{'))
      return e;
    if (cur.tryConsume('}'))
      return Error::success();
    do {
      unsigned axis;
      if (Error e = parseAxis(axis))
        return e;
      axes.push_back(axis);
    } while (cur.tryConsume(','));
    return cur.expect('}');
  };

  Layout layout;
  if (Error e = cur.expect('['))
    return std::move(e);
  if (!cur.tryConsume(']')) {
    do {
      layout.dimAxes.emplace_back();
      if (Error e = parseAxisSet(layout.dimAxes.back()))
        return std::move(e);
      // `{"tp"} segments [4096, 1024, 1024]`
      if (cur.tryKeyword("segments")) {
        layout.segments.resize(layout.dimAxes.size());
        std::vector<int64_t> &list = layout.segments.back();
        if (Error e = cur.expect('['))
          return std::move(e);
        do {
          int64_t n;
          if (Error e = cur.parseInt(n))
            return std::move(e);
          list.push_back(n);
        } while (cur.tryConsume(','));
        if (Error e = cur.expect(']'))
          return std::move(e);
      }
    } while (cur.tryConsume(','));
    if (Error e = cur.expect(']'))
      return std::move(e);
  }
  if (cur.tryConsume(',')) {
    if (!cur.tryKeyword("partial"))
      return cur.error("expected 'partial'");
    if (Error e = cur.expect('='))
      return std::move(e);
    std::string kindText;
    if (Error e = cur.parseIdent(kindText))
      return std::move(e);
    std::optional<ReductionKind> kind = parseReductionKind(kindText);
    if (!kind)
      return cur.error("unknown reduction kind '" + kindText +
                       "' (expected sum, max, min, prod or avg)");
    layout.partialKind = *kind;
    if (Error e = parseAxisSet(layout.partialAxes))
      return std::move(e);
    if (layout.partialAxes.empty())
      return cur.error("'partial' needs at least one axis");
  }
  if (Error e = cur.expectEnd())
    return std::move(e);
  if (Error e = verifyLayout(mesh, layout, layout.dimAxes.size()))
    return createStringError(inconvertibleErrorCode(),
                             "invalid layout '" + body +
                                 "': " + llvm::toString(std::move(e)));
  layout.canonicalize();
  return layout;
}

std::string dist::planner::printLayout(const Mesh &mesh, const Layout &layout) {
  auto printSet = [&](std::string &out, llvm::ArrayRef<unsigned> axes) {
    out += "{";
    for (size_t i = 0; i < axes.size(); ++i) {
      if (i)
        out += ", ";
      out += axisName(mesh, axes[i]);
    }
    out += "}";
  };
  std::string out = "[";
  for (size_t d = 0; d < layout.dimAxes.size(); ++d) {
    if (d)
      out += ", ";
    printSet(out, layout.dimAxes[d]);
    if (layout.isSegmented(d)) {
      out += " segments [";
      for (size_t i = 0; i < layout.segments[d].size(); ++i)
        out += (i ? ", " : "") + std::to_string(layout.segments[d][i]);
      out += "]";
    }
  }
  out += "]";
  if (!layout.partialAxes.empty()) {
    out += ", partial = ";
    out += stringifyReductionKind(layout.partialKind);
    out += " ";
    printSet(out, sortedCopy(layout.partialAxes));
  }
  return out;
}
