#include "store/codecs/admission.h"

#include "store/cluster_json.h"

namespace allot {
const DocumentCodec<Quota>& codec_of(Tag<Quota> /*tag*/) {
  static const DocumentCodec<Quota> kCodec{
      .table = "quotas",
      .upsert =
          "INSERT INTO quotas (id, tenant_id, doc) VALUES ($1, $2, $3) "
          "ON CONFLICT (id) DO UPDATE SET doc = excluded.doc",
      .order = "id",
      .columns = [](const Quota& o) { return std::vector<DbValue>{o.id, o.tenant_id}; },
      .encode = quota_document,
      .decode = quota_from_document};
  return kCodec;
}

const DocumentCodec<Reservation>& codec_of(Tag<Reservation> /*tag*/) {
  static const DocumentCodec<Reservation> kCodec{
      .table = "reservations",
      .upsert =
          "INSERT INTO reservations (id, tenant_id, doc) VALUES ($1, $2, $3) "
          "ON CONFLICT (id) DO UPDATE SET doc = excluded.doc",
      .order = "id",
      .columns = [](const Reservation& o) { return std::vector<DbValue>{o.id, o.tenant_id}; },
      .encode = reservation_document,
      .decode = reservation_from_document};
  return kCodec;
}

}  // namespace allot
