#include "store/latency_json.h"

namespace allot {

using nlohmann::json;

json latency_document(const Latency& l) {
  return {{"from", l.from},
          {"region", l.region},
          {"rtt_ms", l.rtt_ms},
          {"updated_at_ms", l.updated_at_ms},
          {"deleted_at_ms", l.deleted_at_ms}};
}

Result<Latency> latency_from_document(const json& d) {
  try {
    return Latency{.from = d.at("from"),
                   .region = d.at("region"),
                   .rtt_ms = d.at("rtt_ms"),
                   .updated_at_ms = d.at("updated_at_ms"),
                   .deleted_at_ms = d.at("deleted_at_ms")};
  } catch (const json::exception& e) {
    return fail(ErrorCode::kInternal, std::string("a stored latency is malformed: ") + e.what());
  }
}

}  // namespace allot
