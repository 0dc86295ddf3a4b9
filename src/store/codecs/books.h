// The books domain's rows in the store: assets, sites, fixed costs, rental prices, node energy.
#pragma once

#include "store/codecs/columns.h"

namespace allot {

const ColumnCodec<NodeEnergy>& codec_of(Tag<NodeEnergy> tag);
const DocumentCodec<finance::Asset>& codec_of(Tag<finance::Asset> tag);
const DocumentCodec<Site>& codec_of(Tag<Site> tag);
const DocumentCodec<FixedCost>& codec_of(Tag<FixedCost> tag);
const DocumentCodec<RentalPrice>& codec_of(Tag<RentalPrice> tag);

}  // namespace allot
