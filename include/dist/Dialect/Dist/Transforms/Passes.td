//===- Passes.td - dist transformation passes ---------------*- tablegen -*-===//

#ifndef DIST_DIALECT_DIST_TRANSFORMS_PASSES_TD
#define DIST_DIALECT_DIST_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

// The cost model and the planner's knobs: dist-partition prices reshards
// exactly as dist-lower-reshard then plans them, so both take these options.
// They are the rows of PlanningOptions.def (from which the pipelines and
// dist-run declare theirs), written out because TableGen cannot read it;
// test/Dialect/Dist/Transforms/PlanningOptionsTest.cpp checks that the
// passes take every row under its flag with its default.
defvar DistReshardPlanningOptions = [
  Option<"topology", "topology", "std::string", /*default=*/"\"\"",
         "JSON file with per-axis cost parameters "
         "({\"axes\": {\"x\": {\"alpha\": 1e-5, \"beta\": 2.7e-12}}}), "
         "or auto: this machine, calibrated once for the module's meshes "
         "where the tool can (dist-opt, dist-run)">,
  ListOption<"alpha", "alpha", "std::string",
             "Per-axis latency overrides, AXIS=SECONDS (e.g. x=1e-5)">,
  ListOption<"beta", "beta", "std::string",
             "Per-axis inverse bandwidth overrides, AXIS=SECONDS_PER_BYTE">,
  Option<"strategy", "strategy", "::dist::planner::Strategy",
         /*default=*/"::dist::planner::Strategy::Optimal",
         "How reshards are planned (and so priced): optimal or greedy",
         "::dist::strategyOptionValues()">,
  Option<"moves", "moves", "::dist::planner::MoveSet",
         /*default=*/"::dist::planner::MoveSet::All",
         "Moves plans may use: all, or collective (no point-to-point "
         "redistribute within a mesh)", "::dist::moveSetOptionValues()">,
  Option<"cacheDir", "cache-dir", "std::string", /*default=*/"\"\"",
         "Directory of the persistent plan cache (empty: in memory only)">
];

def DistLowerReshard : Pass<"dist-lower-reshard"> {
  let summary = "Replace every dist.reshard by its planned sequence of collectives";
  let description = [{
    Plans each `dist.reshard` with the dist planner and replaces it by the
    cheapest sequence of explicit collective ops (`dist.all_gather`,
    `dist.all_to_all`, ...) under the alpha-beta cost model. Every emitted op
    is verified, and the last step's type is the reshard's type exactly. A
    reshard between equal layouts disappears.

    The pass runs on any operation: on a module it lowers every reshard in it,
    and it can be nested on functions (`func.func(dist-lower-reshard)`) to
    plan functions in parallel.

    Cost parameters, from weakest to strongest: the defaults (alpha = 1e-5 s,
    beta = 1/370e9 s/B for every axis), the mesh's own `dist.cost` attribute,
    the `topology` file, then the per-axis `alpha`/`beta` options.

    Plans are cached: in memory for the whole process, and on disk when
    `cache-dir` is set, so that later compilations reuse them.

    ```mlir
    dist.mesh @m = <["x"=2, "y"=4]>
    %1 = dist.reshard %0 : tensor<16x16xf32, #dist.sharding<@m, [{"x"}, {} ]>>
                        -> tensor<16x16xf32, #dist.sharding<@m, [{}, {"x"} ]>>
    // becomes
    %1 = dist.all_to_all %0 axes = ["x"] dim = 0 to_dim = 1
        : tensor<16x16xf32, #dist.sharding<@m, [{"x"}, {} ]>>
       -> tensor<16x16xf32, #dist.sharding<@m, [{}, {"x"} ]>>
    ```
  }];
  let dependentDialects = ["::dist::DistDialect"];
  let options = !listconcat(DistReshardPlanningOptions, [
    Option<"maxPeakBytes", "max-peak-bytes", "int64_t", /*default=*/"0",
           "Reject plans whose per-device peak exceeds this many bytes (0: no limit)">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Attach a remark with the plan to every reshard (also -dist-remarks)">
  ]);
  let statistics = [
    Statistic<"numReshards", "reshards-lowered", "Number of reshards lowered">,
    Statistic<"numCacheHits", "cache-hits", "Plans found in the plan cache">,
    Statistic<"numCacheMisses", "cache-misses", "Plans computed by the planner">,
    Statistic<"numCollectives", "collectives-emitted", "Collective ops emitted">,
    Statistic<"totalCostNs", "modelled-cost-ns",
              "Total modelled cost of the emitted plans, in nanoseconds">
  ];
}

def DistPartition : Pass<"dist-partition", "::mlir::ModuleOp"> {
  let summary = "Give global-view compute its sharded form and its layouts";
  let description = [{
    A function written in the global view may hold compute between its
    sharded arguments and results: linalg structured ops (`linalg.matmul`,
    `linalg.batch_matmul`, `linalg.generic`, `linalg.map`, `linalg.reduce`,
    `linalg.transpose`, `linalg.broadcast`, `linalg.fill`, ...), elementwise
    `arith` and `math` ops on tensors, `tensor.empty` and splat constants.
    Tensors without a `#dist.sharding` encoding are *free*; this pass gives
    every one of them a layout and inserts `dist.reshard` where an operand
    must move, so that `dist-lower-reshard` can plan the moves and
    `dist-localize` can give each op its per-device form.

    Every op is described by one rule derived from its indexing maps: each
    loop dimension may be split by mesh axes, an operand dimension indexed by
    a loop dimension is split like it, a split reduction dimension leaves the
    result `partial` with the kind of the op's combiner (sum for add, max for
    max, ...), and partial operands flow through the op where that is exact
    (see docs/partitioning.md). The layouts are chosen to minimise the total
    modelled cost of every reshard the program needs, priced by the planner
    with the same cost model as `dist-lower-reshard`.

    ```mlir
    dist.mesh @m = <["tp"=4]>
    func.func @mlp(%x: tensor<8x16xf32, #dist.sharding<@m, [{}, {} ]>>,
                   %w: tensor<16x32xf32, #dist.sharding<@m, [{}, {"tp"} ]>>)
        -> tensor<8x32xf32, #dist.sharding<@m, [{}, {"tp"} ]>> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<8x32xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
      %y = linalg.matmul ins(%x, %w : tensor<8x16xf32, #dist.sharding<@m, [{}, {} ]>>,
                                       tensor<16x32xf32, #dist.sharding<@m, [{}, {"tp"} ]>>)
                         outs(%f : tensor<8x32xf32>) -> tensor<8x32xf32, #dist.sharding<@m, [{}, {"tp"} ]>>
      return %y : tensor<8x32xf32, #dist.sharding<@m, [{}, {"tp"} ]>>
    }
    // The matmul's column loop is split by "tp": no reshard is needed, and
    // the fill and the empty tensor take the layout [{}, {"tp"} ] too.
    ```

    The steps can be inspected one at a time: `stop-after=normalize` only
    rewrites the compute into the single form the rules read (elementwise
    ops to `linalg.generic`, splat constants to `linalg.fill`, one copy of a
    constant per use).

    `chooser` selects how layouts are chosen, in the reshard planner's words:
    `optimal` (the default) solves for the whole program at once; `greedy`
    decides op by op in program order, each op taking the layouts its
    operands already have when that is cheapest (what an eager runtime such
    as DTensor does at dispatch); and `keep-larger` makes each op keep its
    largest operand's layout (the rule of Shardy's explicit-reshard
    insertion). The last two are baselines for the benchmark (`joint` and
    `per-op`, the older names of the first two, are still taken). `optimal`
    is exact (docs/partitioning.md, "The exact choice") unless its search
    passes its limits, and the remark says which. The solver is the
    planner's, MLIR-free (dist/Planner/LayoutSolver.h), and takes problems
    from other producers too (`dist-plan --layout-problem`).

    The objective is the modelled time: every reshard's planned cost, plus,
    when the topology file describes the device (`"device": {"flops": F,
    "mem_bw": B, "memory": BYTES}`), every op's compute by a roofline. The
    peak bytes per device (the arguments, plus the live intermediates at
    their local padded size, semantics §6a) must fit `memory-budget`, else
    the device's memory; a budget nothing fits is an error naming the
    smallest one that does.
  }];
  let dependentDialects = [
    "::dist::DistDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect", "::mlir::arith::ArithDialect"
  ];
  let options = !listconcat(DistReshardPlanningOptions, [
    Option<"chooser", "chooser", "::dist::LayoutChooser",
           /*default=*/"::dist::LayoutChooser::Optimal",
           "How layouts are chosen: optimal, greedy or keep-larger",
           "::dist::layoutChooserOptionValues()">,
    Option<"stopAfter", "stop-after", "::dist::PartitionStep",
           /*default=*/"::dist::PartitionStep::Partition",
           "Last step to run: normalize (compute rewritten to linalg ops, "
           "constants to fills, no layout chosen) or partition (everything)",
           "::dist::partitionStepOptionValues()">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Report the chosen layouts and their modelled cost as remarks "
           "(also -dist-remarks)">,
    Option<"memoryBudget", "memory-budget", "uint64_t", /*default=*/"0",
           "Bytes one device may hold (0: the topology's device memory, "
           "else unlimited)">,
    Option<"timeLimit", "time-limit", "double", /*default=*/"5.0",
           "Seconds the exact search may take per function before the "
           "heuristic answers (the remark then gives its optimality gap)">
  ]);
}

def DistPipeline : Pass<"dist-pipeline", "::mlir::ModuleOp"> {
  let summary = "Run a function whose compute spans several meshes as a "
                "pipeline of microbatches";
  let description = [{
    Semantics §3c. In a function whose tensors lie on several meshes and
    whose arguments mark a batch dim (`{dist.batch_dim = D}`), every op runs
    once per microbatch: the marked arguments are sliced into `microbatches`
    equal parts along their batch dims (which `microbatches` must divide),
    each op is cloned per part with the batch dim of its tensors cut to the
    part (found by following the batch dims through the ops' indexing maps,
    elementwise ops and reshards), and each result with a batch dim is the
    concatenation of its parts. Ops are emitted microbatch after microbatch,
    so that dist-partition cuts one stage function per mesh and microbatch:
    a stage's ranks compute microbatch `m + 1` while the next stage computes
    `m` (GPipe's order; the hand-offs are still blocking). An op that mixes
    the batch with other dims, reduces over it, or that no rule follows is a
    located error.

    ```mlir
    func.func @f(%x: tensor<16x32xf32, #dist.sharding<@s0, [{}, {} ]>> {dist.batch_dim = 0 : i64}, ...)
    // dist-pipeline{microbatches=2}: %x[0:8] and %x[8:16] each through the
    // stages, the results concatenated along dim 0
    ```
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
  let options = [
    Option<"microbatches", "microbatches", "int64_t", /*default=*/"1",
           "How many parts the batch is cut into (1: the function as it is)">
  ];
}

#endif // DIST_DIALECT_DIST_TRANSFORMS_PASSES_TD
