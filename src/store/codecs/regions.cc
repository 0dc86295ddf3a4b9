#include "store/codecs/regions.h"

#include "store/latency_json.h"

namespace allot {
namespace {

constexpr DocumentCodec<Latency> kLatencies{
    .table = "latencies",
    .keys = "from_location, region",
    .encode = latency_document,
    .decode = latency_from_document,
    .columns = [](const Latency& o) { return std::vector<DbValue>{o.from, o.region}; },
    .conflict = "from_location, region"};

}  // namespace

const DocumentCodec<Latency>& codec_of(Tag<Latency> /*tag*/) { return kLatencies; }

}  // namespace allot
