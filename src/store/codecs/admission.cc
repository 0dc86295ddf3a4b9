#include "store/codecs/admission.h"

#include "store/cluster_json.h"

namespace allot {
namespace {

constexpr DocumentCodec<Quota> kQuotas{.table = "quotas",
                                       .keys = "id, tenant_id",
                                       .encode = quota_document,
                                       .decode = quota_from_document};
constexpr DocumentCodec<Reservation> kReservations{.table = "reservations",
                                                   .keys = "id, tenant_id",
                                                   .encode = reservation_document,
                                                   .decode = reservation_from_document};

}  // namespace

const DocumentCodec<Quota>& codec_of(Tag<Quota> /*tag*/) { return kQuotas; }
const DocumentCodec<Reservation>& codec_of(Tag<Reservation> /*tag*/) { return kReservations; }

}  // namespace allot
