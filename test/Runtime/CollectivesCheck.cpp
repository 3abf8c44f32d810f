//===- CollectivesCheck.cpp - every collective on N ranks -----------------===//
//
//   dist-mpirun -np N dist-rt-collectives-check [--backend mpi|nccl]
//       [--strided-memory all|shared]
//
// For several meshes of the world size (with and without device tables) and
// groups over their axes in several orders, runs every collective for every
// dtype and reduction through the C ABI, plus in-place forms, larger
// messages and whole-buffer permutes, and checks every element on every rank
// against values this program computes on its own: group membership by
// brute force over the mesh definition (not the runtime's code), expected
// results from the inputs' defining formula in int64/double arithmetic.
// Inputs are small integers, so every reduction is exact in every dtype and
// the expected value does not depend on the reduction order.
//
// The strided all-to-all is run with its buffers in runtime memory
// (distRtAlloc, which the mpi backend can share on the node) and in plain
// host memory, in every combination and with members that differ, so that
// each of its paths runs: a push or a pull between the members' memory, and
// MPI datatypes when neither side is shared everywhere. --strided-memory
// shared keeps the combinations in which the single-copy path applies (for
// DIST_RT_STRIDED_ALLTOALL=shm, which fails any other).
//
// Prints one summary line from rank 0 and exits non-zero if any check
// failed on any rank.
//
//===----------------------------------------------------------------------===//

#include "ElementCodec.h"
#include "dist/Runtime/DistRuntime.h"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace {

int gRank = 0, gSize = 1;
bool gDevice = false;     // buffers live on a GPU (nccl)
bool gSharedOnly = false; // --strided-memory shared
long gCalls = 0, gChecked = 0, gFailures = 0;
std::string gContext;

const char *kDTypeNames[] = {"f16", "bf16", "f32", "f64", "i32",
                             "i64", "i8",   "i16", "i1"};
const char *kOpNames[] = {"sum", "max", "min", "prod", "avg"};
const int kNumDTypes = 9;

using dist::rt_test::decode;
using dist::rt_test::elemSize;
using dist::rt_test::encode;

bool isInt(int dt) { return dt >= DIST_RT_I32; }

// Input of world rank r at element i for a given operation (salt varies it
// between calls, so that stale data from a previous call is caught).
double inputValue(int dt, int op, int r, int64_t i, int salt) {
  if (dt == DIST_RT_I1) // booleans: max = or, min = prod = and
    return (r * 3 + i + salt) % 2 == 0 ? 1 : 0;
  // Integer sums and means of values near the type's limits: a group's sum
  // wraps in i8 and i16 (a sum must wrap, not saturate as Open MPI's op/avx
  // does, and a mean must not be taken of the wrapped sum).
  if ((op == DIST_RT_SUM || op == DIST_RT_AVG) && isInt(dt)) {
    double scale = dt == DIST_RT_I16 ? 300 : 1;
    return scale *
           (static_cast<double>((r * 37 + i * 11 + salt * 5) % 199) - 99);
  }
  switch (op) {
  case DIST_RT_SUM:
  case DIST_RT_AVG:
    return static_cast<double>((r * 7 + i * 3 + salt) % 11) - 5; // [-5, 5]
  case DIST_RT_MAX:
  case DIST_RT_MIN:
    return static_cast<double>((r * 37 + i * 11 + salt * 5) % 199) - 99;
  case DIST_RT_PROD: {
    // Factors -1, 1 or 2, with 2 only on ranks 0..2: |product| <= 8 fits i8.
    int64_t k = (r + i + salt) % 3;
    if (k == 0 && r < 3)
      return 2;
    return k == 1 ? -1 : 1;
  }
  default: // plain data movement: [-99, 99] fits i8 and is exact in bf16
    return static_cast<double>((r * 37 + i * 11 + salt * 5) % 199) - 99;
  }
}

double combine(int op, double a, double b) {
  switch (op) {
  case DIST_RT_SUM:
  case DIST_RT_AVG:
    return a + b;
  case DIST_RT_MAX:
    return std::max(a, b);
  case DIST_RT_MIN:
    return std::min(a, b);
  case DIST_RT_PROD:
    return a * b;
  }
  return NAN;
}

double reduceExpected(int dt, int op, const std::vector<int> &members,
                      int64_t i, int salt) {
  double acc = inputValue(dt, op, members[0], i, salt);
  for (size_t m = 1; m < members.size(); ++m)
    acc = combine(op, acc, inputValue(dt, op, members[m], i, salt));
  if (op == DIST_RT_AVG) {
    double p = static_cast<double>(members.size());
    // Integers: truncation toward zero; floats: exact (p is a power of 2).
    acc = isInt(dt) ? std::trunc(acc / p) : acc / p;
  } else if (isInt(dt) && dt != DIST_RT_I1) {
    // Integer sums and products wrap to the width.
    int64_t exact = static_cast<int64_t>(acc);
    if (dt == DIST_RT_I8)
      acc = static_cast<int8_t>(exact);
    else if (dt == DIST_RT_I16)
      acc = static_cast<int16_t>(exact);
    else if (dt == DIST_RT_I32)
      acc = static_cast<int32_t>(exact);
  }
  return acc;
}

//===--------------------------------------------------------------------===//
// Buffers in the backend's memory
//===--------------------------------------------------------------------===//

/// Where a buffer lives: the backend's (device memory for nccl, host memory
/// the node can share for mpi), or plain host memory (mpi only).
enum class Memory { Default, Runtime, Host };

struct Buffer {
  std::vector<char> host;
  void *dev = nullptr;
  size_t bytes = 0;
  bool runtime = false;
  explicit Buffer(size_t n, Memory m = Memory::Default)
      : host(n), bytes(n), runtime(gDevice || m == Memory::Runtime) {
    dev = runtime ? distRtAlloc(static_cast<int64_t>(n)) : host.data();
  }
  ~Buffer() {
    if (runtime)
      distRtFree(dev);
  }
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
  void upload() {
    if (runtime && bytes)
      distRtMemcpy(dev, host.data(), static_cast<int64_t>(bytes),
                   DIST_RT_COPY_HOST_TO_DEVICE, nullptr);
  }
  void download() {
    if (runtime) {
      distRtSynchronize(nullptr);
      if (bytes)
        distRtMemcpy(host.data(), dev, static_cast<int64_t>(bytes),
                     DIST_RT_COPY_DEVICE_TO_HOST, nullptr);
      distRtSynchronize(nullptr);
    }
  }
  void *at(size_t offset) { return static_cast<char *>(dev) + offset; }
};

void fill(Buffer &b, int dt, int64_t count, double (*f)(int64_t, void *),
          void *ctx) {
  for (int64_t i = 0; i < count; ++i)
    encode(dt, f(i, ctx), b.host.data() + i * elemSize(dt));
  b.upload();
}

void expectElem(const Buffer &b, int dt, int64_t i, double want,
                const char *what) {
  ++gChecked;
  double got = decode(dt, b.host.data() + i * elemSize(dt));
  if (got == want)
    return;
  if (++gFailures <= 20)
    std::fprintf(stderr, "FAIL rank %d: %s: %s element %lld: got %g, want %g\n",
                 gRank, gContext.c_str(), what, static_cast<long long>(i), got,
                 want);
}

//===--------------------------------------------------------------------===//
// Meshes and groups, computed independently of the runtime
//===--------------------------------------------------------------------===//

struct TestMesh {
  std::vector<int64_t> sizes;
  std::vector<int64_t> devices; // empty: identity
  int64_t handle = -1;

  int64_t rankAt(int64_t linear) const {
    return devices.empty() ? linear : devices[linear];
  }
  std::vector<int64_t> coordsOfLinear(int64_t l) const {
    std::vector<int64_t> c(sizes.size());
    for (size_t a = sizes.size(); a-- > 0;) {
      c[a] = l % sizes[a];
      l /= sizes[a];
    }
    return c;
  }
  // Members of `rank`'s group over `axes`, ordered by the combined index.
  std::vector<int> members(const std::vector<int64_t> &axes, int rank) const {
    std::vector<int64_t> mine;
    for (int64_t l = 0; l < gSize; ++l)
      if (rankAt(l) == rank)
        mine = coordsOfLinear(l);
    std::vector<std::pair<int64_t, int>> found;
    for (int64_t l = 0; l < gSize; ++l) {
      std::vector<int64_t> c = coordsOfLinear(l);
      bool sameElsewhere = true;
      for (size_t a = 0; a < sizes.size(); ++a)
        if (std::find(axes.begin(), axes.end(), (int64_t)a) == axes.end())
          sameElsewhere = sameElsewhere && c[a] == mine[a];
      if (!sameElsewhere)
        continue;
      int64_t index = 0;
      for (int64_t a : axes)
        index = index * sizes[a] + c[a];
      found.push_back({index, static_cast<int>(rankAt(l))});
    }
    std::sort(found.begin(), found.end());
    std::vector<int> out;
    for (auto &f : found)
      out.push_back(f.second);
    return out;
  }
  std::string str() const {
    std::string s = "mesh [";
    for (size_t a = 0; a < sizes.size(); ++a)
      s += (a ? "," : "") + std::to_string(sizes[a]);
    s += "]";
    if (!devices.empty()) {
      s += " devices [";
      for (size_t i = 0; i < devices.size(); ++i)
        s += (i ? "," : "") + std::to_string(devices[i]);
      s += "]";
    }
    return s;
  }
};

std::vector<TestMesh> meshesFor(int n) {
  std::vector<TestMesh> out;
  out.push_back({{n}, {}});
  std::vector<int64_t> reversed(n);
  for (int i = 0; i < n; ++i)
    reversed[i] = n - 1 - i;
  if (n >= 2)
    out.push_back({{1, n}, reversed});
  if (n >= 4)
    out.push_back({{2, n / 2}, {}});
  if (n >= 4)
    out.push_back({{n / 2, 2}, reversed});
  if (n == 8)
    out.push_back({{2, 2, 2}, {6, 1, 4, 3, 2, 5, 0, 7}});
  return out;
}

std::vector<std::vector<int64_t>> groupsFor(const TestMesh &m) {
  int k = static_cast<int>(m.sizes.size());
  std::vector<std::vector<int64_t>> out;
  for (int a = 0; a < k; ++a)
    out.push_back({a});
  if (k >= 2) {
    std::vector<int64_t> all(k), rev(k);
    std::iota(all.begin(), all.end(), 0);
    std::iota(rev.rbegin(), rev.rend(), 0);
    out.push_back(all);
    out.push_back(rev);
  }
  if (k == 3)
    out.push_back({2, 0});
  return out;
}

//===--------------------------------------------------------------------===//
// The checks
//===--------------------------------------------------------------------===//

void checkGroupShape(int64_t g, const std::vector<int> &members) {
  ++gChecked;
  int64_t size = distRtGroupSize(g), index = distRtGroupRank(g);
  auto it = std::find(members.begin(), members.end(), gRank);
  if (size != (int64_t)members.size() || it == members.end() ||
      index != it - members.begin()) {
    ++gFailures;
    std::fprintf(stderr, "FAIL rank %d: %s: group size %lld index %lld\n",
                 gRank, gContext.c_str(), (long long)size, (long long)index);
  }
}

struct Ctx {
  int dt, op, rank, salt;
};

double inputAt(int64_t i, void *p) {
  Ctx *c = static_cast<Ctx *>(p);
  return inputValue(c->dt, c->op, c->rank, i, c->salt);
}

// all_gather / all_to_all of `n` elements per member.
void checkMovement(int64_t g, const std::vector<int> &members, int dt,
                   int64_t n, bool allToAll, bool inPlace, int salt) {
  const int p = static_cast<int>(members.size());
  const int me = static_cast<int>(
      std::find(members.begin(), members.end(), gRank) - members.begin());
  const size_t es = elemSize(dt);
  const int op = -1;
  Buffer recv(p * n * es);
  ++gCalls;
  if (!allToAll) {
    // Chunk i of member r is input(r, i).
    Ctx c{dt, op, gRank, salt};
    Buffer send(n * es);
    fill(send, dt, n, inputAt, &c);
    if (inPlace) {
      for (int64_t i = 0; i < n; ++i)
        encode(dt, inputValue(dt, op, gRank, i, salt),
               recv.host.data() + (me * n + i) * es);
      recv.upload();
      distRtAllGather(g, recv.at(me * n * es), recv.dev, n, dt, nullptr);
    } else {
      distRtAllGather(g, send.dev, recv.dev, n, dt, nullptr);
    }
    recv.download();
    for (int j = 0; j < p; ++j)
      for (int64_t i = 0; i < n; ++i)
        expectElem(recv, dt, j * n + i, inputValue(dt, op, members[j], i, salt),
                   "all_gather");
  } else {
    // Member r's element (j, i) — destined for member j — is
    // input(r, j*n + i); member j receives it in chunk r.
    Ctx c{dt, op, gRank, salt};
    Buffer send(p * n * es);
    Buffer &src = inPlace ? recv : send;
    fill(src, dt, p * n, inputAt, &c);
    distRtAllToAll(g, src.dev, recv.dev, n, dt, nullptr);
    recv.download();
    for (int r = 0; r < p; ++r)
      for (int64_t i = 0; i < n; ++i)
        expectElem(recv, dt, r * n + i,
                   inputValue(dt, op, members[r], me * n + i, salt),
                   "all_to_all");
  }
}

// distRtAllToAllStrided over a 3-D chunk box `box`, each side given by its
// element strides, chunk stride and buffer size (elements). Member r's send
// element at offset o is input(r, o); member `me` must find, at chunk r of
// its recv box, member r's chunk `me`.
struct StridedGeometry {
  const char *name;
  int64_t box[3];
  int64_t sendStrides[3], sendChunk, sendElements;
  int64_t recvStrides[3], recvChunk, recvElements;
};

/// Where one call keeps its buffers, per member.
struct MemoryPlan {
  const char *name;
  Memory (*send)(int member), (*recv)(int member);
  bool shared; // the single-copy path applies
};

void checkStridedAllToAll(int64_t g, const std::vector<int> &members, int dt,
                          const StridedGeometry &geo, const MemoryPlan &mem,
                          int salt) {
  const int p = static_cast<int>(members.size());
  const int me = static_cast<int>(
      std::find(members.begin(), members.end(), gRank) - members.begin());
  const size_t es = elemSize(dt);
  gContext = std::string("strided all_to_all ") + geo.name + " " +
             kDTypeNames[dt] + " (" + mem.name + ")";
  Ctx c{dt, -1, gRank, salt};
  Buffer send(geo.sendElements * es, mem.send(me)),
      recv(geo.recvElements * es, mem.recv(me));
  fill(send, dt, geo.sendElements, inputAt, &c);
  // Sentinel: elements outside the recv boxes must stay as they are.
  const double sentinel = dt == DIST_RT_I1 ? 1 : 42;
  for (int64_t i = 0; i < geo.recvElements; ++i)
    encode(dt, sentinel, recv.host.data() + i * es);
  recv.upload();
  ++gCalls;
  distRtAllToAllStrided(g, 3, geo.box, send.dev, geo.sendStrides, geo.sendChunk,
                        recv.dev, geo.recvStrides, geo.recvChunk, dt, nullptr);
  recv.download();
  std::vector<bool> covered(geo.recvElements, false);
  for (int r = 0; r < p; ++r)
    for (int64_t a = 0; a < geo.box[0]; ++a)
      for (int64_t b = 0; b < geo.box[1]; ++b)
        for (int64_t k = 0; k < geo.box[2]; ++k) {
          int64_t from = me * geo.sendChunk + a * geo.sendStrides[0] +
                         b * geo.sendStrides[1] + k * geo.sendStrides[2];
          int64_t to = r * geo.recvChunk + a * geo.recvStrides[0] +
                       b * geo.recvStrides[1] + k * geo.recvStrides[2];
          covered[to] = true;
          expectElem(recv, dt, to, inputValue(dt, -1, members[r], from, salt),
                     "strided all_to_all");
        }
  for (int64_t i = 0; i < geo.recvElements; ++i)
    if (!covered[i])
      expectElem(recv, dt, i, sentinel, "strided all_to_all (untouched)");
}

void checkStridedAllToAlls(int64_t g, const std::vector<int> &members,
                           int &salt) {
  const int64_t p = static_cast<int64_t>(members.size());
  const int64_t R = 5, C = 3; // odd: chunks never line up with vector widths
  const StridedGeometry geometries[] = {
      // [R, p*C] rows -> column blocks [p*R, C]: strided send, plain recv.
      {"rows->columns",
       {1, R, C},
       {0, p * C, 1},
       C,
       R * p * C,
       {0, C, 1},
       R * C,
       p * R * C},
      // The inverse: plain send, column blocks land at column offsets.
      {"columns->rows",
       {1, R, C},
       {0, C, 1},
       R * C,
       p * R * C,
       {0, p * C, 1},
       C,
       R * p * C},
      // 3-D, both sides strided: [2, p*R, C] split on dim 1 ->
      // [2, R, p*C] split on dim 2.
      {"3-D both strided",
       {2, R, C},
       {p * R * C, C, 1},
       R * C,
       2 * p * R * C,
       {R * p * C, p * C, 1},
       C,
       2 * R * p * C},
      // Recv boxes with gaps between rows: the gaps keep their contents.
      {"gapped recv",
       {1, R, C},
       {0, p * C, 1},
       C,
       R * p * C,
       {0, C + 2, 1},
       R * (C + 2),
       p * R * (C + 2)},
      // An all_gather along an inner dim (DistToRuntime): every chunk of
      // the send side is the whole block (chunk stride 0), received at its
      // column offset.
      {"gather into columns",
       {1, R, C},
       {0, C, 1},
       0,
       R * C,
       {0, p * C, 1},
       C,
       R * p * C},
      // The same along the middle dim of a 3-D block.
      {"3-D gather on dim 1",
       {2, R, C},
       {R * C, C, 1},
       0,
       2 * R * C,
       {p * R * C, C, 1},
       R * C,
       2 * p * R * C},
      // Large enough to leave MPI's eager protocol.
      {"large rows->columns",
       {1, 700, 64},
       {0, p * 64, 1},
       64,
       700 * p * 64,
       {0, 64, 1},
       700 * 64,
       p * 700 * 64},
  };
  auto runtime = [](int) { return Memory::Runtime; };
  auto host = [](int) { return Memory::Host; };
  auto runtimeOnEven = [](int m) {
    return m % 2 == 0 ? Memory::Runtime : Memory::Host;
  };
  const MemoryPlan plans[] = {
      {"both sides runtime memory", runtime, runtime, true},
      {"send runtime, recv host", runtime, host, true},
      {"send host, recv runtime", host, runtime, true},
      {"both sides host memory", host, host, false},
      // With more than one member, neither side is shared by all of them.
      {"runtime memory on even members", runtimeOnEven, runtimeOnEven, p == 1},
  };
  for (const MemoryPlan &mem : plans) {
    if (gDevice && &mem != &plans[0])
      break; // device buffers are runtime memory
    if (gSharedOnly && !mem.shared)
      continue;
    for (const StridedGeometry &geo : geometries)
      for (int dt : {DIST_RT_F32, DIST_RT_BF16, DIST_RT_I64, DIST_RT_I8})
        checkStridedAllToAll(g, members, dt, geo, mem, ++salt);
  }
}

void checkReduction(int64_t g, const std::vector<int> &members, int dt, int op,
                    int64_t n, bool scatter, bool inPlace, int salt) {
  const int p = static_cast<int>(members.size());
  const int me = static_cast<int>(
      std::find(members.begin(), members.end(), gRank) - members.begin());
  const size_t es = elemSize(dt);
  const int64_t inCount = scatter ? p * n : n;
  Ctx c{dt, op, gRank, salt};
  Buffer send(inCount * es);
  fill(send, dt, inCount, inputAt, &c);
  Buffer recv(n * es);
  ++gCalls;
  if (scatter)
    distRtReduceScatter(g, send.dev, inPlace ? send.dev : recv.dev, n, dt, op,
                        nullptr);
  else
    distRtAllReduce(g, send.dev, inPlace ? send.dev : recv.dev, n, dt, op,
                    nullptr);
  Buffer &out = inPlace ? send : recv;
  out.download();
  const int64_t base = scatter ? me * n : 0;
  for (int64_t i = 0; i < n; ++i)
    expectElem(out, dt, i, reduceExpected(dt, op, members, base + i, salt),
               scatter ? "reduce_scatter" : "all_reduce");
}

bool backendReduces(int dt, int op, const std::string &backend) {
  if (dt == DIST_RT_I1 && (op == DIST_RT_SUM || op == DIST_RT_AVG))
    return false; // not defined on booleans (DistRuntime.h)
  if (backend == "nccl" && dt == DIST_RT_I16)
    return false; // NCCL has no 16-bit integer type
  return true;
}

// Reductions large enough that the mpi backend runs them as an all-to-all
// plus local reductions: a reduce-scatter of 128 KiB or more, an all-reduce
// of 8 MiB or more (that plus an all-gather, when the group size divides
// the count). Once per group size: the reduce-scatter in every dtype and
// reduction, and all-reduces in a few dtypes, in place, and with a count
// that does not divide (MPI's own algorithm). Every group: a reduce-scatter
// in place.
void checkLargeReductions(int64_t g, const std::vector<int> &members,
                          const std::string &backend, int &salt) {
  static std::set<size_t> sweptSizes;
  const std::string groupContext = gContext;
  const int64_t p = static_cast<int64_t>(members.size());
  const int64_t whole = 131072;       // elements: >= 128 KiB in every dtype
  const int64_t allReduced = 4 << 20; // elements: >= 8 MiB in 2-byte types
  if (sweptSizes.insert(members.size()).second) {
    for (int dt = 0; dt < kNumDTypes; ++dt)
      for (int op = 0; op < 5; ++op) {
        if (!backendReduces(dt, op, backend))
          continue;
        gContext =
            groupContext + " large " + kDTypeNames[dt] + " " + kOpNames[op];
        checkReduction(g, members, dt, op, whole / p, true, false, ++salt);
      }
    gContext = groupContext + " all-reduce of 8 MiB or more";
    checkReduction(g, members, DIST_RT_F32, DIST_RT_SUM, allReduced, false,
                   false, ++salt);
    checkReduction(g, members, DIST_RT_F16, DIST_RT_MAX, allReduced, false,
                   false, ++salt);
    checkReduction(g, members, DIST_RT_BF16, DIST_RT_AVG, allReduced, false,
                   true, ++salt);
    gContext = groupContext + " all-reduce of 8 MiB or more, uneven count";
    checkReduction(g, members, DIST_RT_F32, DIST_RT_SUM, allReduced + 1, false,
                   false, ++salt);
  }
  gContext = groupContext + " large in-place";
  checkReduction(g, members, DIST_RT_F32, DIST_RT_SUM, whole / p, true, true,
                 ++salt);
  gContext = groupContext;
}

void checkGroup(const TestMesh &m, const std::vector<int64_t> &axes,
                const std::string &backend, int &salt) {
  int64_t g =
      distRtGroup(m.handle, static_cast<int64_t>(axes.size()), axes.data());
  std::vector<int> members = m.members(axes, gRank);
  gContext = m.str() + " axes [";
  for (size_t i = 0; i < axes.size(); ++i)
    gContext += (i ? "," : "") + std::to_string(axes[i]);
  gContext += "]";
  const std::string groupContext = gContext;
  checkGroupShape(g, members);
  const int64_t n = 3; // odd, so chunks do not line up with vector widths
  for (int dt = 0; dt < kNumDTypes; ++dt) {
    gContext = groupContext + " " + kDTypeNames[dt];
    checkMovement(g, members, dt, n, false, false, ++salt);
    checkMovement(g, members, dt, n, true, false, ++salt);
    for (int op = 0; op < 5; ++op) {
      if (!backendReduces(dt, op, backend))
        continue;
      gContext = groupContext + " " + kDTypeNames[dt] + " " + kOpNames[op];
      checkReduction(g, members, dt, op, n, true, false, ++salt);
      checkReduction(g, members, dt, op, n, false, false, ++salt);
    }
  }
  // In place, and messages large enough to leave MPI's eager protocol.
  gContext = groupContext + " in-place";
  checkMovement(g, members, DIST_RT_F32, 5, false, true, ++salt);
  checkMovement(g, members, DIST_RT_I32, 5, true, true, ++salt);
  checkReduction(g, members, DIST_RT_F64, DIST_RT_SUM, 5, true, true, ++salt);
  checkReduction(g, members, DIST_RT_BF16, DIST_RT_AVG, 5, false, true, ++salt);
  checkStridedAllToAlls(g, members, salt);
  gContext = groupContext + " large";
  checkMovement(g, members, DIST_RT_F32, 20000, false, false, ++salt);
  checkMovement(g, members, DIST_RT_BF16, 20000, true, false, ++salt);
  checkReduction(g, members, DIST_RT_F16, DIST_RT_SUM, 20000, true, false,
                 ++salt);
  checkReduction(g, members, DIST_RT_I64, DIST_RT_MAX, 20000, false, false,
                 ++salt);
  checkLargeReductions(g, members, backend, salt);
}

// Permute with the table "rank r receives from src[r]".
void checkPermute(int64_t mesh, const std::vector<int64_t> &src, int dt,
                  int64_t n, bool inPlace, int salt, const char *what) {
  gContext = std::string("permute ") + what;
  std::vector<int64_t> offsets{0}, dests;
  for (int s = 0; s < gSize; ++s) {
    for (int r = 0; r < gSize; ++r)
      if (src[r] == s && r != s)
        dests.push_back(r);
    offsets.push_back(static_cast<int64_t>(dests.size()));
  }
  const size_t es = elemSize(dt);
  Ctx c{dt, -1, gRank, salt};
  Buffer send(n * es), recv(n * es);
  fill(send, dt, n, inputAt, &c);
  // Sentinel in recv: a rank with no source must keep it.
  for (int64_t i = 0; i < n; ++i)
    encode(dt, dt == DIST_RT_I1 ? 1 : 42, recv.host.data() + i * es);
  recv.upload();
  ++gCalls;
  distRtPermute(mesh, send.dev, inPlace ? send.dev : recv.dev, n, dt,
                src.data(), offsets.data(), dests.data(), nullptr);
  Buffer &out = inPlace ? send : recv;
  out.download();
  for (int64_t i = 0; i < n; ++i) {
    double want =
        src[gRank] >= 0
            ? inputValue(dt, -1, static_cast<int>(src[gRank]), i, salt)
            : (inPlace ? inputValue(dt, -1, gRank, i, salt)
                       : (dt == DIST_RT_I1 ? 1 : 42));
    expectElem(out, dt, i, want, "permute");
  }
}

void checkPermutes(int64_t mesh, int &salt) {
  std::mt19937 rng(1234); // same tables on every rank
  for (int trial = 0; trial < 6; ++trial) {
    std::vector<int64_t> src(gSize);
    std::iota(src.begin(), src.end(), 0);
    std::shuffle(src.begin(), src.end(), rng);
    int dt = trial % kNumDTypes;
    checkPermute(mesh, src, dt, 7, false, ++salt, "random permutation");
    checkPermute(mesh, src, (dt + 3) % kNumDTypes, 7, true, ++salt,
                 "random permutation in place");
  }
  // Replicated blocks: rank 0's buffer goes to every rank.
  std::vector<int64_t> bcast(gSize, 0);
  checkPermute(mesh, bcast, DIST_RT_F32, 1000, false, ++salt, "one to all");
  // Half the ranks receive nothing; the others take from their neighbour.
  std::vector<int64_t> partial(gSize, -1);
  for (int r = 1; r < gSize; r += 2)
    partial[r] = r - 1;
  checkPermute(mesh, partial, DIST_RT_I64, 5, false, ++salt, "partial");
  checkPermute(mesh, partial, DIST_RT_I16, 5, true, ++salt, "partial in place");
  // Large shift.
  std::vector<int64_t> shift(gSize);
  for (int r = 0; r < gSize; ++r)
    shift[r] = (r + 1) % gSize;
  checkPermute(mesh, shift, DIST_RT_F64, 50000, false, ++salt, "shift large");
}

} // namespace

int main(int argc, char **argv) {
  std::string backend = "mpi";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--backend" && i + 1 < argc) {
      backend = argv[++i];
    } else if (a == "--strided-memory" && i + 1 < argc &&
               (argv[i + 1] == std::string("all") ||
                argv[i + 1] == std::string("shared"))) {
      gSharedOnly = argv[++i] == std::string("shared");
    } else {
      std::fprintf(stderr,
                   "usage: %s [--backend mpi|nccl] "
                   "[--strided-memory all|shared]\n",
                   argv[0]);
      return 2;
    }
  }
  // Abort on error (the default): a failing call ends the job with the
  // runtime's message, which the lit test would show.
  if (distRtInitWithBackend(backend.c_str()) != DIST_RT_OK)
    return 1;
  // The mpi backend on device memory (DIST_RT_MPI_MEMORY=device: transfers
  // staged through the host) takes device buffers like nccl.
  const char *memory = std::getenv("DIST_RT_MPI_MEMORY");
  gDevice = backend != "mpi" || (memory && std::string(memory) == "device");
  gRank = static_cast<int>(distRtWorldRank());
  gSize = static_cast<int>(distRtWorldSize());
  int salt = 0;
  std::vector<TestMesh> meshes = meshesFor(gSize);
  for (TestMesh &m : meshes) {
    m.handle =
        distRtMeshCreate(static_cast<int64_t>(m.sizes.size()), m.sizes.data(),
                         m.devices.empty() ? nullptr : m.devices.data());
    for (const std::vector<int64_t> &axes : groupsFor(m))
      checkGroup(m, axes, backend, salt);
  }
  // The group of this device alone.
  checkGroup(meshes[0], {}, backend, salt);
  checkPermutes(meshes[0].handle, salt);

  long local[3] = {gCalls, gChecked, gFailures}, total[3];
  MPI_Reduce(local, total, 3, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (gRank == 0)
    std::printf("collectives-check: %s backend, %d ranks, %zu meshes: %ld "
                "calls, %ld elements checked, %ld failures\n",
                backend.c_str(), gSize, meshes.size(), total[0], total[1],
                total[2]);
  long failures = gRank == 0 ? total[2] : 0;
  MPI_Bcast(&failures, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  distRtFinalize();
  return failures == 0 ? 0 : 1;
}
