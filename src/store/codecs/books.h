// The books domain's rows in the store: assets, sites, fixed costs, rental prices, node energy.
#pragma once

#include "store/codecs/codec.h"

namespace allot {

[[nodiscard]] Status write_row(Db& db, const NodeEnergy& energy);
[[nodiscard]] Status load_rows(Db& db, Tag<NodeEnergy> tag, std::vector<Row>& out);
const DocumentCodec<finance::Asset>& codec_of(Tag<finance::Asset> tag);
const DocumentCodec<Site>& codec_of(Tag<Site> tag);
const DocumentCodec<FixedCost>& codec_of(Tag<FixedCost> tag);
const DocumentCodec<RentalPrice>& codec_of(Tag<RentalPrice> tag);

}  // namespace allot
