#include "store/codecs/books.h"

#include "store/finance_json.h"

namespace allot {
namespace {

constexpr std::string_view kUpsertNodeEnergy =
    "INSERT INTO node_energy (node_id, hour_ms, energy_mj) VALUES ($1, $2, $3) "
    "ON CONFLICT (node_id, hour_ms) DO UPDATE SET energy_mj = excluded.energy_mj";

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

Status write_row(Db& db, const NodeEnergy& o) {
  const DbValue p[] = {o.node_id, o.hour_ms, o.energy_mj};
  return db.exec(kUpsertNodeEnergy, p);
}

Status load_rows(Db& db, Tag<NodeEnergy> /*tag*/, std::vector<Row>& out) {
  return load_each(
      db, "SELECT node_id, hour_ms, energy_mj FROM node_energy ORDER BY node_id, hour_ms", out,
      [](const DbRow& r) {
        return NodeEnergy{
            .node_id = db_text(r[0]), .hour_ms = db_int(r[1]), .energy_mj = db_int(r[2])};
      });
}

const DocumentCodec<finance::Asset>& codec_of(Tag<finance::Asset> /*tag*/) { return kAssets; }
const DocumentCodec<Site>& codec_of(Tag<Site> /*tag*/) { return kSites; }
const DocumentCodec<FixedCost>& codec_of(Tag<FixedCost> /*tag*/) { return kFixedCosts; }
const DocumentCodec<RentalPrice>& codec_of(Tag<RentalPrice> /*tag*/) { return kRentalPrices; }

}  // namespace allot
