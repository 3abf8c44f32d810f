//===- TopologyResolver.cpp - `topology=auto`: who calibrates -------------===//

#include "dist/Dialect/Dist/Transforms/TopologyResolver.h"

using namespace dist;

static TopologyResolver &resolver() {
  static TopologyResolver installed;
  return installed;
}

void dist::setTopologyResolver(TopologyResolver r) {
  resolver() = std::move(r);
}

const TopologyResolver &dist::getTopologyResolver() { return resolver(); }
