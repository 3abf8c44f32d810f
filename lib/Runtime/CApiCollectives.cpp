//===- CApiCollectives.cpp - C ABI: collectives and permutes --------------===//
//
// Each entry point checks its arguments on this rank and agrees on the call
// with the other members (CrossRankCheck.h), then hands the validated call
// to the backend. The strided all-to-all falls back to staging through
// contiguous chunks when the backend cannot move the boxes itself.
//
//===----------------------------------------------------------------------===//

#include "Allocation.h"
#include "ArgumentChecks.h"
#include "ControlPlane.h"
#include "CrossRankCheck.h"
#include "Errors.h"
#include "Handles.h"
#include "State.h"
#include "StridedGeometry.h"

#include "dist/Runtime/DistRuntime.h"

#include <string>
#include <vector>

using namespace dist::rt;

namespace {

/// The strided all-to-all through contiguous chunks: pack, exchange, unpack
/// (only the sides that are not contiguous already are staged).
void stagedAllToAll(GroupEntry &g, const void *send,
                    const StridedSide &sendSide, void *recv,
                    const StridedSide &recvSide, int64_t count, int64_t p,
                    DType t, Stream s) {
  const size_t bytes =
      bytesOf(static_cast<size_t>(count), static_cast<size_t>(p), t);
  StagingBlock sendStage, recvStage;
  void *packed =
      sendSide.contiguous ? const_cast<void *>(send) : sendStage.get(bytes);
  void *received = recvSide.contiguous ? recv : recvStage.get(bytes);
  if (!sendSide.contiguous)
    S.backend->copy(stagePlan(sendSide, /*toStage=*/true, packed), send, packed,
                    s);
  S.backend->allToAll(*g.backendComm, packed, received,
                      static_cast<size_t>(count), t, /*inPlace=*/false, s);
  if (!recvSide.contiguous)
    S.backend->copy(stagePlan(recvSide, /*toStage=*/false, received), received,
                    recv, s);
  // The cache hands blocks out again in stream order (BlockCache.h), which
  // only holds on the default stream.
  if (s != S.backend->defaultStream() && (sendStage.data() || recvStage.data()))
    S.backend->synchronize(s);
}

/// distRtPermute's work, for the two ways its tables arrive.
void permute(int64_t mesh, const void *send, void *recv, int64_t count,
             int32_t dtype, const int64_t *srcRank, const int64_t *destOffsets,
             const int64_t *destList, void *stream) {
  requireInit();
  MeshEntry &m = lookupMesh(mesh);
  if (!m.member)
    return; // the mesh's ranks permute among themselves
  size_t n = 0;
  DType t = DType::F32;
  Stream s = nullptr;
  PermuteRole role;
  agree(meshComm(m), m.spec.devices(),
        {int64_t(OpCode::Permute), count, dtype, -1, 0, 0}, "count",
        [&](Signature &sig) {
          t = toDType(dtype);
          n = checkCount(count, "count");
          s = S.backend->resolveStream(stream);
          validatePermuteTable(m.spec, srcRank, destOffsets, destList);
          // Hashed only once validated: a malformed table could make the
          // hash read past destList.
          sig.extra = static_cast<int64_t>(hashPermuteTable(
              permuteTableSize(m.spec), srcRank, destOffsets, destList));
          role = permuteRole(S.rank, srcRank, destOffsets, destList);
          size_t bytes = bytesOf(n, 1, t);
          bool sends = !role.dests.empty() || role.source == S.rank;
          if (sends)
            checkBuffer(send, bytes, "send");
          if (role.source >= 0)
            checkBuffer(recv, bytes, "recv");
          if (send != recv && overlaps(send, bytes, recv, bytes))
            invalid("send and recv overlap (only send == recv is allowed)");
        });
  if (n == 0)
    return;
  std::vector<int> dests(role.dests.begin(), role.dests.end());
  S.backend->permute(send, recv, n, t, static_cast<int>(role.source), dests, s);
}

} // namespace

extern "C" {

int32_t distRtAllGather(int64_t group, const void *send, void *recv,
                        int64_t countPerRank, int32_t dtype, void *stream) {
  return guard("all_gather", [&] {
    requireInit();
    GroupEntry &g = lookupGroup(group);
    if (!g.member)
      return; // not a device of the mesh: nothing to move, nobody to wait
    const size_t p = g.spec.members.size();
    size_t n = 0;
    DType t = DType::F32;
    bool inPlace = false;
    Stream s = nullptr;
    agree(g.comm, g.spec.members,
          {int64_t(OpCode::AllGather), countPerRank, dtype, -1, 0, 0},
          "countPerRank", [&](Signature &) {
            t = toDType(dtype);
            n = checkCount(countPerRank, "countPerRank");
            s = S.backend->resolveStream(stream);
            size_t bytes = bytesOf(n, 1, t);
            checkBuffer(send, bytes, "send");
            checkBuffer(recv, bytesOf(n, p, t), "recv");
            inPlace = bytes > 0 &&
                      send == static_cast<char *>(recv) + g.spec.index * bytes;
            if (!inPlace && overlaps(send, bytes, recv, bytes * p))
              invalid("send and recv overlap (in place needs send == recv + "
                      "groupRank * countPerRank elements)");
          });
    if (n > 0)
      S.backend->allGather(*g.backendComm, send, recv, n, t, inPlace, s);
  });
}

int32_t distRtAllToAll(int64_t group, const void *send, void *recv,
                       int64_t countPerRank, int32_t dtype, void *stream) {
  return guard("all_to_all", [&] {
    requireInit();
    GroupEntry &g = lookupGroup(group);
    if (!g.member)
      return; // not a device of the mesh: nothing to move, nobody to wait
    const size_t p = g.spec.members.size();
    size_t n = 0;
    DType t = DType::F32;
    bool inPlace = false;
    Stream s = nullptr;
    agree(g.comm, g.spec.members,
          {int64_t(OpCode::AllToAll), countPerRank, dtype, -1, 0, 0},
          "countPerRank", [&](Signature &) {
            t = toDType(dtype);
            n = checkCount(countPerRank, "countPerRank");
            s = S.backend->resolveStream(stream);
            size_t bytes = bytesOf(n, p, t);
            checkBuffer(send, bytes, "send");
            checkBuffer(recv, bytes, "recv");
            inPlace = bytes > 0 && send == recv;
            if (!inPlace && overlaps(send, bytes, recv, bytes))
              invalid("send and recv overlap (in place needs send == recv)");
          });
    if (n > 0)
      S.backend->allToAll(*g.backendComm, send, recv, n, t, inPlace, s);
  });
}

int32_t distRtAllToAllStrided(int64_t group, int64_t numDims,
                              const int64_t *chunkShape, const void *send,
                              const int64_t *sendStrides,
                              int64_t sendChunkStride, void *recv,
                              const int64_t *recvStrides,
                              int64_t recvChunkStride, int32_t dtype,
                              void *stream) {
  return guard("all_to_all", [&] {
    requireInit();
    GroupEntry &g = lookupGroup(group);
    if (!g.member)
      return; // not a device of the mesh: nothing to move, nobody to wait
    const int64_t p = static_cast<int64_t>(g.spec.members.size());
    // The element count per chunk is what the members must agree on; the
    // geometry of each side is this rank's own business.
    int64_t count = -1;
    if (numDims >= 0 && numDims < DIST_RT_MAX_COPY_DIMS &&
        (numDims == 0 || chunkShape))
      count = shapeElementsOrNegative(numDims, chunkShape);
    DType t = DType::F32;
    Stream s = nullptr;
    StridedSide sendSide, recvSide;
    agree(g.comm, g.spec.members,
          {int64_t(OpCode::AllToAll), count, dtype, -1, 0, 0},
          "the chunk's element count", [&](Signature &) {
            if (numDims < 0 || numDims >= DIST_RT_MAX_COPY_DIMS)
              invalid("numDims " + std::to_string(numDims) +
                      " is outside [0, " +
                      std::to_string(DIST_RT_MAX_COPY_DIMS - 1) + "]");
            if (numDims > 0 && (!chunkShape || !sendStrides || !recvStrides))
              invalid("chunkShape, sendStrides and recvStrides must not be "
                      "null");
            if (count < 0)
              invalid("chunkShape has a negative size or overflows");
            checkCount(count, "the chunk's element count");
            t = toDType(dtype);
            s = S.backend->resolveStream(stream);
            sendSide = stridedSide(p, numDims, chunkShape, sendStrides,
                                   sendChunkStride, send, t, "send");
            checkBuffer(send, sendSide.extentBytes(), "send");
            recvSide = stridedSide(p, numDims, chunkShape, recvStrides,
                                   recvChunkStride, recv, t, "recv");
            checkBuffer(recv, recvSide.extentBytes(), "recv");
            if (!boxIsInjective(recvSide))
              invalid("recv chunks overlap (a recv stride is too small for "
                      "the box inside it)");
            if (overlaps(sendSide.begin(), sendSide.extentBytes(),
                         recvSide.begin(), recvSide.extentBytes()))
              invalid("send and recv overlap");
          });
    if (count <= 0 || p == 0)
      return;
    if (S.stridedAllToAll != StridedAllToAllMode::Pack &&
        S.backend->allToAllStrided(*g.backendComm, send, chunkBoxes(sendSide),
                                   recv, chunkBoxes(recvSide), t,
                                   S.stridedAllToAll, s))
      return;
    stagedAllToAll(g, send, sendSide, recv, recvSide, count, p, t, s);
  });
}

int32_t distRtReduceScatter(int64_t group, const void *send, void *recv,
                            int64_t countPerRank, int32_t dtype, int32_t redop,
                            void *stream) {
  return guard("reduce_scatter", [&] {
    requireInit();
    GroupEntry &g = lookupGroup(group);
    if (!g.member)
      return; // not a device of the mesh: nothing to move, nobody to wait
    const size_t p = g.spec.members.size();
    size_t n = 0;
    DType t = DType::F32;
    RedOp op = RedOp::Sum;
    bool inPlace = false;
    Stream s = nullptr;
    agree(g.comm, g.spec.members,
          {int64_t(OpCode::ReduceScatter), countPerRank, dtype, redop, 0, 0},
          "countPerRank", [&](Signature &) {
            t = checkReducible(dtype, redop, op);
            n = checkCount(countPerRank, "countPerRank");
            s = S.backend->resolveStream(stream);
            size_t inBytes = bytesOf(n, p, t);
            checkBuffer(send, inBytes, "send");
            checkBuffer(recv, bytesOf(n, 1, t), "recv");
            inPlace = inBytes > 0 && send == recv;
            if (!inPlace && overlaps(send, inBytes, recv, bytesOf(n, 1, t)))
              invalid("send and recv overlap (in place needs send == recv)");
          });
    if (n > 0)
      S.backend->reduceScatter(*g.backendComm, send, recv, n, t, op, inPlace,
                               s);
  });
}

int32_t distRtAllReduce(int64_t group, const void *send, void *recv,
                        int64_t count, int32_t dtype, int32_t redop,
                        void *stream) {
  return guard("all_reduce", [&] {
    requireInit();
    GroupEntry &g = lookupGroup(group);
    if (!g.member)
      return; // not a device of the mesh: nothing to move, nobody to wait
    size_t n = 0;
    DType t = DType::F32;
    RedOp op = RedOp::Sum;
    bool inPlace = false;
    Stream s = nullptr;
    agree(g.comm, g.spec.members,
          {int64_t(OpCode::AllReduce), count, dtype, redop, 0, 0}, "count",
          [&](Signature &) {
            t = checkReducible(dtype, redop, op);
            n = checkCount(count, "count");
            s = S.backend->resolveStream(stream);
            size_t bytes = bytesOf(n, 1, t);
            checkBuffer(send, bytes, "send");
            checkBuffer(recv, bytes, "recv");
            inPlace = bytes > 0 && send == recv;
            if (!inPlace && overlaps(send, bytes, recv, bytes))
              invalid("send and recv overlap (in place needs send == recv)");
          });
    if (n > 0)
      S.backend->allReduce(*g.backendComm, send, recv, n, t, op, inPlace, s);
  });
}

int32_t distRtPermute(int64_t mesh, const void *send, void *recv, int64_t count,
                      int32_t dtype, const int64_t *srcRank,
                      const int64_t *destOffsets, const int64_t *destList,
                      void *stream) {
  return guard("permute", [&] {
    permute(mesh, send, recv, count, dtype, srcRank, destOffsets, destList,
            stream);
  });
}

int32_t distRtPermuteByLayouts(int64_t mesh, const void *send, void *recv,
                               int64_t count, int32_t dtype, int64_t numDims,
                               const int64_t *dimAxes, int64_t dimAxesSize,
                               void *stream) {
  return guard("permute", [&] {
    requireInit();
    // Every rank computes the same tables, so a bad description fails on
    // each of them alike (no rank waits for a peer that gave up).
    PermuteTables tables = permuteTablesFromLayouts(
        lookupMesh(mesh).spec, numDims, dimAxes, dimAxesSize);
    permute(mesh, send, recv, count, dtype, tables.srcRank.data(),
            tables.destOffsets.data(), tables.destList.data(), stream);
  });
}

} // extern "C"
