#include "core/kernel/slices/regions.h"

#include "core/kernel/slices/find.h"

namespace allot {

const Latency* RegionsSlice::latency(const std::string& from, const std::string& region) const {
  return find_by_id(latencies, Latency{.from = from, .region = region}.key());
}

}  // namespace allot
