#include "store/latency_json.h"

#include "common/document.h"

namespace allot {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Latency, from, region, rtt_ms, updated_at_ms, deleted_at_ms)

nlohmann::json latency_document(const Latency& l) { return l; }

Result<Latency> latency_from_document(const nlohmann::json& d) {
  return from_document<Latency>(d, "latency");
}

}  // namespace allot
