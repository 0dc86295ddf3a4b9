// The regions domain's rows in the store: the latency table.
#pragma once

#include "store/codecs/codec.h"

namespace allot {

const DocumentCodec<Latency>& codec_of(Tag<Latency> tag);

}  // namespace allot
