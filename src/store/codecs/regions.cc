#include "store/codecs/regions.h"

#include "store/latency_json.h"

namespace allot {
const DocumentCodec<Latency>& codec_of(Tag<Latency> /*tag*/) {
  static const DocumentCodec<Latency> kCodec{
      .table = "latencies",
      .upsert =
          "INSERT INTO latencies (from_location, region, doc) VALUES ($1, $2, $3) "
          "ON CONFLICT (from_location, region) DO UPDATE SET doc = excluded.doc",
      .order = "from_location, region",
      .columns = [](const Latency& o) { return std::vector<DbValue>{o.from, o.region}; },
      .encode = latency_document,
      .decode = latency_from_document};
  return kCodec;
}

}  // namespace allot
