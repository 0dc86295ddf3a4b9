// What allotd decodes from node agents, over any bytes: the bodies of POST /v1/agent/join and
// POST /v1/agent/heartbeat, read by the decoders of api/routes/agent_routes.cc (parse_object,
// parse_join, parse_heartbeat, array_of and the log chunks' base64), and the address a join gives.
// The decoders live in that file's anonymous namespace, so the file is compiled into this one; its
// route handlers, which reach the whole core, are dropped at the link (fuzz/CMakeLists.txt).
// Properties: nothing crashes or throws; a heartbeat read whole has a node id.
#include "api/routes/agent_routes.cc"
#include "check.h"

namespace allot {
namespace {

void decode_logs(const json& doc) {
  auto chunks = array_of(doc, "logs", false);
  if (!chunks) return;
  for (const json& chunk : *chunks) {
    if (chunk.is_object() && chunk.contains("data") && chunk["data"].is_string()) {
      (void)base64_decode(chunk["data"].get<std::string>());
    }
  }
}

void decode(const std::string& body) {
  auto doc = parse_object(body);
  if (!doc) return;
  if (auto join = parse_join(*doc)) {
    (void)valid_address(join->address);
    (void)peer_address(join->address);
  }
  if (auto beat = parse_heartbeat(*doc)) {
    fuzz::require(doc->contains("node_id"), "a heartbeat read whole has a node id");
  }
  decode_logs(*doc);
}

}  // namespace
}  // namespace allot

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  allot::decode(std::string(allot::fuzz::bytes_of(data, size)));
  return 0;
}
