// The admission domain's rows in the store: quotas and reservations.
#pragma once

#include "store/codecs/codec.h"

namespace allot {

const DocumentCodec<Quota>& codec_of(Tag<Quota> tag);
const DocumentCodec<Reservation>& codec_of(Tag<Reservation> tag);

}  // namespace allot
