#include "store/codecs/books.h"

#include "store/finance_json.h"

namespace allot {
namespace {

constexpr std::string_view kUpsertNodeEnergy =
    "INSERT INTO node_energy (node_id, hour_ms, energy_mj) VALUES ($1, $2, $3) "
    "ON CONFLICT (node_id, hour_ms) DO UPDATE SET energy_mj = excluded.energy_mj";

}  // namespace

Status write_row(Db& db, const NodeEnergy& o) {
  const DbValue p[] = {o.node_id, o.hour_ms, o.energy_mj};
  return db.exec(kUpsertNodeEnergy, p);
}

Status load_rows(Db& db, Tag<NodeEnergy> /*tag*/, std::vector<Row>& out) {
  auto rows =
      db.query("SELECT node_id, hour_ms, energy_mj FROM node_energy ORDER BY node_id, hour_ms", {});
  if (!rows) return std::unexpected(rows.error());
  for (const DbRow& r : *rows) {
    out.emplace_back(
        NodeEnergy{.node_id = db_text(r[0]), .hour_ms = db_int(r[1]), .energy_mj = db_int(r[2])});
  }
  return {};
}

const DocumentCodec<finance::Asset>& codec_of(Tag<finance::Asset> /*tag*/) {
  static const DocumentCodec<finance::Asset> kCodec{
      .table = "assets",
      .upsert =
          "INSERT INTO assets (id, doc) VALUES ($1, $2) "
          "ON CONFLICT (id) DO UPDATE SET doc = excluded.doc",
      .order = "id",
      .columns = [](const finance::Asset& o) { return std::vector<DbValue>{o.id}; },
      .encode = asset_document,
      .decode = asset_from_document};
  return kCodec;
}

const DocumentCodec<Site>& codec_of(Tag<Site> /*tag*/) {
  static const DocumentCodec<Site> kCodec{
      .table = "sites",
      .upsert =
          "INSERT INTO sites (region, doc) VALUES ($1, $2) "
          "ON CONFLICT (region) DO UPDATE SET doc = excluded.doc",
      .order = "region",
      .columns = [](const Site& o) { return std::vector<DbValue>{o.region}; },
      .encode = site_document,
      .decode = site_from_document};
  return kCodec;
}

const DocumentCodec<FixedCost>& codec_of(Tag<FixedCost> /*tag*/) {
  static const DocumentCodec<FixedCost> kCodec{
      .table = "fixed_costs",
      .upsert =
          "INSERT INTO fixed_costs (id, doc) VALUES ($1, $2) "
          "ON CONFLICT (id) DO UPDATE SET doc = excluded.doc",
      .order = "id",
      .columns = [](const FixedCost& o) { return std::vector<DbValue>{o.id}; },
      .encode = fixed_cost_document,
      .decode = fixed_cost_from_document};
  return kCodec;
}

const DocumentCodec<RentalPrice>& codec_of(Tag<RentalPrice> /*tag*/) {
  static const DocumentCodec<RentalPrice> kCodec{
      .table = "rental_prices",
      .upsert =
          "INSERT INTO rental_prices (key, doc) VALUES ($1, $2) "
          "ON CONFLICT (key) DO UPDATE SET doc = excluded.doc",
      .order = "key",
      .columns = [](const RentalPrice& o) { return std::vector<DbValue>{o.key()}; },
      .encode = rental_price_document,
      .decode = rental_price_from_document};
  return kCodec;
}

}  // namespace allot
