#include "store/codecs/books.h"

#include "store/finance_json.h"

namespace allot {
namespace {

constexpr auto kNodeEnergyColumns = ALLOT_COLUMNS(NodeEnergy, node_id, hour_ms, energy_mj);
constexpr ColumnCodec<NodeEnergy> kNodeEnergy{.table = "node_energy",
                                              .columns = kNodeEnergyColumns,
                                              .conflict = "node_id, hour_ms",
                                              .updated = "energy_mj"};

constexpr DocumentCodec<finance::Asset> kAssets{
    .table = "assets", .keys = "id", .encode = asset_document, .decode = asset_from_document};
constexpr DocumentCodec<Site> kSites{.table = "sites",
                                     .keys = "region",
                                     .encode = site_document,
                                     .decode = site_from_document,
                                     .conflict = "region"};
constexpr DocumentCodec<FixedCost> kFixedCosts{.table = "fixed_costs",
                                               .keys = "id",
                                               .encode = fixed_cost_document,
                                               .decode = fixed_cost_from_document};
constexpr DocumentCodec<RentalPrice> kRentalPrices{
    .table = "rental_prices",
    .keys = "key",
    .encode = rental_price_document,
    .decode = rental_price_from_document,
    .columns = [](const RentalPrice& o) { return std::vector<DbValue>{o.key()}; },
    .conflict = "key"};

}  // namespace

const ColumnCodec<NodeEnergy>& codec_of(Tag<NodeEnergy> /*tag*/) { return kNodeEnergy; }
const DocumentCodec<finance::Asset>& codec_of(Tag<finance::Asset> /*tag*/) { return kAssets; }
const DocumentCodec<Site>& codec_of(Tag<Site> /*tag*/) { return kSites; }
const DocumentCodec<FixedCost>& codec_of(Tag<FixedCost> /*tag*/) { return kFixedCosts; }
const DocumentCodec<RentalPrice>& codec_of(Tag<RentalPrice> /*tag*/) { return kRentalPrices; }

}  // namespace allot
