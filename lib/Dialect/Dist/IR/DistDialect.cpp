//===- DistDialect.cpp - dist dialect registration ------------------------===//

#include "dist/Dialect/Dist/IR/DistDialect.h"
#include "dist/Dialect/Dist/IR/DistAttrs.h"
#include "dist/Dialect/Dist/IR/DistOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dist;

#include "dist/Dialect/Dist/IR/DistDialect.cpp.inc"

void DistDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "dist/Dialect/Dist/IR/DistOps.cpp.inc"
      >();
}

planner::PlanCache &
DistDialect::getPlanCache(StringRef directory,
                          const planner::PlanCache::WarningHandler &onWarning) {
  std::lock_guard<std::mutex> lock(planCachesMutex);
  std::unique_ptr<planner::PlanCache> &cache = planCaches[directory];
  if (!cache) {
    planner::PlanCache::Options options;
    options.directory = directory.str();
    cache = std::make_unique<planner::PlanCache>(std::move(options), onWarning);
  }
  return *cache;
}
