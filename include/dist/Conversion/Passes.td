//===- Passes.td - dist conversion passes -------------------*- tablegen -*-===//

#ifndef DIST_CONVERSION_PASSES_TD
#define DIST_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def DistImportShard : Pass<"dist-import-shard", "::mlir::ModuleOp"> {
  let summary = "Turn upstream shard annotations into dist meshes, layouts and reshards";
  let description = [{
    Reads a program annotated with upstream MLIR's `shard` dialect
    (`shard.grid`, `shard.sharding`, `shard.shard`) and writes the same
    program in dist's terms, so that dist plans its reshards:

    - `shard.grid @g(shape = 2x4)` becomes `dist.mesh @g = <["0"=2, "1"=4]>`:
      grid axis k is the mesh axis named `"k"`.
    - `shard.sharding @g split_axes = [[0], [], [1, 2]]` is the layout
      `#dist.sharding<@g, [{"0"}, {}, {"1", "2"} ]>`: entry d lists the axes
      that split tensor dim d, major to minor; dims past the last entry are
      not split.
    - The first `shard.shard` of a value gives it that layout (with or
      without `annotate_for_users`): a function argument's type takes it as
      its encoding; so does an op result computed into a `tensor.empty`
      through linalg inits (the init chain takes it too, which is how dist
      states a computed result's layout). Any other op result stays free
      and is copied into a tensor of that layout (`linalg.map`), which
      `dist-partition` makes a local copy by computing the producer in that
      layout. A later annotation of the same value in another layout (the
      usual `shard.shard %v to %s1` then `shard.shard %0 to %s2
      annotate_for_users` pair) becomes a `dist.reshard`; in the same layout
      it disappears. Function signatures follow their arguments and
      returned values.
    - Elementwise `arith`/`math` ops on tensors in annotated functions become
      `linalg.generic` ops, which read operands of any layout (as
      `dist-partition` would rewrite them anyway).

    ```mlir
    shard.grid @g(shape = 2)
    func.func @f(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
      %s0 = shard.sharding @g split_axes = [[0]] : !shard.sharding
      %0 = shard.shard %arg0 to %s0 : tensor<8x8xf32>
      %s1 = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
      %1 = shard.shard %0 to %s1 annotate_for_users : tensor<8x8xf32>
      return %1 : tensor<8x8xf32>
    }
    // becomes
    dist.mesh @g = <["0"=2]>
    func.func @f(%arg0: tensor<8x8xf32, #dist.sharding<@g, [{"0"}, {} ]>>)
        -> tensor<8x8xf32, #dist.sharding<@g, [{}, {"0"} ]>> {
      %0 = dist.reshard %arg0 : tensor<8x8xf32, #dist.sharding<@g, [{"0"}, {} ]>>
                             -> tensor<8x8xf32, #dist.sharding<@g, [{}, {"0"} ]>>
      return %0 : tensor<8x8xf32, #dist.sharding<@g, [{}, {"0"} ]>>
    }
    ```

    What dist layouts cannot hold is a located error: halo sizes, explicit
    shard offsets (`sharded_dims_offsets`), grids of dynamic size, shardings
    not made by `shard.sharding`, and the other `shard` ops (collectives,
    process indices), which belong to already-partitioned programs.
  }];
  let dependentDialects = [
    "::dist::DistDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def DistLocalize : Pass<"dist-localize", "::mlir::ModuleOp"> {
  let summary = "Rewrite the global view into each device's local view";
  let description = [{
    Every tensor type with a `#dist.sharding` encoding (the global tensor)
    becomes the plain tensor of one device's local padded buffer, whose shape
    is `ceil(N_d / P_d)` per dim. Function signatures, calls and returns
    follow, and each collective becomes its `dist.local.*` form, which is
    defined on local shapes alone (permutes get their rank-to-rank table
    computed here). Padding stays zero through every move.

    Run it after `dist-lower-reshard`: a remaining `dist.reshard`, or any
    other op on sharded tensors, is reported as an error.

    A permute on a mesh of more than `permute-table-devices` devices carries
    the two layouts instead of its rank-to-rank table, and the runtime
    computes the senders (`distRtPermuteByLayouts`): its IR and compile time
    do not grow with the number of devices.

    ```mlir
    dist.mesh @m = <["x"=4]>
    func.func @f(%a: tensor<10xf32, #dist.sharding<@m, [{"x"} ]>>)
        -> tensor<10xf32, #dist.sharding<@m, [{} ]>> {
      %b = dist.all_gather %a axes = ["x"] dim = 0
          : tensor<10xf32, #dist.sharding<@m, [{"x"} ]>>
         -> tensor<10xf32, #dist.sharding<@m, [{} ]>>
      return %b : tensor<10xf32, #dist.sharding<@m, [{} ]>>
    }
    // becomes
    func.func @f(%a: tensor<3xf32>) -> tensor<10xf32> {
      %b = dist.local.all_gather %a on @m axes = ["x"] dim = 0
          : tensor<3xf32> -> tensor<10xf32>
      return %b : tensor<10xf32>
    }
    ```
  }];
  let dependentDialects = ["::dist::DistDialect"];
  let options = [
    Option<"permuteTableDevices", "permute-table-devices", "int64_t",
           /*default=*/"4096",
           "Largest mesh whose permutes carry a rank-to-rank table; on "
           "larger ones the runtime computes the senders from the layouts">
  ];
}

def DistDistinctResultBuffers
    : Pass<"dist-distinct-result-buffers", "::mlir::ModuleOp"> {
  let summary = "Give every buffer a function returns its own allocation";
  let description = [{
    Where a `func.return` returns one buffer at several positions
    (`return %b, %b`, from a tensor returned twice), every repeat becomes a
    fresh `memref.alloc` that the buffer is copied into. The `dist-to-llvm`
    pipeline runs it right before `buffer-results-to-out-params`, which
    turns each result into a caller-allocated out-parameter and, for a
    result that is a static allocation, computes into the out-parameter
    instead of copying: an allocation returned twice would be replaced by
    two out-parameters (upstream MLIR erases it twice and crashes). After
    this pass each out-parameter receives its own buffer.

    ```mlir
    %a = memref.alloc() : memref<8xf32>
    return %a, %a : memref<8xf32>, memref<8xf32>
    // becomes
    %a = memref.alloc() : memref<8xf32>
    %c = memref.alloc() : memref<8xf32>
    memref.copy %a, %c : memref<8xf32> to memref<8xf32>
    return %a, %c : memref<8xf32>, memref<8xf32>
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def ConvertDistToRuntime : Pass<"convert-dist-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Lower dist.buffer.* collectives to runtime calls";
  let description = [{
    Each `dist.buffer.*` op becomes calls into the dist runtime's C ABI
    (`distRtAllGather`, ...; include/dist/Runtime/DistRuntime.h) plus the
    local data movement around them: packing chunks of a non-leading dim for
    an all-to-all or a reduce-scatter, unpacking gathered blocks, slicing,
    and zero-filling the padding, written as `memref.subview` +
    `linalg.copy` / `linalg.fill` (vectorizable). Mesh and group handles come
    from `distRtMeshCreate` / `distRtGroup`, which the runtime caches.

    `target=cpu` works on host buffers with the MPI backend; local data
    movement is linalg on host memory, which lowers to vectorizable loops.

    `target=gpu` works on device buffers with the NCCL backend: local data
    movement goes through the runtime's strided-copy and fill kernels, and
    every call is enqueued on one stream per function
    (`distRtDefaultStream`), so the function returns with work in flight;
    the caller synchronizes. Buffer copies left by bufferization become
    device copies too. Allocations come from the runtime on both targets:
    the `dist-to-llvm` pipeline lowers `memref.alloc` to the
    `_mlir_memref_to_llvm_alloc` / `_free` functions, which the runtime
    implements in the backend's memory (device memory for NCCL) with a cache
    of freed blocks.

    ```mlir
    dist.buffer.all_reduce %in, %out on @m axes = ["x"] reduction = sum
        : memref<16xf32>, memref<16xf32>
    // becomes (roughly)
    %mesh = func.call @distRtMeshCreate(%c1, %sizes, %null) : ...
    %group = func.call @distRtGroup(%mesh, %c1, %axes) : ...
    %status = func.call @distRtAllReduce(%group, %inPtr, %outPtr, %c16, %f32, %sum, %null)
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"
  ];
  let options = [
    Option<"target", "target", "::dist::RuntimeTarget",
           /*default=*/"::dist::RuntimeTarget::Cpu",
           "cpu (host buffers, MPI) or gpu (device buffers, NCCL, a stream)",
           "::dist::runtimeTargetOptionValues()">
  ];
}

def ConvertContractionsToRuntime
    : Pass<"convert-contractions-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Lower local matrix products to the runtime's batched GEMM";
  let description = [{
    Every matrix product of a bufferized program, whatever op spells it
    (`linalg.matmul` with or without transposed maps, `linalg.batch_matmul`,
    a `linalg.generic` whose body is `out + a * b`, the inputs maybe widened
    with `arith.extf`), becomes calls of `distRtGemm`
    (include/dist/Runtime/DistRuntime.h): BLAS on host memory, cuBLAS on a
    GPU; exactly when those calls compute the op (`dist::codegen::
    matchStridedGemm`, include/dist/Codegen/StridedGemm.h, one analysis for
    every target).

    Every operand's address is written as a sum of strides times *virtual
    loops*: the loops, and the digits of a loop that an operand reads as
    `d floordiv G` or `d mod G` (grouped-query attention's kv head). The
    loops that all three operands move along are the batch, those of A and
    C the rows (m), of B and C the columns (n), of A and B the sum (k); each
    role's loops collapse into one when every operand holding them lays them
    out as one strided run, so a `(b, s, d) x (d, f)` product is a single GEMM
    with `m = b * s`. Every other loop (an output dim no input reads, a sum
    over one input only, what does not collapse) becomes an `scf.for` around
    the call that moves the operands' pointers. An output that is
    column-major is computed as `C^T = B^T A^T`. Products of f32, f64, f16
    and bf16 (the last two into themselves or f32) qualify; the rest
    (integers, masked bodies, dynamic strides, other index expressions, an
    output whose addresses overlap or alias an input, views BLAS cannot
    address) stay linalg ops and lower to loops. With `remarks` (or
    `-dist-remarks`) each product says which calls it became, or why it
    stays loops.

    ```mlir
    linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x4xf32>)
                  outs(%c : memref<8x4xf32>)
    // becomes (roughly)
    %status = func.call @distRtGemm(%c0_i32, %c0_i32, %c8, %c4, %c16,
        %aPtr, %c16, %c0, %bPtr, %c4, %c0, %cPtr, %c4, %c0, %c1,
        %f32, %f32, %null) : (...) -> i32
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect"
  ];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "A remark at every product: the GEMM calls it became, or why it "
           "stays loops (also -dist-remarks)">
  ];
}

def ConvertComputeToGpu : Pass<"convert-compute-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Map the local compute of target=gpu onto GPU kernels";
  let description = [{
    On `target=gpu` every buffer is device memory, so the compute that
    `convert-contractions-to-runtime` left (elementwise ops, reductions,
    fills, masks) must run in kernels. Each linalg op becomes parallel loops
    over its parallel dims, its reductions sequential inside; an op with no
    parallel dim runs in a one-iteration parallel loop (one thread). Each
    outermost parallel loop nest is collapsed to one dim, tiled by the block
    size (256) and mapped, tiles to blocks and the tile to threads with a
    guard for the tail, ready for `convert-parallel-loops-to-gpu`. A dense
    constant (`memref.get_global`, host memory) is copied to a device
    buffer where it is taken (`distRtMemcpy`). Any other load or store of a
    buffer outside the parallel loops is an error at its location: the host
    cannot touch device memory. Padded reductions keep their masks and
    `linalg.index` its global offsets: both are in the op's body, which the
    kernel runs unchanged.

    ```mlir
    linalg.generic {... iterator_types = ["parallel", "parallel"]}
        ins(%a : memref<8x32xf32>) outs(%b : memref<8x32xf32>) {...}
    // becomes (roughly)
    scf.parallel (%block) = (%c0) to (%c256) step (%c256) {
      scf.parallel (%thread) = (%c0) to (%c256) step (%c1) {
        %i = arith.addi %block, %thread : index
        scf.if %i < 256 { ... load, body, store at (%i / 32, %i % 32) ... }
      } {mapping = [#gpu.loop_dim_map<processor = thread_x, ...>]}
    } {mapping = [#gpu.loop_dim_map<processor = block_x, ...>]}
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::gpu::GPUDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"
  ];
}

#endif // DIST_CONVERSION_PASSES_TD
