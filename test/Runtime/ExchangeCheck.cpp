//===- ExchangeCheck.cpp - Sub-world meshes and distRtExchange on N ranks ===//
//
//   dist-mpirun -np N dist-rt-exchange-check [--memory all|runtime|host]
//
// Two parts, each checked element by element on every rank:
//
// Meshes that cover only some ranks (semantics §1; N >= 4): a mesh on ranks
// [2, 3], one on [3, 1] and, on 8 ranks, a 2x2 mesh on [7, 5, 6, 4].
// distRtMeshContains and distRtMeshCoord (0 outside the mesh), group sizes
// and ranks, every collective on the groups over their axes (right results
// on the members; on the other ranks DIST_RT_OK with their buffers left as
// they were), and a permute over the mesh's ranks with tables indexed by
// world rank up to the mesh's largest rank.
//
// distRtExchange (semantics §3 redistribute): a global tensor is laid out as
// blocks held by ranks (a "source layout") and moved to another layout. The
// table is built here from the two layouts alone (the intersection of every
// source block with every target block), so it does not depend on the
// runtime's code. Every element of a sender's buffer encodes the global
// index of the element it holds (its padding holds a value no element has),
// and every element of every receiver's buffer is checked against the
// global index it must hold, or against the sentinel it held before when no
// transfer writes it (padding). Scenarios: rows -> columns of a 2-D tensor
// (the transpose of shards), uneven blocks, 3-D blocks, several transfers
// per pair (intersections cut in pieces), empty boxes, local copies (ranks
// that hold both a source and a target block; also through
// distRtExchangeLocal, which refuses a table with a transfer between ranks
// on every rank), a cross-mesh hand-off from
// one set of ranks to another with permuted rank tables and shuffled table
// entries, ranks that take no part (null buffers and shapes), for i32, bf16,
// f64 and f32. Buffers are runtime memory (distRtAlloc: the single-copy path
// between shared heaps), plain host memory (MPI messages), or mixed across
// ranks; --memory restricts that.
//
// Prints one summary line from rank 0 and exits non-zero if any check
// failed on any rank.
//
//===----------------------------------------------------------------------===//

#include "ElementCodec.h"
#include "dist/Runtime/DistRuntime.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

int gRank = 0, gSize = 1;
long gCalls = 0, gChecked = 0, gFailures = 0;
std::string gContext;

using Shape = std::vector<int64_t>;

using dist::rt_test::elemSize;

// Values are small integers, exact in every dtype used here (bf16 holds
// integers up to 256 exactly).
void encode(int dt, int64_t v, void *out) {
  dist::rt_test::encode(dt, static_cast<double>(v), out);
}
int64_t decode(int dt, const void *in) {
  return static_cast<int64_t>(dist::rt_test::decode(dt, in));
}

// The value of global element `g` in a call: distinct for every element in
// i32/f32/f64 (exact below 2^24), and for bf16 a residue exact in 8 bits.
int64_t globalValue(int dt, int64_t g, int salt) {
  if (dt == DIST_RT_BF16)
    return (g * 7 + salt) % 251 - 125;
  return g * 3 + salt % 3;
}
constexpr int64_t kPadding = -1000;  // in a sender's padding: never sent
constexpr int64_t kSentinel = -2000; // in a receiver's buffer beforehand

void fail(const std::string &what) {
  if (++gFailures <= 20)
    std::fprintf(stderr, "FAIL rank %d: %s: %s\n", gRank, gContext.c_str(),
                 what.c_str());
}

void expectEq(int64_t got, int64_t want, const std::string &what) {
  ++gChecked;
  if (got != want)
    fail(what + ": got " + std::to_string(got) + ", want " +
         std::to_string(want));
}

//===--------------------------------------------------------------------===//
// Buffers
//===--------------------------------------------------------------------===//

enum class Memory { Runtime, Host };

struct Buffer {
  std::vector<char> host;
  void *ptr = nullptr;
  Memory memory;
  Buffer(size_t bytes, Memory m) : host(bytes), memory(m) {
    ptr = m == Memory::Runtime && bytes
              ? distRtAlloc(static_cast<int64_t>(bytes))
              : host.data();
  }
  ~Buffer() {
    if (memory == Memory::Runtime && ptr != host.data())
      distRtFree(ptr);
  }
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
  // The mpi backend's runtime memory is host memory: no copies needed.
  char *data() { return static_cast<char *>(ptr); }
};

int64_t product(const Shape &s) {
  int64_t n = 1;
  for (int64_t v : s)
    n *= v;
  return n;
}

//===--------------------------------------------------------------------===//
// Layouts and the table, computed from the layouts alone
//===--------------------------------------------------------------------===//

/// A block of the global tensor held by a rank: global box (offset, size)
/// in a local buffer of shape `local` (padded: local >= size).
struct Block {
  int64_t rank;
  Shape offset, size, local;
};

/// The blocks of `shape` split on dim `dim` into ranks.size() blocks of
/// ceil(N / parts) (the last ones short or empty), block k on ranks[k].
std::vector<Block> splitLayout(const Shape &shape, size_t dim,
                               const std::vector<int64_t> &ranks) {
  const int64_t parts = static_cast<int64_t>(ranks.size());
  const int64_t b = (shape[dim] + parts - 1) / parts;
  std::vector<Block> out;
  for (int64_t k = 0; k < parts; ++k) {
    Block blk{ranks[k], Shape(shape.size(), 0), shape, shape};
    blk.offset[dim] = std::min(k * b, shape[dim]);
    blk.size[dim] = std::max<int64_t>(0, std::min(b, shape[dim] - k * b));
    blk.local[dim] = b;
    out.push_back(blk);
  }
  return out;
}

/// The blocks of `shape` split on dims 0 and 1 over a grid of ranks
/// (grid[i][j] holds block (i, j)).
std::vector<Block> gridLayout(const Shape &shape,
                              const std::vector<std::vector<int64_t>> &grid) {
  std::vector<Block> out;
  const int64_t p0 = static_cast<int64_t>(grid.size());
  const int64_t p1 = static_cast<int64_t>(grid[0].size());
  const int64_t b0 = (shape[0] + p0 - 1) / p0, b1 = (shape[1] + p1 - 1) / p1;
  for (int64_t i = 0; i < p0; ++i)
    for (int64_t j = 0; j < p1; ++j) {
      Block blk{grid[i][j], Shape(shape.size(), 0), shape, shape};
      blk.offset[0] = std::min(i * b0, shape[0]);
      blk.size[0] = std::max<int64_t>(0, std::min(b0, shape[0] - i * b0));
      blk.local[0] = b0;
      blk.offset[1] = std::min(j * b1, shape[1]);
      blk.size[1] = std::max<int64_t>(0, std::min(b1, shape[1] - j * b1));
      blk.local[1] = b1;
      out.push_back(blk);
    }
  return out;
}

struct TableOptions {
  bool pieces = false;  // cut each intersection in two along its first dim
  bool empties = false; // add empty boxes (some between otherwise idle ranks)
  bool shuffle = false; // shuffle the entries (same order on every rank)
};

std::vector<int64_t> buildTable(const std::vector<Block> &from,
                                const std::vector<Block> &to,
                                const TableOptions &opt, int64_t &count) {
  const size_t nd = from[0].size.size();
  std::vector<std::vector<int64_t>> entries;
  auto add = [&](int64_t s, int64_t d, const Shape &so, const Shape &dof,
                 const Shape &sz) {
    std::vector<int64_t> e{s, d};
    e.insert(e.end(), so.begin(), so.end());
    e.insert(e.end(), dof.begin(), dof.end());
    e.insert(e.end(), sz.begin(), sz.end());
    entries.push_back(e);
  };
  for (const Block &s : from)
    for (const Block &d : to) {
      Shape lo(nd), sz(nd);
      bool empty = false;
      for (size_t k = 0; k < nd; ++k) {
        lo[k] = std::max(s.offset[k], d.offset[k]);
        int64_t hi = std::min(s.offset[k] + s.size[k], d.offset[k] + d.size[k]);
        sz[k] = std::max<int64_t>(0, hi - lo[k]);
        empty = empty || sz[k] == 0;
      }
      if (empty)
        continue;
      Shape so(nd), dof(nd);
      for (size_t k = 0; k < nd; ++k) {
        so[k] = lo[k] - s.offset[k];
        dof[k] = lo[k] - d.offset[k];
      }
      if (opt.pieces && sz[0] >= 2) {
        Shape first = sz, second = sz, so2 = so, do2 = dof;
        first[0] = sz[0] / 2;
        second[0] = sz[0] - first[0];
        so2[0] += first[0];
        do2[0] += first[0];
        add(s.rank, d.rank, so, dof, first);
        add(s.rank, d.rank, so2, do2, second);
      } else {
        add(s.rank, d.rank, so, dof, sz);
      }
    }
  if (opt.empties) {
    Shape zero(nd, 0), emptyBox(nd, 3);
    emptyBox[nd - 1] = 0;
    add(from[0].rank, to.back().rank, zero, zero, emptyBox);
    add(to[0].rank, to[0].rank, zero, zero, emptyBox);
    // Far outside both buffers' bounds: an empty box is never checked
    // against the shapes, it moves nothing.
    Shape far(nd, 1000);
    add(from.back().rank, from[0].rank, far, far, emptyBox);
  }
  if (opt.shuffle) {
    std::mt19937 rng(77);
    std::shuffle(entries.begin(), entries.end(), rng);
  }
  std::vector<int64_t> table;
  for (const auto &e : entries)
    table.insert(table.end(), e.begin(), e.end());
  count = static_cast<int64_t>(entries.size());
  return table;
}

const Block *blockOf(const std::vector<Block> &layout, int64_t rank) {
  for (const Block &b : layout)
    if (b.rank == rank)
      return &b;
  return nullptr;
}

// Row-major index of `pos` in `shape`, and its decomposition.
int64_t linear(const Shape &shape, const Shape &pos) {
  int64_t l = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    l = l * shape[d] + pos[d];
  return l;
}
Shape position(const Shape &shape, int64_t l) {
  Shape p(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    p[d] = l % shape[d];
    l /= shape[d];
  }
  return p;
}

using MemoryOf = Memory (*)(int rank);

/// How the exchanges of a scenario run: blocking (distRtExchange), started
/// and waited for at once (--nonblocking), or started together and waited
/// for in reverse order (batch()).
enum class Mode { Blocking, StartWait, Batched };
Mode gMode = Mode::Blocking;

/// One exchange of a scenario: its buffers, filled when it is made; run()
/// moves the data, verify() checks every element this rank received.
struct PreparedExchange {
  std::string context;
  Shape global;
  std::vector<int64_t> table;
  int64_t count = 0;
  int dt = 0, salt = 0;
  bool local = false;
  const Block *src = nullptr, *dst = nullptr;
  std::vector<Block> from, to;
  std::unique_ptr<Buffer> send, recv;
  int64_t request = 0;

  PreparedExchange(const std::string &context, const Shape &global,
                   const std::vector<Block> &from0,
                   const std::vector<Block> &to0, const TableOptions &opt,
                   int dt, MemoryOf memory, int salt, bool local)
      : context(context), global(global), dt(dt), salt(salt), local(local),
        from(from0), to(to0) {
    table = buildTable(from, to, opt, count);
    src = blockOf(from, gRank);
    dst = blockOf(to, gRank);
    const size_t es = elemSize(dt);
    const int64_t sendElems = src ? product(src->local) : 0;
    const int64_t recvElems = dst ? product(dst->local) : 0;
    send = std::make_unique<Buffer>(sendElems * es, memory(gRank));
    recv = std::make_unique<Buffer>(recvElems * es, memory(gRank));
    for (int64_t l = 0; l < sendElems; ++l)
      encode(dt, valueAt(*src, l, kPadding), send->data() + l * es);
    for (int64_t l = 0; l < recvElems; ++l)
      encode(dt, kSentinel, recv->data() + l * es);
  }

  /// The value local element `l` of `block` holds: its global element's,
  /// or `outside` in the block's padding.
  int64_t valueAt(const Block &block, int64_t l, int64_t outside) const {
    Shape p = position(block.local, l);
    Shape g(p.size());
    for (size_t d = 0; d < p.size(); ++d) {
      if (p[d] >= block.size[d])
        return outside;
      g[d] = block.offset[d] + p[d];
    }
    return globalValue(dt, linear(global, g), salt);
  }

  // Ranks without a block pass nothing at all.
  int32_t call(bool start) {
    const int64_t nd = static_cast<int64_t>(global.size());
    const int64_t *sendShape = src ? src->local.data() : nullptr;
    const int64_t *recvShape = dst ? dst->local.data() : nullptr;
    void *sendData = src ? send->data() : nullptr;
    void *recvData = dst ? recv->data() : nullptr;
    if (start)
      return distRtExchangeStart(nd, sendShape, sendData, recvShape, recvData,
                                 count, table.data(), dt, nullptr, &request);
    return (local ? distRtExchangeLocal
                  : distRtExchange)(nd, sendShape, sendData, recvShape,
                                    recvData, count, table.data(), dt, nullptr);
  }

  void start() {
    ++gCalls;
    gContext = context;
    expectEq(call(/*start=*/true), DIST_RT_OK, "start's return code");
  }
  void wait() {
    gContext = context;
    expectEq(distRtExchangeWait(request), DIST_RT_OK, "wait's return code");
  }
  void run() {
    if (gMode == Mode::Blocking || local) {
      ++gCalls;
      gContext = context;
      expectEq(call(/*start=*/false), DIST_RT_OK, "return code");
      return;
    }
    start();
    wait();
  }

  void verify() {
    gContext = context;
    const size_t es = elemSize(dt);
    const int64_t recvElems = dst ? product(dst->local) : 0;
    for (int64_t l = 0; l < recvElems; ++l) {
      expectEq(decode(dt, recv->data() + l * es), valueAt(*dst, l, kSentinel),
               "recv element " + std::to_string(l));
    }
  }
};

/// The exchanges of the batch being collected (gMode == Batched).
std::vector<std::unique_ptr<PreparedExchange>> gBatch;

void checkExchange(const std::string &name, const Shape &global,
                   const std::vector<Block> &from, const std::vector<Block> &to,
                   const TableOptions &opt, int dt, MemoryOf memory, int salt,
                   bool local = false) {
  auto x = std::make_unique<PreparedExchange>(
      std::string(local ? "local exchange " : "exchange ") + name + " (dtype " +
          std::to_string(dt) + ")",
      global, from, to, opt, dt, memory, salt, local);
  if (gMode == Mode::Batched && !local) {
    gBatch.push_back(std::move(x));
    return;
  }
  x->run();
  x->verify();
}

std::vector<int64_t> iota(int64_t from, int64_t n) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), from);
  return v;
}

/// A transfer between two ranks is not a local exchange: every rank refuses
/// the table alike, before anything moves (needs 2 ranks).
void checkLocalExchangeRefusal() {
  gContext = "local exchange of a table with a transfer between ranks";
  int32_t a[4] = {}, b[4] = {};
  int64_t shape[1] = {4};
  const int64_t table[] = {0, 0, 0, 0, 4, 0, 1, 0, 0, 4};
  distRtSetAbortOnError(0);
  const int32_t rc = distRtExchangeLocal(1, shape, a, shape, b, 2, table,
                                         DIST_RT_I32, nullptr);
  distRtSetAbortOnError(1);
  expectEq(rc, DIST_RT_ERR_INVALID_ARGUMENT, "return code");
  expectEq(std::string(distRtLastErrorMessage())
                   .find("table entry 1: srcRank = 0 and dstRank = 1 "
                         "differ") != std::string::npos,
           true, "error message");
  distRtClearError();
}

void checkExchanges(MemoryOf memory, const char *memoryName, int &salt) {
  const int n = gSize;
  const std::string suffix = std::string(" [") + memoryName + "]";
  const std::vector<int64_t> all = iota(0, n);
  std::vector<int64_t> reversed(all.rbegin(), all.rend());
  const TableOptions plain, pieces{true, false, false},
      everything{true, true, true};
  for (int dt : {DIST_RT_I32, DIST_RT_BF16, DIST_RT_F64}) {
    // The transpose of shards: rows split n ways -> columns split n ways.
    Shape g{4 * n, 4 * n};
    checkExchange("rows->columns" + suffix, g, splitLayout(g, 0, all),
                  splitLayout(g, 1, all), plain, dt, memory, ++salt);
    // Uneven: blocks of ceil(N/n), the last ones short or empty.
    Shape u{3 * n + 1, 2 * n + 3};
    checkExchange("uneven rows->columns" + suffix, u, splitLayout(u, 0, all),
                  splitLayout(u, 1, reversed), pieces, dt, memory, ++salt);
    // 3-D, dim 2 -> dim 0, with pieces, empty boxes and shuffled entries.
    Shape t{n + 1, 3, 2 * n - 1};
    checkExchange("3-D dim 2 -> dim 0" + suffix, t, splitLayout(t, 2, all),
                  splitLayout(t, 0, all), everything, dt, memory, ++salt);
    // Every rank keeps its block: only local copies, which
    // distRtExchangeLocal does too (without the ranks agreeing first).
    checkExchange("local copies" + suffix, g, splitLayout(g, 0, all),
                  splitLayout(g, 0, all), pieces, dt, memory, ++salt);
    checkExchange("local copies" + suffix, g, splitLayout(g, 0, all),
                  splitLayout(g, 0, all), pieces, dt, memory, ++salt,
                  /*local=*/true);
  }
  // Larger than MPI's eager limit, f32.
  Shape big{64 * n, 96 * n};
  checkExchange("large rows->columns" + suffix, big, splitLayout(big, 0, all),
                splitLayout(big, 1, all), plain, DIST_RT_F32, memory, ++salt);
  if (n >= 2) {
    // Cross-"mesh" hand-off: the first half of the ranks hold rows, the
    // second half (in reverse order) columns; 2-D grids on 8 ranks.
    const int h = n / 2;
    std::vector<int64_t> first = iota(0, h), second = iota(h, h);
    std::reverse(second.begin(), second.end());
    Shape c{5 * h + 2, 3 * h + 1};
    for (int dt : {DIST_RT_I32, DIST_RT_BF16, DIST_RT_F64})
      checkExchange("hand-off first half -> second half" + suffix, c,
                    splitLayout(c, 0, first), splitLayout(c, 1, second),
                    everything, dt, memory, ++salt);
    if (n == 8) {
      checkExchange("hand-off 2x2 grid -> 4 columns" + suffix, c,
                    gridLayout(c, {{3, 0}, {2, 1}}),
                    splitLayout(c, 1, {6, 4, 7, 5}), everything, DIST_RT_I32,
                    memory, ++salt);
    }
  }
  if (n >= 4) {
    // Ranks that take no part: a reshard among ranks 1 and 2 only.
    Shape s{6, 5};
    checkExchange("ranks 1,2 only" + suffix, s, splitLayout(s, 0, {1, 2}),
                  splitLayout(s, 1, {2, 1}), pieces, DIST_RT_F64, memory,
                  ++salt);
  }
}

//===--------------------------------------------------------------------===//
// Meshes that cover only some ranks
//===--------------------------------------------------------------------===//

struct SubMesh {
  Shape sizes;
  std::vector<int64_t> devices;
  int64_t handle = -1;

  int64_t indexOf(int64_t rank) const {
    for (size_t l = 0; l < devices.size(); ++l)
      if (devices[l] == rank)
        return static_cast<int64_t>(l);
    return -1;
  }
  std::string str() const {
    std::string s = "mesh [";
    for (size_t a = 0; a < sizes.size(); ++a)
      s += (a ? "," : "") + std::to_string(sizes[a]);
    s += "] devices [";
    for (size_t i = 0; i < devices.size(); ++i)
      s += (i ? "," : "") + std::to_string(devices[i]);
    return s + "]";
  }
};

// A group over all axes of a mesh in order: the members by linear index.
void checkSubMeshGroup(const SubMesh &m, int &salt) {
  const int64_t me = m.indexOf(gRank);
  const bool member = me >= 0;
  std::vector<int64_t> axes = iota(0, static_cast<int64_t>(m.sizes.size()));
  gContext = m.str() + " group over all axes";
  int64_t g =
      distRtGroup(m.handle, static_cast<int64_t>(axes.size()), axes.data());
  const int64_t p = member ? static_cast<int64_t>(m.devices.size()) : 1;
  expectEq(distRtGroupSize(g), p, "group size");
  expectEq(distRtGroupRank(g), member ? me : 0, "group rank");
  const int64_t n = 3;
  // Inputs: member k's element i is 100*k + i + salt; non-members pass
  // buffers of sentinels and must find them unchanged.
  auto input = [&](int64_t k, int64_t i) { return 100 * k + i + salt; };
  std::vector<int32_t> send(p * n), recv(p * n, -7);
  auto resetSend = [&] {
    for (int64_t i = 0; i < p * n; ++i)
      send[i] = member ? static_cast<int32_t>(input(me, i)) : -5;
    std::fill(recv.begin(), recv.end(), -7);
  };
  auto untouched = [&](const char *op) {
    for (int64_t i = 0; i < p * n; ++i) {
      expectEq(send[i], -5, std::string(op) + " send untouched");
      expectEq(recv[i], -7, std::string(op) + " recv untouched");
    }
  };
  ++salt;
  resetSend();
  ++gCalls;
  expectEq(
      distRtAllGather(g, send.data(), recv.data(), n, DIST_RT_I32, nullptr),
      DIST_RT_OK, "all_gather status");
  if (member) {
    for (int64_t k = 0; k < p; ++k)
      for (int64_t i = 0; i < n; ++i)
        expectEq(recv[k * n + i], input(k, i), "all_gather");
  } else {
    untouched("all_gather");
  }
  resetSend();
  ++gCalls;
  expectEq(distRtAllToAll(g, send.data(), recv.data(), n, DIST_RT_I32, nullptr),
           DIST_RT_OK, "all_to_all status");
  if (member) {
    for (int64_t k = 0; k < p; ++k)
      for (int64_t i = 0; i < n; ++i)
        expectEq(recv[k * n + i], input(k, me * n + i), "all_to_all");
  } else {
    untouched("all_to_all");
  }
  resetSend();
  ++gCalls;
  int64_t box[1] = {n}, unit[1] = {1};
  expectEq(distRtAllToAllStrided(g, 1, box, send.data(), unit, n, recv.data(),
                                 unit, n, DIST_RT_I32, nullptr),
           DIST_RT_OK, "strided all_to_all status");
  if (member) {
    for (int64_t k = 0; k < p; ++k)
      for (int64_t i = 0; i < n; ++i)
        expectEq(recv[k * n + i], input(k, me * n + i), "strided all_to_all");
  } else {
    untouched("strided all_to_all");
  }
  resetSend();
  ++gCalls;
  expectEq(distRtReduceScatter(g, send.data(), recv.data(), n, DIST_RT_I32,
                               DIST_RT_SUM, nullptr),
           DIST_RT_OK, "reduce_scatter status");
  if (member) {
    for (int64_t i = 0; i < n; ++i) {
      int64_t want = 0;
      for (int64_t k = 0; k < p; ++k)
        want += input(k, me * n + i);
      expectEq(recv[i], want, "reduce_scatter");
    }
  } else {
    untouched("reduce_scatter");
  }
  resetSend();
  ++gCalls;
  expectEq(distRtAllReduce(g, send.data(), recv.data(), p * n, DIST_RT_I32,
                           DIST_RT_MAX, nullptr),
           DIST_RT_OK, "all_reduce status");
  if (member) {
    for (int64_t i = 0; i < p * n; ++i)
      expectEq(recv[i], input(p - 1, i), "all_reduce");
  } else {
    untouched("all_reduce");
  }
}

// Permute over the mesh's ranks: each device receives from the device one
// linear index further on (cyclically). Tables have one entry per world
// rank up to the mesh's largest.
void checkSubMeshPermute(const SubMesh &m, int &salt) {
  gContext = m.str() + " permute";
  const int64_t size =
      *std::max_element(m.devices.begin(), m.devices.end()) + 1;
  const int64_t nd = static_cast<int64_t>(m.devices.size());
  std::vector<int64_t> src(size, -1), offsets{0}, dests;
  for (int64_t l = 0; l < nd; ++l)
    src[m.devices[l]] = m.devices[(l + 1) % nd];
  for (int64_t r = 0; r < size; ++r) {
    for (int64_t q = 0; q < size; ++q)
      if (src[q] == r && q != r)
        dests.push_back(q);
    offsets.push_back(static_cast<int64_t>(dests.size()));
  }
  ++salt;
  std::vector<int64_t> send(4), recv(4, -7);
  for (int i = 0; i < 4; ++i)
    send[i] = 1000 * gRank + i + salt;
  ++gCalls;
  expectEq(distRtPermute(m.handle, send.data(), recv.data(), 4, DIST_RT_I64,
                         src.data(), offsets.data(), dests.data(), nullptr),
           DIST_RT_OK, "permute status");
  const bool member = m.indexOf(gRank) >= 0;
  for (int i = 0; i < 4; ++i)
    expectEq(recv[i], member ? 1000 * src[gRank] + i + salt : -7,
             "permute element");
}

void checkSubMeshes(int &salt) {
  std::vector<SubMesh> meshes{{{2}, {2, 3}}, {{2}, {3, 1}}};
  if (gSize == 8)
    meshes.push_back({{2, 2}, {7, 5, 6, 4}});
  for (SubMesh &m : meshes)
    m.handle = distRtMeshCreate(static_cast<int64_t>(m.sizes.size()),
                                m.sizes.data(), m.devices.data());
  for (const SubMesh &m : meshes) {
    gContext = m.str();
    const int64_t l = m.indexOf(gRank);
    expectEq(distRtMeshContains(m.handle), l >= 0 ? 1 : 0, "contains");
    for (size_t a = 0; a < m.sizes.size(); ++a) {
      // Coordinates of linear index l, row-major; 0 outside the mesh.
      int64_t rest = l < 0 ? 0 : l, c = 0;
      for (size_t b = m.sizes.size(); b-- > a;) {
        c = rest % m.sizes[b];
        rest /= m.sizes[b];
      }
      expectEq(distRtMeshCoord(m.handle, static_cast<int64_t>(a)), c,
               "coordinate on axis " + std::to_string(a));
    }
  }
  // Groups are created by every rank in the same order, members or not.
  for (const SubMesh &m : meshes)
    checkSubMeshGroup(m, salt);
  for (const SubMesh &m : meshes)
    checkSubMeshPermute(m, salt);
  // A group over one axis of the 2-D mesh, and the group of this device.
  if (meshes.size() == 3) {
    const SubMesh &m = meshes[2];
    gContext = m.str() + " group over axis 1";
    int64_t axis = 1;
    int64_t g = distRtGroup(m.handle, 1, &axis);
    const int64_t l = m.indexOf(gRank);
    expectEq(distRtGroupSize(g), l >= 0 ? 2 : 1, "group size");
    expectEq(distRtGroupRank(g), l >= 0 ? l % 2 : 0, "group rank");
    double x = gRank, sum = -1;
    ++gCalls;
    distRtAllReduce(g, &x, &sum, 1, DIST_RT_F64, DIST_RT_SUM, nullptr);
    double want = l >= 0 ? static_cast<double>(m.devices[l - l % 2] +
                                               m.devices[l - l % 2 + 1])
                         : -1;
    expectEq(static_cast<int64_t>(sum), static_cast<int64_t>(want),
             "all_reduce over axis 1");
  }
}

} // namespace

int main(int argc, char **argv) {
  std::string memory = "all";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--memory" && i + 1 < argc) {
      memory = argv[++i];
    } else if (a == "--nonblocking") {
      gMode = Mode::StartWait;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--memory all|runtime|host] [--nonblocking]\n",
                   argv[0]);
      return 2;
    }
  }
  if (distRtInit() != DIST_RT_OK)
    return 1;
  gRank = static_cast<int>(distRtWorldRank());
  gSize = static_cast<int>(distRtWorldSize());
  int salt = 0;
  if (gSize >= 4)
    checkSubMeshes(salt);
  auto runtime = [](int) { return Memory::Runtime; };
  auto host = [](int) { return Memory::Host; };
  auto mixed = [](int r) { return r % 2 ? Memory::Host : Memory::Runtime; };
  if (memory == "all" || memory == "runtime")
    checkExchanges(runtime, "runtime memory", salt);
  if (memory == "all" || memory == "host")
    checkExchanges(host, "host memory", salt);
  if (memory == "all")
    checkExchanges(mixed, "runtime memory on even ranks", salt);
  if (gSize >= 2)
    checkLocalExchangeRefusal();
  if (gMode == Mode::StartWait) {
    // Every scenario of one memory kind in flight at once: all started, then
    // waited for in reverse order, with a blocking exchange in between.
    gMode = Mode::Batched;
    checkExchanges(mixed, "in flight together", salt);
    for (auto &x : gBatch)
      x->start();
    gMode = Mode::Blocking;
    checkExchanges(runtime, "blocking, while others are in flight", salt);
    for (auto it = gBatch.rbegin(); it != gBatch.rend(); ++it)
      (*it)->wait();
    for (auto &x : gBatch)
      x->verify();
    gBatch.clear();
  }

  long local[3] = {gCalls, gChecked, gFailures}, total[3];
  MPI_Reduce(local, total, 3, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (gRank == 0)
    std::printf("exchange-check: %d ranks: %ld calls, %ld elements checked, "
                "%ld failures\n",
                gSize, total[0], total[1], total[2]);
  long failures = gRank == 0 ? total[2] : 0;
  MPI_Bcast(&failures, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  distRtFinalize();
  return failures == 0 ? 0 : 1;
}
