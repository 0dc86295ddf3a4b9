#include "core/regions/regions.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/limits.h"
#include "common/money.h"
#include "core/kernel/gpu_models.h"
#include "core/kernel/lookups.h"
#include "core/kernel/validate.h"

namespace allot {
namespace {

// The request's GPU milli in all: whole GPUs count 1000 each, on each member of a gang.
int64_t total_milli(const InstanceSpec& spec) {
  const int64_t per_node = spec.gpus > 0 ? int64_t{spec.gpus} * 1000 : int64_t{spec.gpu_milli};
  return per_node * std::max(spec.nodes, 1);
}

// floor(rate * milli / 1000) without leaving int64: rates are bounded by kMaxMoneyMicros.
int64_t per_milli(int64_t rate, int64_t milli) {
  return rate / 1000 * milli + rate % 1000 * milli / 1000;
}

// The price work of `price_class` on `model` in `region` is charged now (spot may fall back to
// on-demand: meter::PriceCatalog::charged), or none.
std::optional<int64_t> price_now(const State& state, const std::string& model,
                                 const std::string& region, PriceClass price_class, TimeMs now_ms) {
  const meter::Price* price = state.prices.charged(
      meter::PriceKey{.model = model, .region = region, .price_class = price_class}, now_ms);
  if (price == nullptr) return std::nullopt;
  return price->gpu_hour_micros;
}

void add_offers(const State& state, RegionInfo& info, TimeMs now_ms) {
  std::map<std::string, ModelOffer> offers;
  for (const auto& [id, node] : state.nodes) {
    if (node.region != info.region || !node_takes_work(node)) continue;
    for (const Gpu& gpu : node.gpus) {
      if (!gpu.healthy) continue;
      ModelOffer& offer = offers[gpu.model];
      ++offer.gpus;
      offer.free_gpus += gpu.used_milli == 0 ? 1 : 0;
    }
  }
  for (const auto& [key, by_time] : state.prices.prices()) {
    if (key.region == info.region) offers[key.model];
  }
  for (auto& [model, offer] : offers) {
    offer.gpu_model = model;
    offer.on_demand_micros = price_now(state, model, info.region, PriceClass::kOnDemand, now_ms);
    offer.spot_micros = price_now(state, model, info.region, PriceClass::kSpot, now_ms);
    offer.spot_from_on_demand =
        offer.spot_micros &&
        state.prices.at({.model = model, .region = info.region, .price_class = PriceClass::kSpot},
                        now_ms) == nullptr;
    info.models.push_back(offer);
  }
}

// Whether one node of the region that takes work has room for `spec` on GPUs of `model` now, and
// the most wholly free GPUs of that model on one node.
std::pair<bool, int> room_for(const State& state, const InstanceSpec& spec,
                              const std::string& region, const std::string& model) {
  InstanceSpec probe = spec;
  probe.gpu_models = {model};
  probe.region = region;
  const size_t wanted = spec.gpus > 0 ? static_cast<size_t>(spec.gpus) : 1;
  bool fits = false;
  int most_free = 0;
  for (const auto& [id, node] : state.nodes) {
    if (node.region != region || !node_takes_work(node)) continue;
    fits = fits || fitting_gpus(node, probe).size() >= wanted;
    const auto free = std::ranges::count_if(node.gpus, [&](const Gpu& gpu) {
      return gpu.healthy && gpu.model == model && gpu.used_milli == 0;
    });
    most_free = std::max(most_free, static_cast<int>(free));
  }
  return {fits, most_free};
}

enum class Limit { kNone, kRegion, kPrice, kNoPrice, kUntrusted };

// Prices in force now by GPU model and region, looked up once each for one request: a filter
// sees every node of a large fleet.
class PriceMemo {
 public:
  PriceMemo(const State& state, PriceClass price_class, TimeMs now_ms)
      : state_(state), price_class_(price_class), now_ms_(now_ms) {}

  std::optional<int64_t> at(const std::string& model, const std::string& region) {
    auto [it, added] = seen_.try_emplace({model, region});
    if (added) it->second = price_now(state_, model, region, price_class_, now_ms_);
    return it->second;
  }

 private:
  const State& state_;
  PriceClass price_class_;
  TimeMs now_ms_;
  std::map<std::pair<std::string, std::string>, std::optional<int64_t>> seen_;
};

// The first hard limit of `spec` that `node` fails. Work is placed only where it has a price:
// time on a GPU with none would go uncharged, silently.
Limit failed_limit(const InstanceSpec& spec, const Node& node, PriceMemo& prices,
                   bool process_nodes) {
  if (!process_nodes && node.runtime == "process") return Limit::kUntrusted;
  if (!region_allowed(spec, node.region)) return Limit::kRegion;
  const std::string* last_model = nullptr;
  for (const Gpu& gpu : node.gpus) {
    if (!gpu.healthy || !model_allowed(spec, gpu.model)) continue;
    if (last_model != nullptr && *last_model == gpu.model) continue;
    last_model = &gpu.model;
    const auto price = prices.at(gpu.model, node.region);
    if (!price) return Limit::kNoPrice;
    if (spec.max_price_micros > 0 && *price > spec.max_price_micros) return Limit::kPrice;
  }
  return Limit::kNone;
}

}  // namespace

std::set<std::string> known_regions(const State& state) {
  std::set<std::string> regions;
  for (const auto& [id, node] : state.nodes) {
    if (!node.lost) regions.insert(node.region);
  }
  for (const auto& [key, by_time] : state.prices.prices()) regions.insert(key.region);
  for (const auto& [region, site] : state.books.sites) regions.insert(region);
  for (const auto& [key, latency] : state.latencies) regions.insert(latency.region);
  return regions;
}

bool may_use_process_nodes(const State& state, const Instance& instance) {
  return state.process_nodes_for_all || instance.tenant_id == state.operator_tenant_id();
}

NodeFilter hard_limits_filter(const State& state, const Instance& instance, TimeMs now_ms) {
  auto prices = std::make_shared<PriceMemo>(state, instance.spec.price_class, now_ms);
  return [spec = instance.spec, prices,
          process_nodes = may_use_process_nodes(state, instance)](const Node& node) {
    return failed_limit(spec, node, *prices, process_nodes) == Limit::kNone;
  };
}

std::string hard_limits_reason(const Draft& draft, const Instance& instance, TimeMs now_ms) {
  const InstanceSpec& spec = instance.spec;
  PriceMemo prices(draft.base(), spec.price_class, now_ms);
  int ready = 0;
  int outside = 0;
  int over = 0;
  int unpriced = 0;
  int untrusted = 0;
  const bool process_nodes = may_use_process_nodes(draft.base(), instance);
  draft.for_each_node([&](const Node& node) {
    if (!node_takes_work(node)) return;
    ++ready;
    const Limit limit = failed_limit(spec, node, prices, process_nodes);
    untrusted += limit == Limit::kUntrusted ? 1 : 0;
    outside += limit == Limit::kRegion ? 1 : 0;
    over += limit == Limit::kPrice ? 1 : 0;
    unpriced += limit == Limit::kNoPrice ? 1 : 0;
  });
  std::vector<std::string> parts;
  if (untrusted > 0) {
    parts.push_back(fmt::format(
        "{} of {} ready nodes run work as host processes, which only the operator's tenant may use "
        "(process_runtime_tenants)",
        untrusted, ready));
  }
  if (outside > 0) {
    parts.push_back(fmt::format("{} of {} ready nodes are not in the allowed regions ({})", outside,
                                ready, fmt::join(spec.regions, "|")));
  }
  if (over > 0) {
    parts.push_back(fmt::format("{} of {} ready nodes are over max price {}", over, ready,
                                Money::from_micros(spec.max_price_micros).to_string()));
  }
  if (unpriced > 0) {
    parts.push_back(fmt::format("{} of {} ready nodes have no {} price for their GPUs", unpriced,
                                ready, price_class_name(spec.price_class)));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

std::optional<int64_t> intensity_at(const Site& site, TimeMs at_ms) {
  const auto& steps = site.carbon_g_per_kwh;
  const auto after = std::ranges::upper_bound(steps, at_ms, {}, &RatePoint::from_ms);
  if (after == steps.begin()) return std::nullopt;
  return std::prev(after)->value;
}

Result<Rows> apply(const State& state, const SetLatency& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  if (auto ok = check_name("from", c.from); !ok) return std::unexpected(ok.error());
  if (auto ok = check_region_name(c.region); !ok) return std::unexpected(ok.error());
  if (c.rtt_ms < 0 || c.rtt_ms > limits::kMaxLatencyMs) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("rtt_ms must be 0 to {}", limits::kMaxLatencyMs));
  }
  if (state.latency(c.from, c.region) == nullptr &&
      state.latencies.size() >= limits::kMaxLatencyEntries) {
    return fail(ErrorCode::kLimitExceeded, fmt::format("the latency table holds at most {} entries",
                                                       limits::kMaxLatencyEntries));
  }
  return Rows{
      Latency{.from = c.from, .region = c.region, .rtt_ms = c.rtt_ms, .updated_at_ms = now_ms}};
}

Result<Rows> apply(const State& state, const DeleteLatency& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  const Latency* latency = state.latency(c.from, c.region);
  if (latency == nullptr) {
    return fail(ErrorCode::kNotFound, fmt::format("no latency from {} to {}", c.from, c.region));
  }
  Latency deleted = *latency;
  deleted.deleted_at_ms = now_ms;
  return Rows{deleted};
}

std::vector<RegionInfo> region_catalog(const State& state, TimeMs now_ms) {
  std::vector<RegionInfo> out;
  for (const std::string& region : known_regions(state)) {
    RegionInfo info{.region = region};
    add_offers(state, info, now_ms);
    if (const Site* site = state.books.site(region); site != nullptr) {
      info.pue_milli = site->pue_milli;
      info.carbon_g_per_kwh = intensity_at(*site, now_ms);
    }
    for (const auto& [key, latency] : state.latencies) {
      if (latency.region == region) info.latency_ms[latency.from] = latency.rtt_ms;
    }
    out.push_back(std::move(info));
  }
  return out;
}

std::vector<QuoteOption> quote_options(const State& state, const InstanceSpec& spec,
                                       TimeMs now_ms) {
  std::vector<QuoteOption> out;
  const int64_t milli = total_milli(spec);
  for (const RegionInfo& info : region_catalog(state, now_ms)) {
    for (const ModelOffer& offer : info.models) {
      if (!model_allowed(spec, offer.gpu_model)) continue;
      QuoteOption option{.region = info.region, .gpu_model = offer.gpu_model};
      std::tie(option.fits, option.free_gpus) = room_for(state, spec, info.region, offer.gpu_model);
      option.price_micros_per_gpu_hour =
          price_now(state, offer.gpu_model, info.region, spec.price_class, now_ms);
      if (option.price_micros_per_gpu_hour) {
        option.price_micros_per_hour = per_milli(*option.price_micros_per_gpu_hour, milli);
      }
      if (info.carbon_g_per_kwh) {
        // A PUE below 1.0 cannot happen; reading a bad figure as 1.0 keeps a typo from making a
        // site look cleaner than its grid (as the carbon score plugin does).
        const int64_t pue_milli = std::max<int64_t>(info.pue_milli.value_or(1000), 1000);
        const int64_t watts = gpu_power_w(offer.gpu_model).busy_w;
        // The intensity is stored as any amount; no grid emits over 2 kg per kWh, so capping it at
        // 1,000 kg keeps the product below inside int64 whatever was typed.
        const int64_t grams = std::min<int64_t>(*info.carbon_g_per_kwh, 1'000'000);
        // W x milli x PUE milli x g/kWh / 1e6 = mg per hour.
        option.carbon_mg_per_hour = watts * milli * pue_milli / 1000 * grams / 1000;
      }
      if (auto it = info.latency_ms.find(spec.from);
          !spec.from.empty() && it != info.latency_ms.end()) {
        option.latency_ms = it->second;
      }
      out.push_back(std::move(option));
    }
  }
  return out;
}

void put(State& state, const Latency& latency) {
  put_live(state.latencies, latency.key(), latency);
}

}  // namespace allot
