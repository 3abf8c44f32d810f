/*===- dist/Runtime/DistRuntime.h - C ABI of the dist runtime ---*- C -*-===//
 *
 * The calls that code compiled by dist makes to move data between devices
 * (semantics §1-§3): communicators over groups of mesh axes, the collectives of
 * a resharding plan, whole-buffer permutes, point-to-point box exchanges
 * (redistribute, also across meshes), and the local data movement around
 * them (strided copies, all-to-all chunk packing, zero padding).
 *
 * Designed to be called from LLVM IR: every argument is an int32_t, an int64_t
 * or a pointer; handles are int64_t; nothing is passed by value in a struct.
 * The header is plain C99 and usable from C and C++.
 *
 * Conventions
 * - Status: functions returning int32_t return DIST_RT_OK (0) on success.
 *   Functions returning a handle or a value return -1 on failure.
 * - Errors: by default every failure prints
 *       dist-runtime: rank R: <op>: <reason>
 *   to stderr and terminates the whole job with exit code 1 (MPI_Abort), so a
 *   failure is never silent and never leaves the other ranks hanging.
 *   distRtSetAbortOnError(0) makes failures return instead (for tests); the
 *   message is then available from distRtLastErrorMessage().
 * - Collectives are collective: every member of the group calls them in the
 *   same order with the same count, dtype and reduction. While validation is
 *   on (the default; DIST_RT_CHECK=0 or distRtSetValidation(0) turns it off),
 *   the members exchange a small signature first, so a mismatch (a wrong-size
 *   buffer on one rank, calls out of order) is reported on every member
 *   instead of corrupting data or hanging.
 * - Buffers live in the backend's memory: host memory for "mpi", device
 *   memory of this rank's GPU for "nccl" (distRtAlloc returns such memory).
 * - Streams: every data-moving call takes an opaque `stream`. NULL means the
 *   runtime's own stream (distRtDefaultStream()). With "mpi" the stream must be
 *   NULL and every call has completed when it returns. With "nccl" it is a
 *   cudaStream_t and calls are only enqueued on it: the data is ready after
 *   distRtSynchronize(stream).
 * - Threads: calls must not be made concurrently from several threads.
 *
 * Environment
 *   DIST_RT_BACKEND          mpi (default) | nccl: backend picked by distRtInit
 *   DIST_RT_CHECK            0 turns off the cross-rank argument check
 *   DIST_RT_STRIDED_ALLTOALL auto (default) | shm | datatype | pack: how
 *                            distRtAllToAllStrided moves its chunks (see
 *                            there); shm and datatype are mpi paths, and a
 *                            forced path that does not apply is an error
 *   DIST_RT_EXCHANGE         auto (default) | datatype | pack: how the mpi
 *                            backend moves distRtExchange's boxes: auto
 *                            copies between shared heaps where it can and
 *                            describes boxes as MPI datatypes elsewhere;
 *                            datatype never uses the heaps; pack stages
 *                            every non-contiguous box
 *   DIST_RT_MPI_MEMORY       host (default) | device | auto: where the mpi
 *                            backend keeps its buffers. device: the rank's
 *                            GPU (ranks may share one), with kernels, copies
 *                            and GEMMs on it and every transfer staged
 *                            through host memory; auto: device when the
 *                            runtime has CUDA and a GPU is visible, else
 *                            host. dist-run sets auto for target=gpu code
 *   DIST_RT_SHARED_HEAP_MIB  address space (MiB) each mpi rank reserves for
 *                            host buffers its node can share (default 65536,
 *                            backed only as used; 0: plain malloc memory)
 *   DIST_RT_CACHE_MIB        bytes (MiB) of freed buffers distRtFree keeps
 *                            for reuse by distRtAlloc (default 1024; 0: none)
 *   DIST_RT_EXIT_TIMEOUT_S   how long a rank leaving without distRtFinalize
 *                            waits for the others before aborting (default 10)
 *
 *===----------------------------------------------------------------------===*/
#ifndef DIST_RUNTIME_DISTRUNTIME_H
#define DIST_RUNTIME_DISTRUNTIME_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define DIST_RT_API __attribute__((visibility("default")))
#else
#define DIST_RT_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*===--------------------------- Constants -------------------------------===*/

/* Element types (int32_t `dtype` arguments). DIST_RT_I1 is a boolean stored
 * in one byte (0 or 1), as MLIR lays out memref<...xi1>. */
enum {
  DIST_RT_F16 = 0,
  DIST_RT_BF16 = 1,
  DIST_RT_F32 = 2,
  DIST_RT_F64 = 3,
  DIST_RT_I32 = 4,
  DIST_RT_I64 = 5,
  DIST_RT_I8 = 6,
  DIST_RT_I16 = 7,
  DIST_RT_I1 = 8
};

/* Reductions (int32_t `redop` arguments), in the order of semantics §2.
 * f16/bf16 combine in float and round after every step. AVG is the sum
 * divided by the group size (truncating toward zero for integers). I1
 * supports MAX (or), MIN (and) and PROD (and) only. */
enum {
  DIST_RT_SUM = 0,
  DIST_RT_MAX = 1,
  DIST_RT_MIN = 2,
  DIST_RT_PROD = 3,
  DIST_RT_AVG = 4
};

/* Status codes. */
enum {
  DIST_RT_OK = 0,
  DIST_RT_ERR_INVALID_ARGUMENT = 1, /* bad count, dtype, pointer, axis, table */
  DIST_RT_ERR_BAD_HANDLE = 2,       /* unknown mesh or group handle */
  DIST_RT_ERR_MISMATCH = 3,         /* ranks disagree on a collective call */
  DIST_RT_ERR_BACKEND = 4,          /* MPI, NCCL or CUDA reported a failure */
  DIST_RT_ERR_STATE = 5,      /* not initialised, finalised, conflicting init */
  DIST_RT_ERR_UNSUPPORTED = 6 /* valid request the backend cannot do */
};

/* Directions for distRtMemcpy; the values match cudaMemcpyKind. "Device"
 * is the backend's memory (host memory for "mpi"). */
enum {
  DIST_RT_COPY_HOST_TO_DEVICE = 1,
  DIST_RT_COPY_DEVICE_TO_HOST = 2,
  DIST_RT_COPY_DEVICE_TO_DEVICE = 3
};

/*===---------------------- Lifetime and errors --------------------------===*/

/* Initialises the runtime with the backend named by DIST_RT_BACKEND (default
 * "mpi"). Initialises MPI unless the program already did. Idempotent. */
DIST_RT_API int32_t distRtInit(void);

/* Same with an explicit backend: "mpi" or "nccl". An unknown name, a backend
 * that was not built, or a second init naming a different backend fails. */
DIST_RT_API int32_t distRtInitWithBackend(const char *backend);

/* Releases every communicator and finalises MPI if distRtInit initialised it.
 * Collective over the world. The runtime cannot be initialised again. */
DIST_RT_API int32_t distRtFinalize(void);

/* 1 between distRtInit and distRtFinalize, else 0. */
DIST_RT_API int32_t distRtIsInitialized(void);

/* Name of the active backend ("mpi", "nccl"), or "" before init. */
DIST_RT_API const char *distRtBackendName(void);

/* This process's rank in MPI_COMM_WORLD and the world size. */
DIST_RT_API int64_t distRtWorldRank(void);
DIST_RT_API int64_t distRtWorldSize(void);

/* abortOnError != 0 (default): failures print and terminate the job.
 * abortOnError == 0: failures return an error status; see distRtLastError. */
DIST_RT_API void distRtSetAbortOnError(int32_t abortOnError);

/* Turns the cross-rank signature check of every collective on (1, default)
 * or off (0). Must be set identically on every rank. */
DIST_RT_API void distRtSetValidation(int32_t enabled);

/* Status of the last failed call (DIST_RT_OK if none since distRtClearError)
 * and its full message "dist-runtime: rank R: <op>: <reason>" ("" if none). */
DIST_RT_API int32_t distRtLastError(void);
DIST_RT_API const char *distRtLastErrorMessage(void);
DIST_RT_API void distRtClearError(void);

/*===---------------------------- Meshes ---------------------------------===*/

/* Registers a mesh (semantics §1): axis sizes (each >= 1) and optionally the
 * device table (`devices[L(c)]` is the world rank of coordinate c: N distinct
 * ranks in [0, worldSize), not necessarily 0..N-1; NULL = identity 0..N-1,
 * which needs N <= worldSize). A mesh may cover only some of the world's
 * ranks (pipeline stages live on disjoint rank sets); a negative or repeated
 * rank, or one the job does not have, is DIST_RT_ERR_INVALID_ARGUMENT ("the
 * mesh names rank 7 (devices[3]) but the job has only 4 ranks; run with
 * --np 8 or more"). Registering the same (sizes, devices) again returns the
 * same handle; an identity table and NULL are the same mesh. Local call; every
 * rank registers every mesh, member or not. */
DIST_RT_API int64_t distRtMeshCreate(int64_t numAxes, const int64_t *sizes,
                                     const int64_t *devices);

/* Number of axes of a mesh. */
DIST_RT_API int64_t distRtMeshNumAxes(int64_t mesh);

/* This process's coordinate on `axis` of the mesh. On a rank that is not a
 * device of the mesh it is 0 (not an error): compiled code that computes
 * slice offsets from coordinates stays in bounds there, and its results are
 * never used. */
DIST_RT_API int64_t distRtMeshCoord(int64_t mesh, int64_t axis);

/* 1 when this process is a device of the mesh, 0 when not (-1: bad handle). */
DIST_RT_API int32_t distRtMeshContains(int64_t mesh);

/*===---------------------------- Groups ---------------------------------===*/

/* The communicator over an ordered list of distinct mesh axes: the devices
 * that differ from this one only on those axes, ordered by their combined
 * index over the axes (axes[0] most significant). numAxes == 0 gives the
 * group of this device alone. Collective over the world on first use of a
 * (mesh, axes) pair, ranks outside the mesh included; later calls return the
 * cached handle without communicating. Every rank must create groups in the
 * same order. On a rank that is not a device of the mesh the group has size
 * 1 and rank 0, and every collective on it returns DIST_RT_OK at once
 * without touching its buffers or communicating. */
DIST_RT_API int64_t distRtGroup(int64_t mesh, int64_t numAxes,
                                const int64_t *axes);

/* Number of members of a group, and this process's index in it. */
DIST_RT_API int64_t distRtGroupSize(int64_t group);
DIST_RT_API int64_t distRtGroupRank(int64_t group);

/*===-------------------------- Collectives ------------------------------===*/
/* Counts are in elements. p = distRtGroupSize(group), g = distRtGroupRank. */

/* recv[j*count .. (j+1)*count) = member j's send[0 .. count).
 * In place: send == recv + g*count. */
DIST_RT_API int32_t distRtAllGather(int64_t group, const void *send, void *recv,
                                    int64_t countPerRank, int32_t dtype,
                                    void *stream);

/* Chunk j of send (send[j*count ..]) goes to member j; chunk i of recv comes
 * from member i. Both hold p*count elements. In place: send == recv. */
DIST_RT_API int32_t distRtAllToAll(int64_t group, const void *send, void *recv,
                                   int64_t countPerRank, int32_t dtype,
                                   void *stream);

/* All-to-all between strided chunks: a reshard that moves a sharded dim
 * (S(0) -> S(1): rows in, column blocks out) sends column blocks straight
 * from the input and receives straight into the output, with no pack or
 * unpack pass around the exchange. Each side is `p` chunks, each the box
 * `chunkShape` (numDims <= DIST_RT_MAX_COPY_DIMS - 1 dims, row-major order
 * of elements): chunk j of send starts at send + j*sendChunkStride and
 * walks sendStrides; it goes to member j, whose chunk g (this rank's group
 * index) of recv, at recv + g*recvChunkStride walking recvStrides, receives
 * it. Strides are in elements and >= 0. The recv chunks must not overlap
 * one another or send. With row-major strides and chunk strides equal to
 * the chunk's element count this is distRtAllToAll; with a send chunk stride
 * of 0 every member receives the same block, an all-gather into strided
 * chunks (compiled gathers along an inner dim).
 * The MPI backend copies each chunk once, straight from the sender's send
 * box into the receiver's recv box, when all members are on one node and
 * the buffers of one side are all runtime memory (distRtAlloc, or a
 * compiled program's own buffers), which it keeps in a heap the node's
 * ranks share; otherwise it describes the chunks to MPI as derived
 * datatypes. A backend with neither (NCCL) packs into and unpacks from
 * temporaries on the stream. DIST_RT_STRIDED_ALLTOALL picks a path. */
DIST_RT_API int32_t distRtAllToAllStrided(
    int64_t group, int64_t numDims, const int64_t *chunkShape, const void *send,
    const int64_t *sendStrides, int64_t sendChunkStride, void *recv,
    const int64_t *recvStrides, int64_t recvChunkStride, int32_t dtype,
    void *stream);

/* send holds p*count elements; recv[0 .. count) = reduction over the members
 * of their chunk g. In place: send == recv (the result is in the first count
 * elements). */
DIST_RT_API int32_t distRtReduceScatter(int64_t group, const void *send,
                                        void *recv, int64_t countPerRank,
                                        int32_t dtype, int32_t redop,
                                        void *stream);

/* recv[0 .. count) = reduction over the members of send[0 .. count).
 * In place: send == recv. */
DIST_RT_API int32_t distRtAllReduce(int64_t group, const void *send, void *recv,
                                    int64_t count, int32_t dtype, int32_t redop,
                                    void *stream);

/* Whole-buffer permute over the world ranks of `mesh` (semantics §3 permute).
 * The tables are the same on every rank and indexed by world rank, with one
 * entry per rank 0..M, M the largest rank the mesh names (M = N-1 when the
 * mesh covers 0..N-1):
 *   srcRank[r]   the rank whose `send` buffer r receives into `recv`;
 *                r itself: local copy; -1: r's recv is left untouched.
 *   destList[destOffsets[r] .. destOffsets[r+1])  the ranks r sends to.
 * (srcRank has M+1 entries, destOffsets M+2.) The tables must agree: s != r
 * lists r as a destination exactly when srcRank[r] == s; r listing itself is
 * optional and then requires srcRank[r] == r. A rank in 0..M that is not a
 * device of the mesh must have srcRank -1 and no destinations. Collective
 * over the mesh's devices only: a rank outside the mesh returns at once.
 * send == recv is allowed. */
DIST_RT_API int32_t distRtPermute(int64_t mesh, const void *send, void *recv,
                                  int64_t count, int32_t dtype,
                                  const int64_t *srcRank,
                                  const int64_t *destOffsets,
                                  const int64_t *destList, void *stream);

/* The same permute with the tables computed here, from the two layouts:
 * compiled code stays the same size whatever the number of devices.
 * `dimAxes` holds dimAxesSize entries describing each of numDims tensor dims
 * as `nSrc, srcAxis[nSrc], nDst, dstAxis[nDst]` (mesh axis indices, major
 * to minor, of the source and the target layout). Receiver r's sender keeps
 * r's coordinate on every axis that splits no dim in the source, and on the
 * source's axes of dim d takes the mixed-radix digits of r's shard index
 * along d in the target (semantics §3 permute, the sender the planner prices).
 * Building the tables costs O(devices) on every rank. */
DIST_RT_API int32_t distRtPermuteByLayouts(int64_t mesh, const void *send,
                                           void *recv, int64_t count,
                                           int32_t dtype, int64_t numDims,
                                           const int64_t *dimAxes,
                                           int64_t dimAxesSize, void *stream);

/* Point-to-point exchange of boxes between world ranks (semantics §3
 * redistribute, within one mesh or from one mesh to another). `table` is
 * identical on every rank and lists numTransfers transfers of 2 + 3*numDims
 * int64 each: srcRank, dstRank,                  world ranks srcOffset[numDims]
 * element coordinates of the box in the sender's `send` dstOffset[numDims]
 * element coordinates of the box in the receiver's `recv` size[numDims] extents
 * of the box (>= 0; an empty box moves nothing) `send` is a row-major
 * contiguous tensor of sendShape, `recv` one of recvShape (numDims <=
 * DIST_RT_MAX_COPY_DIMS). A transfer with srcRank == dstRank is a local copy on
 * that rank. Every rank walks the whole table and does the transfers that name
 * it; a rank named by none returns at once (ranks outside both meshes of a
 * cross-mesh reshard). Elements of recv that no transfer writes are left
 * untouched. send and recv must not overlap.
 *
 * Checks: every rank checks the whole table alike (ranks in [0, worldSize),
 * offsets and sizes >= 0, numDims range), so a bad table fails on every rank
 * that calls; each rank checks the boxes it sends against its sendShape and
 * those it receives against its recvShape. sendShape/send may be NULL on a
 * rank that sends nothing, recvShape/recv on one that receives nothing.
 * While validation is on, every two ranks the table names exchange a small
 * signature first (dtype, the element counts each expects of the other, a
 * hash of the table): disagreeing ranks both fail with DIST_RT_ERR_MISMATCH
 * naming both, and a rank whose own checks failed makes its peers fail
 * instead of wait. Only ranks the table names take part.
 * Transfers between a pair of ranks are matched in table order. "mpi":
 * non-blocking point to point, all posted before any wait; between ranks of
 * one node whose send buffer is runtime memory (distRtAlloc), the receiver
 * copies the boxes straight out of the sender's buffer (one copy per
 * element). "nccl": the boxes are packed on the stream, sent and received in
 * one ncclGroupStart/End on the world communicator, and unpacked on the
 * stream. DIST_RT_EXCHANGE=auto|datatype|pack picks the mpi path. */
DIST_RT_API int32_t distRtExchange(int64_t numDims, const int64_t *sendShape,
                                   const void *send, const int64_t *recvShape,
                                   void *recv, int64_t numTransfers,
                                   const int64_t *table, int32_t dtype,
                                   void *stream);

/* distRtExchange in two halves, so that communication overlaps compute
 * (pipeline hand-offs: receives posted ahead, waits right before first use,
 * sends overlapped with the next microbatch). distRtExchangeStart checks and
 * posts everything this rank does in the exchange (the local copies are done
 * at once) and returns at once with *request set; distRtExchangeWait(request)
 * completes it: recv then holds its boxes and send may be written again.
 * Until then send must not be written and recv not read. Every call to start
 * is waited for exactly once; several exchanges may be in flight at once, in
 * any mix with the blocking calls. Two ranks that share several exchanges
 * must start them in the same order (their messages are told apart by that
 * order, not by the table). A rank the table does not name gets a request
 * that completes at once.
 *
 * Checks as distRtExchange: the table alike on every rank and this rank's
 * boxes and buffers at start (a failure returns it there; with validation on
 * and errors returned, the peers are told and fail at their wait instead of
 * waiting for data: start then waits for its peers' signatures). While
 * validation is on, the named ranks' signatures travel with the start and
 * are compared at the wait, before any data is used: a disagreement fails
 * both waits with DIST_RT_ERR_MISMATCH and the received data is discarded.
 * "mpi": the boxes as MPI messages (derived datatypes or staging through the
 * exchange's own scratch; no single copy out of a peer's heap, which needs
 * the peer to answer first). "nccl": the exchange is enqueued on the stream
 * at start (already asynchronous to the host) and the wait has nothing left
 * to do. */
DIST_RT_API int32_t distRtExchangeStart(
    int64_t numDims, const int64_t *sendShape, const void *send,
    const int64_t *recvShape, void *recv, int64_t numTransfers,
    const int64_t *table, int32_t dtype, void *stream, int64_t *request);
DIST_RT_API int32_t distRtExchangeWait(int64_t request);

/* distRtExchange for a table whose every transfer is a local copy (srcRank ==
 * dstRank): the redistribute steps that move nothing between ranks (replicated
 * to sharded, for one), which the compiler recognises from its table. Same
 * arguments and checks, except that a transfer between two ranks is an error
 * (DIST_RT_ERR_INVALID_ARGUMENT, on every rank) and that no signatures are
 * exchanged even while validation is on: no rank waits for another, and the
 * swap with every named rank cost far more than the copies. */
DIST_RT_API int32_t
distRtExchangeLocal(int64_t numDims, const int64_t *sendShape, const void *send,
                    const int64_t *recvShape, void *recv, int64_t numTransfers,
                    const int64_t *table, int32_t dtype, void *stream);

/*===---------------------- Local data movement --------------------------===*/
/* Run on the backend's memory (CPU loops for "mpi", CUDA kernels for
 * "nccl"). Shapes and strides are in elements; strides are >= 0; offsets are
 * applied to the pointers by the caller. Source and destination must not
 * overlap. At most DIST_RT_MAX_COPY_DIMS dims. */
#define DIST_RT_MAX_COPY_DIMS 8

/* dst[i0..in] = src[i0..in] over the box `sizes`, each side with its own
 * strides: slices, transposes, gathers of a padded block, etc. */
DIST_RT_API int32_t distRtCopyStrided(int64_t numDims, const int64_t *sizes,
                                      const void *src,
                                      const int64_t *srcStrides, void *dst,
                                      const int64_t *dstStrides, int32_t dtype,
                                      void *stream);

/* dst[i0..in] = 0 over the box `sizes` (keeps padding zero). */
DIST_RT_API int32_t distRtFillZero(int64_t numDims, const int64_t *sizes,
                                   void *dst, const int64_t *dstStrides,
                                   int32_t dtype, void *stream);

/* All-to-all packing. src is a contiguous row-major tensor of `shape`;
 * shape[dim] is split into `parts` chunks of c = shape[dim]/parts (must
 * divide). dst = chunk 0, chunk 1, ... each contiguous with shape[dim] = c:
 *   dst[j][.., i, ..] = src[.., j*c + i, ..]. */
DIST_RT_API int32_t distRtPackChunks(int64_t numDims, const int64_t *shape,
                                     int64_t dim, int64_t parts,
                                     const void *src, void *dst, int32_t dtype,
                                     void *stream);

/* Inverse of distRtPackChunks: src is `parts` contiguous chunks, dst the
 * contiguous tensor of `shape` (chunk j lands at dim offset j*c). */
DIST_RT_API int32_t distRtUnpackChunks(int64_t numDims, const int64_t *shape,
                                       int64_t dim, int64_t parts,
                                       const void *src, void *dst,
                                       int32_t dtype, void *stream);

/*===------------------------- Local compute -----------------------------===*/
/* Matrix products on the backend's memory (BLAS on the host for "mpi" when
 * the runtime was built with one, else loops; cuBLAS for "nccl"), for the
 * contractions of compiled programs (docs/compiler.md, "Contractions").
 * For every batch index `b` in [0, batch), row-major:
 *   C[b] += op(A[b]) * op(B[b]),  C[b] m x n,  op(A[b]) m x k,  op(B[b]) k x n
 * with X[b] = x + b * strideX elements, C[i][j] at c[i * ldc + j], A[i][p]
 * at a[i * lda + p] (transA == 0) or a[p * lda + i] (transA == 1), B[p][j] at
 * b[p * ldb + j] (transB == 0) or b[j * ldb + p] (transB == 1). Strides and
 * leading dimensions are in elements; ld >= max(1, row length). A and B have
 * `inputDType`, C `outputDType`: both f32, both f64, or f16/bf16 inputs with
 * an f16/bf16 (the same) or f32 output; products are accumulated in f32 (f64
 * for f64). C must not overlap A or B. */
DIST_RT_API int32_t distRtGemm(int32_t transA, int32_t transB, int64_t m,
                               int64_t n, int64_t k, const void *a, int64_t lda,
                               int64_t strideA, const void *b, int64_t ldb,
                               int64_t strideB, void *c, int64_t ldc,
                               int64_t strideC, int64_t batch,
                               int32_t inputDType, int32_t outputDType,
                               void *stream);

/*===---------------- GPU kernels of compiled programs -------------------===*/
/* What MLIR's gpu-to-llvm lowering calls to load and launch the kernels a
 * target=gpu program embeds (the ABI of MLIR's CUDA runtime wrappers),
 * implemented on the backend's device (docs/runtime.md, "GPU kernels of
 * compiled programs"). Compiled code calls them; they report failures by
 * the runtime's policy (abort, or distRtLastError). A backend without a GPU
 * refuses to load kernels. mgpuStreamCreate returns the runtime's stream;
 * mgpuStreamSynchronize and mgpuStreamDestroy do nothing: all of a
 * program's work is ordered on that stream, and the caller synchronizes. */
DIST_RT_API void *mgpuModuleLoad(void *data, size_t bytes);
DIST_RT_API void mgpuModuleUnload(void *module);
DIST_RT_API void *mgpuModuleGetFunction(void *module, const char *name);
DIST_RT_API void mgpuLaunchKernel(void *function, intptr_t gridX,
                                  intptr_t gridY, intptr_t gridZ,
                                  intptr_t blockX, intptr_t blockY,
                                  intptr_t blockZ, int32_t sharedBytes,
                                  void *stream, void **params, void **extra,
                                  size_t paramsCount);
DIST_RT_API void *mgpuStreamCreate(void);
DIST_RT_API void mgpuStreamDestroy(void *stream);
DIST_RT_API void mgpuStreamSynchronize(void *stream);

/*===----------------------- Memory and streams --------------------------===*/

/* Allocates `bytes` of backend memory (64-byte aligned host memory for
 * "mpi", cudaMalloc for "nccl"); NULL on failure. bytes == 0 gives NULL.
 * Freed blocks are kept and reused for requests of the same size (see
 * DIST_RT_CACHE_MIB): compiled code allocates the same temporaries on every
 * call. Reuse is ordered on the default stream, like all compiled work. */
DIST_RT_API void *distRtAlloc(int64_t bytes);
DIST_RT_API int32_t distRtFree(void *ptr);

/* The allocation functions that MLIR's memref-to-LLVM lowering calls with
 * use-generic-functions: code compiled by dist for target=gpu allocates its
 * buffers (and frees them) through these, in the backend's memory. */
DIST_RT_API void *_mlir_memref_to_llvm_alloc(uint64_t size);
DIST_RT_API void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment,
                                                     uint64_t size);
DIST_RT_API void _mlir_memref_to_llvm_free(void *ptr);

/* Copies between host and backend memory (kind: DIST_RT_COPY_*). */
DIST_RT_API int32_t distRtMemcpy(void *dst, const void *src, int64_t bytes,
                                 int32_t kind, void *stream);

/* The runtime's own stream (NULL for "mpi"; a non-blocking cudaStream_t owned
 * by the runtime for "nccl"). */
DIST_RT_API void *distRtDefaultStream(void);

/* Waits until everything enqueued on `stream` has completed, reporting any
 * asynchronous failure (e.g. a peer that died during an NCCL collective). */
DIST_RT_API int32_t distRtSynchronize(void *stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DIST_RUNTIME_DISTRUNTIME_H */
