// The price catalog: operator admins set prices (GPU prices, and each region's storage price per
// GB-month); anyone with a key reads them. Storage prices list under gpu_model "storage".
#include <fmt/format.h>

#include "api/app.h"
#include "api/fields.h"
#include "api/reply.h"
#include "api/routes/money.h"
#include "api/routes_util.h"
#include "api/wire/admission.h"
#include "common/money.h"

namespace allot {
namespace {

using nlohmann::json;

Result<int64_t> read_rate(std::string_view field, const std::optional<std::string>& text) {
  if (!text) return 0;
  return read_money(field, *text);
}

// A region's storage price: {"region", "storage_gb_month", "effective_at"?}, nothing else.
Result<meter::Price> storage_price(JsonBody& body) {
  auto [region, rate] = body.required_string_fields({"region", "storage_gb_month"});
  auto [effective_at] = body.optional_string_fields({"effective_at"});
  ALLOT_TRY(body.finish());
  meter::Price price{.key = meter::storage_key(region)};
  ALLOT_TRY_ASSIGN(price.storage_gb_month_micros, read_money("storage_gb_month", rate));
  if (effective_at) ALLOT_TRY_ASSIGN(price.effective_ms, read_time("effective_at", *effective_at));
  return price;
}

Result<meter::Price> gpu_price(JsonBody& body) {
  auto [model, region] = body.required_string_fields({"gpu_model", "region"});
  auto [price_class, gpu_hour, cpu_hour, memory_gib_hour, effective_at] =
      body.optional_string_fields(
          {"price_class", "gpu_hour", "cpu_hour", "memory_gib_hour", "effective_at"});
  ALLOT_TRY(body.finish());
  if (!gpu_hour) return fail(ErrorCode::kMissingField, "'gpu_hour' is required");
  meter::Price price{.key = {.model = model, .region = region}};
  if (price_class) {
    auto parsed = parse_price_class(*price_class);
    if (!parsed) {
      return fail(ErrorCode::kInvalidArgument, "price_class must be on-demand, spot or reserved");
    }
    price.key.price_class = *parsed;
  }
  ALLOT_TRY_ASSIGN(price.gpu_hour_micros, read_rate("gpu_hour", gpu_hour));
  ALLOT_TRY_ASSIGN(price.cpu_hour_micros, read_rate("cpu_hour", cpu_hour));
  ALLOT_TRY_ASSIGN(price.memory_gib_hour_micros, read_rate("memory_gib_hour", memory_gib_hour));
  if (effective_at) ALLOT_TRY_ASSIGN(price.effective_ms, read_time("effective_at", *effective_at));
  return price;
}

// PUT /v1/prices: a GPU price ({"gpu_model", ...}) or, with "storage_gb_month", a region's
// storage price.
Result<HttpResponse> set_price(Call& call) {
  JsonBody body(call.request.body);
  const bool storage = body.document().is_object() && body.document().contains("storage_gb_month");
  ALLOT_TRY_LET(meter::Price price, storage ? storage_price(body) : gpu_price(body));
  ALLOT_TRY(require_operator_admin(call.caller));
  ALLOT_TRY(call.ctx.apply(SetPrice{.price = price}));
  if (price.effective_ms == 0) price.effective_ms = call.ctx.now_ms();
  return json_reply(200, to_json(price, call.ctx.now_ms()));
}

Result<HttpResponse> list_prices(Call& call) {
  for (const auto& [name, value] : call.target.query) {
    // The catalog is small and comes in one page; limit and after are taken for the CLI's sake.
    if (name != "at" && name != "gpu_model" && name != "region" && name != "price_class" &&
        name != "limit" && name != "after") {
      return fail(ErrorCode::kUnknownField, fmt::format("unknown query parameter '{}'", name));
    }
  }
  TimeMs at = call.ctx.now_ms();
  if (auto it = call.target.query.find("at"); it != call.target.query.end()) {
    auto parsed = parse_time(it->second);
    if (!parsed) return fail(ErrorCode::kInvalidArgument, "'at' must be RFC 3339 time in UTC");
    at = *parsed;
  }
  auto matches = [&](const char* name, std::string_view value) {
    auto it = call.target.query.find(name);
    return it == call.target.query.end() || it->second == value;
  };
  // Per key: the price in force at `at`, then the changes after it.
  json items = json::array();
  const meter::PriceCatalog& catalog = call.ctx.state().prices;
  for (const auto* table : {&catalog.prices(), &catalog.storage_prices()}) {
    for (const auto& [key, by_time] : *table) {
      if (!matches("gpu_model", key.model) || !matches("region", key.region) ||
          !matches("price_class", price_class_name(key.price_class))) {
        continue;
      }
      auto from = by_time.upper_bound(at);
      if (from != by_time.begin()) from = std::prev(from);
      for (auto it = from; it != by_time.end(); ++it) items.push_back(to_json(it->second, at));
    }
  }
  return json_reply(200, {{"items", items}, {"next_after", nullptr}});
}

constexpr Resource kResources[] = {
    {.path = "/v1/prices", .put = set_price, .list = list_prices},
};

}  // namespace

std::span<const Route> price_routes() { return route_table<kResources>(); }

}  // namespace allot
