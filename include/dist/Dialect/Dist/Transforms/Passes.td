//===- Passes.td - dist transformation passes ---------------*- tablegen -*-===//

#ifndef DIST_DIALECT_DIST_TRANSFORMS_PASSES_TD
#define DIST_DIALECT_DIST_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

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
  let options = [
    Option<"topology", "topology", "std::string", /*default=*/"\"\"",
           "JSON file with per-axis cost parameters "
           "({\"axes\": {\"x\": {\"alpha\": 1e-5, \"beta\": 2.7e-12}}})">,
    ListOption<"alpha", "alpha", "std::string",
               "Per-axis latency overrides, AXIS=SECONDS (e.g. x=1e-5)">,
    ListOption<"beta", "beta", "std::string",
               "Per-axis inverse bandwidth overrides, AXIS=SECONDS_PER_BYTE">,
    Option<"strategy", "strategy", "std::string", /*default=*/"\"optimal\"",
           "Search strategy: optimal or greedy">,
    Option<"cacheDir", "cache-dir", "std::string", /*default=*/"\"\"",
           "Directory of the persistent plan cache (empty: in memory only)">,
    Option<"maxPeakBytes", "max-peak-bytes", "int64_t", /*default=*/"0",
           "Reject plans whose per-device peak exceeds this many bytes (0: no limit)">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Attach a remark with the plan to every reshard (also -dist-remarks)">
  ];
  let statistics = [
    Statistic<"numReshards", "reshards-lowered", "Number of reshards lowered">,
    Statistic<"numCacheHits", "cache-hits", "Plans found in the plan cache">,
    Statistic<"numCacheMisses", "cache-misses", "Plans computed by the planner">,
    Statistic<"numCollectives", "collectives-emitted", "Collective ops emitted">,
    Statistic<"totalCostNs", "modelled-cost-ns",
              "Total modelled cost of the emitted plans, in nanoseconds">
  ];
}

#endif // DIST_DIALECT_DIST_TRANSFORMS_PASSES_TD
