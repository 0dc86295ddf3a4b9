// Regions: the latency table (operator admins write it; anyone with a key reads it), the region
// catalog, and quotes: where a request would run now, ranked by price, carbon or latency.
#include <fmt/format.h>

#include "api/app.h"
#include "api/fields.h"
#include "api/placement_fields.h"
#include "api/reply.h"
#include "api/routes/regions.h"
#include "api/routes_util.h"
#include "common/money.h"
#include "core/regions/regions.h"

namespace allot {
namespace {

using nlohmann::json;

json optional_money(const std::optional<int64_t>& micros) {
  return micros ? json(Money::from_micros(*micros).to_string()) : json(nullptr);
}

json latency_json(const Latency& l) {
  return {{"from", l.from},
          {"region", l.region},
          {"rtt_ms", l.rtt_ms},
          {"updated_at", format_time(l.updated_at_ms)}};
}

// PUT /v1/latency {"from", "region", "rtt_ms"}: sets one entry, replacing the one there is.
Result<HttpResponse> set_latency(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  JsonBody body(call.request.body);
  SetLatency command{.from = body.required_string("from"),
                     .region = body.required_string("region")};
  const auto rtt_ms = body.optional_int("rtt_ms", INT64_MIN, INT64_MAX);
  ALLOT_TRY(body.finish());
  if (!rtt_ms) return fail(ErrorCode::kMissingField, "'rtt_ms' is required");
  command.rtt_ms = *rtt_ms;
  call.target_id = command.from + "/" + command.region;
  ALLOT_TRY(call.ctx.apply(command));
  return json_reply(200, latency_json(*call.ctx.state().latency(command.from, command.region)));
}

// GET /v1/latency[?from=LOCATION]: the entries by location then region, a page at a time.
Result<HttpResponse> list_latency(Call& call) {
  ALLOT_TRY_LET(const Page page, read_page(call.target, {"from"}));
  auto from = call.target.query.find("from");
  return page_of(
      call.ctx.state().latencies, page,
      [&](const Latency& l) { return from == call.target.query.end() || l.from == from->second; },
      latency_json);
}

// DELETE /v1/latency/{from}/{region}
Result<HttpResponse> delete_latency(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  const DeleteLatency command{.from = call.params.at(0), .region = call.params.at(1)};
  call.target_id = command.from + "/" + command.region;
  const Latency* before = call.ctx.state().latency(command.from, command.region);
  json out = before == nullptr ? json(nullptr) : latency_json(*before);
  ALLOT_TRY(call.ctx.apply(command));
  out["deleted_at"] = format_time(call.ctx.now_ms());
  return json_reply(200, out);
}

json region_json(const RegionInfo& info) {
  json models = json::array();
  for (const ModelOffer& m : info.models) {
    models.push_back({{"gpu_model", m.gpu_model},
                      {"gpus", m.gpus},
                      {"free_gpus", m.free_gpus},
                      {"on_demand_gpu_hour", optional_money(m.on_demand_micros)},
                      {"spot_gpu_hour", optional_money(m.spot_micros)},
                      {"spot_from_on_demand", m.spot_from_on_demand}});
  }
  return {
      {"region", info.region},
      {"models", models},
      {"carbon_g_per_kwh", info.carbon_g_per_kwh ? json(*info.carbon_g_per_kwh) : json(nullptr)},
      {"pue", info.pue_milli ? json(format_scaled(*info.pue_milli, 3)) : json(nullptr)},
      {"latency_ms", info.latency_ms}};
}

// GET /v1/regions: the catalog as it stands now.
Result<HttpResponse> list_regions(Call& call) {
  ALLOT_TRY(read_page(call.target, {}));
  json items = json::array();
  for (const RegionInfo& info : region_catalog(call.ctx.state(), call.ctx.now_ms())) {
    items.push_back(region_json(info));
  }
  return json_reply(200, {{"items", items}, {"next_after", nullptr}});
}

json option_json(const QuoteOption& o) {
  const json carbon =
      o.carbon_mg_per_hour ? json(format_scaled(*o.carbon_mg_per_hour, 3)) : json(nullptr);
  return {{"region", o.region},
          {"gpu_model", o.gpu_model},
          {"fits", o.fits},
          {"free_gpus", o.free_gpus},
          {"price_per_gpu_hour", optional_money(o.price_micros_per_gpu_hour)},
          {"price_per_hour", optional_money(o.price_micros_per_hour)},
          {"carbon_g_per_hour", carbon},
          {"latency_ms", o.latency_ms ? json(*o.latency_ms) : json(nullptr)}};
}

// POST /v1/quote {"gpus"?, "gpu_milli"?, "gpu_models"?, "price_class"?, "prefer"?, "from"?,
// "max_price"?, "regions"?}: where the request would run now, best first. Changes nothing.
Result<HttpResponse> quote(Call& call) {
  JsonBody body(call.request.body);
  const PlacementFields fields = read_placement_fields(body);
  ALLOT_TRY(body.finish());
  InstanceSpec spec;
  ALLOT_TRY(apply_placement_fields(fields, spec));
  ALLOT_TRY(check_gpu_request(spec));
  const State& state = call.ctx.state();
  const Quote quote = rank_quote(quote_options(state, spec, call.ctx.now_ms()), wishes_of(spec));
  json ranked = json::array();
  for (const RankedOption& r : quote.ranked) {
    json item = option_json(r.option);
    item["rank"] = r.rank;
    item["why"] = r.why;
    ranked.push_back(std::move(item));
  }
  json excluded = json::array();
  for (const ExcludedOption& e : quote.excluded) {
    json item = option_json(e.option);
    item["reason"] = e.reason;
    excluded.push_back(std::move(item));
  }
  return json_reply(200, {{"prefer", prefer_name(quote.prefer)},
                          {"price_class", price_class_name(spec.price_class)},
                          {"options", ranked},
                          {"excluded", excluded}});
}

constexpr Resource kResources[] = {
    {.path = "/v1/latency",
     .put = set_latency,
     .list = list_latency,
     .remove = delete_latency,
     .item = "/{from}/{region}"},
    {.path = "/v1/regions", .list = list_regions},
};

constexpr Route kQuote[] = {{"POST", "/v1/quote", quote}};

}  // namespace

std::span<const Route> region_routes() { return route_table<kResources, kQuote>(); }

}  // namespace allot
