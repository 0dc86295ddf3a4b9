// A month's P&L per node. Every amount is integer micro-units: products are summed in 128 bits and
// divided once per node, and shared amounts are split with allocate(), so nothing is lost or made
// up by rounding.
#include "reports/pnl.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

#include "common/int128.h"
#include "core/money/metering.h"
#include "core/money/storage.h"
#include "finance/schedule.h"
#include "reports/invoice_draft.h"

namespace allot::finance {
namespace {

constexpr Int128 kMjPerKwh = 3'600'000'000;

Error overflow() { return Error{ErrorCode::kOverflow, "a sum of the P&L is too large"}; }

bool add(int64_t& sum, int64_t value) { return !__builtin_add_overflow(sum, value, &sum); }

std::string pool_of(const Node& node) {
  auto it = node.labels.find("pool");
  return it == node.labels.end() || it->second.empty() ? "default" : it->second;
}

// The end of a node's service: its deletion, or never.
TimeMs service_end_ms(const Node& node) {
  return node.deleted_at_ms != 0 ? node.deleted_at_ms : std::numeric_limits<TimeMs>::max();
}

// The moments [from, to) of the month a node is in service: joined, not deleted, and its asset
// (when it has one) in service and not retired.
struct Window {
  TimeMs from_ms = 0;
  TimeMs to_ms = 0;
};

Window service_window(const Node& node, const Asset* asset, TimeMs month_ms) {
  Window w{.from_ms = std::max(month_ms, node.joined_at_ms),
           .to_ms = std::min(next_month_start(month_ms), service_end_ms(node))};
  if (asset != nullptr) {
    w.from_ms = std::max(w.from_ms, asset->in_service_ms);
    if (asset->retired_ms != 0) w.to_ms = std::min(w.to_ms, asset->retired_ms);
  }
  return w;
}

// The moments of the month up to now the node's GPUs were in service, as GPU-milliseconds.
int64_t available_gpu_ms(const Node& node, const Asset* asset, TimeMs month_ms, TimeMs now_ms) {
  const Window w = service_window(node, asset, month_ms);
  const TimeMs to = std::min(w.to_ms, now_ms);
  if (to <= w.from_ms) return 0;
  return (to - w.from_ms) * static_cast<int64_t>(node.gpus.size());
}

// What one node's GPUs used within the month and what that cost and emitted, hour by hour.
void meter_power(const State& state, const Node& node, TimeMs month_ms, NodeMonth& out) {
  auto energy = state.books.energy.find(node.id);
  if (energy == state.books.energy.end()) return;
  const Site* site = state.books.site(node.region);
  Int128 cost = 0;
  Int128 carbon = 0;
  const TimeMs end_ms = next_month_start(month_ms);
  for (auto it = energy->second.lower_bound(month_ms);
       it != energy->second.end() && it->first < end_ms; ++it) {
    out.energy_mj += it->second;
    if (site == nullptr) continue;
    const Int128 facility = Int128{it->second} * site->pue_milli;
    cost += facility * value_at(site->power_micros_per_kwh, it->first);
    carbon += facility * value_at(site->carbon_g_per_kwh, it->first);
  }
  // µ-units: mJ x pue/1,000 x price per kWh / 3.6e9; µg: mJ x pue/1,000 x g/kWh x 1e6 / 3.6e9.
  out.power_micros = static_cast<int64_t>(cost / (kMjPerKwh * 1000));
  out.carbon_ug = static_cast<int64_t>(carbon / 3'600'000);
}

// The month's row of a schedule, or nullptr.
template <typename Row>
const Row* row_of(const std::vector<Row>& rows, TimeMs month_ms) {
  auto it = std::ranges::find_if(rows, [&](const Row& r) { return r.month_ms == month_ms; });
  return it == rows.end() ? nullptr : &*it;
}

// Splits one asset's month (depreciation, financing, colocation) over its nodes by GPUs.
void charge_asset(const State& state, const Asset& asset, TimeMs month_ms,
                  std::map<std::string, NodeMonth>& nodes) {
  std::vector<int64_t> weights;
  weights.reserve(asset.node_ids.size());
  for (const std::string& id : asset.node_ids) {
    weights.push_back(static_cast<int64_t>(state.nodes.at(id).gpus.size()));
  }
  auto share = [&](int64_t amount, int64_t NodeMonth::* field) {
    const std::vector<int64_t> parts = allocate(amount, weights);
    for (size_t i = 0; i < parts.size(); ++i) nodes[asset.node_ids[i]].*field += parts[i];
  };
  const auto depreciation = depreciation_schedule(asset);
  if (const DepreciationMonth* d = row_of(depreciation, month_ms); d != nullptr) {
    share(d->depreciation_micros, &NodeMonth::depreciation_micros);
    share(d->retirement_loss_micros, &NodeMonth::retirement_loss_micros);
  }
  const auto financing = financing_schedule(asset.financing, asset.in_service_ms);
  if (const FinancingMonth* f = row_of(financing, month_ms); f != nullptr) {
    share(f->interest_micros, &NodeMonth::interest_micros);
    share(f->lease_micros, &NodeMonth::lease_micros);
    share(f->principal_micros, &NodeMonth::principal_micros);
  }
  const bool in_service = month_ms >= month_start(asset.in_service_ms) &&
                          (asset.retired_ms == 0 || month_ms <= month_start(asset.retired_ms));
  const Site* site = state.books.site(state.nodes.at(asset.node_ids.front()).region);
  if (in_service && site != nullptr) {
    const Int128 colocation = Int128{site->colocation_micros_per_kw_month} * asset.power_kw_milli;
    share(static_cast<int64_t>(colocation / 1000), &NodeMonth::colocation_micros);
  }
}

// The part of the month up to through_ms a node is in the fleet, from its joining to its deletion,
// in ms. A node still in the fleet counts to through_ms: the month's end once it is over.
int64_t service_ms(const Node& node, TimeMs month_ms, TimeMs through_ms) {
  const TimeMs from = std::max(month_ms, node.joined_at_ms);
  const TimeMs to = std::min(through_ms, service_end_ms(node));
  return std::max<TimeMs>(to - from, 0);
}

// Shares each fixed cost in force this month over the nodes it covers, by its rule and their
// time in service up to through_ms: the month's amount once it is over, and while it runs the
// part of it that has passed. Returns what the costs charged come to for the whole month.
int64_t charge_fixed_costs(const State& state, TimeMs month_ms, TimeMs through_ms,
                           std::map<std::string, NodeMonth>& nodes) {
  const Int128 month_length = next_month_start(month_ms) - month_ms;
  int64_t whole_month = 0;
  for (const auto& [id, cost] : state.books.fixed_costs) {
    if (cost.deleted_at_ms != 0 || cost.from_month_ms > month_ms) continue;
    if (cost.until_month_ms != 0 && cost.until_month_ms <= month_ms) continue;
    std::vector<std::string> covered;
    std::vector<Int128> weights;
    for (const auto& [node_id, row] : nodes) {
      if (row.available_gpu_ms == 0 || (!cost.region.empty() && row.region != cost.region))
        continue;
      const Asset* asset = state.books.asset_of_node(node_id);
      const auto batch = asset != nullptr ? static_cast<int64_t>(asset->node_ids.size()) : 1;
      int64_t weight = 1;
      if (cost.rule == AllocationRule::kPerGpu) weight = row.gpus;
      if (cost.rule == AllocationRule::kByCost) weight = asset ? asset->cost_micros / batch : 0;
      if (cost.rule == AllocationRule::kByPower) weight = asset ? asset->power_kw_milli / batch : 0;
      covered.push_back(node_id);
      // The rule's weight for each second in service: a node in the fleet 32 s of the month bears
      // 32 s of the cost at the fleet's rate, and the month's cost is charged in full.
      const int64_t in_fleet_ms = service_ms(state.nodes.at(node_id), month_ms, through_ms);
      weights.push_back(Int128{weight} * (in_fleet_ms / 1000));
    }
    if (covered.empty()) continue;
    whole_month += cost.monthly_micros;
    const auto passed =
        static_cast<int64_t>(Int128{cost.monthly_micros} * (through_ms - month_ms) / month_length);
    const std::vector<int64_t> parts = allocate_wide(passed, weights);
    for (size_t i = 0; i < parts.size(); ++i) nodes[covered[i]].other_micros += parts[i];
  }
  return whole_month;
}

// The part of `amount`, a cost of the window `w` of the month, that has passed by now (of the
// calendar month, when the window is empty).
int64_t passed_part(int64_t amount, Window w, TimeMs month_ms, TimeMs now_ms) {
  if (w.to_ms <= w.from_ms) w = {.from_ms = month_ms, .to_ms = next_month_start(month_ms)};
  const int64_t whole = w.to_ms - w.from_ms;
  const int64_t done = std::clamp<int64_t>(now_ms - w.from_ms, 0, whole);
  return static_cast<int64_t>(Int128{amount} * done / whole);
}

// Month to date, an asset's costs that accrue with time (depreciation, financing, colocation) are
// the part of its month in service that has passed (the fixed costs are charged so already). A
// retirement's loss or gain happened when it did, and stays whole.
void prorate(const State& state, TimeMs month_ms, TimeMs now_ms, NodeMonth& row) {
  const Asset* asset = state.books.asset_of_node(row.node_id);
  if (asset == nullptr) return;
  const Window owned{.from_ms = std::max(month_ms, asset->in_service_ms),
                     .to_ms = asset->retired_ms != 0
                                  ? std::min(next_month_start(month_ms), asset->retired_ms)
                                  : next_month_start(month_ms)};
  for (int64_t NodeMonth::* field :
       {&NodeMonth::depreciation_micros, &NodeMonth::interest_micros, &NodeMonth::lease_micros,
        &NodeMonth::colocation_micros, &NodeMonth::principal_micros}) {
    row.*field = passed_part(row.*field, owned, month_ms, now_ms);
  }
}

// What the month comes to if it goes on as it has, from its rows before the assets' costs are
// prorated and the fixed costs' whole: every accruing cost is the whole month's, and revenue and
// power grow at their rate so far.
Result<MonthProjection> project(const MonthPnl& pnl, int64_t fixed_whole_month, TimeMs now_ms) {
  const Int128 whole = next_month_start(pnl.month_ms) - pnl.month_ms;
  const Int128 done = now_ms - pnl.month_ms;
  const Result<int64_t> revenue = pnl.revenue_micros();
  if (!revenue) return std::unexpected(revenue.error());
  Int128 accruing = fixed_whole_month;
  Int128 power = 0;
  for (const NodeMonth& node : pnl.nodes) {
    accruing += Int128{node.costs_micros()} - node.power_micros - node.other_micros;
    power += node.power_micros;
  }
  const Int128 net = (Int128{*revenue} - pnl.credits_micros) * whole / done;
  const Int128 costs = accruing + power * whole / done;
  constexpr Int128 kMax = std::numeric_limits<int64_t>::max();
  for (Int128 amount : {net, costs, net - costs}) {
    if (amount > kMax || amount < -kMax) return std::unexpected(overflow());
  }
  return MonthProjection{.net_revenue_micros = static_cast<int64_t>(net),
                         .costs_micros = static_cast<int64_t>(costs),
                         .margin_micros = static_cast<int64_t>(net - costs)};
}

// A row per node in the fleet at some moment of the month, with its time in service and power.
std::map<std::string, NodeMonth> node_rows(const State& state, TimeMs month_ms, TimeMs now_ms) {
  std::map<std::string, NodeMonth> nodes;
  for (const auto& [id, node] : state.nodes) {
    if (node.joined_at_ms >= next_month_start(month_ms)) continue;
    if (node.deleted_at_ms != 0 && node.deleted_at_ms <= month_ms) continue;  // Gone before.
    const Asset* asset = state.books.asset_of_node(id);
    NodeMonth& row = nodes[id];
    row.node_id = id;
    row.node_name = node.name;
    row.region = node.region;
    row.pool = pool_of(node);
    row.gpu_model = node.gpus.empty() ? "" : node.gpus.front().model;
    row.gpus = static_cast<int>(node.gpus.size());
    row.asset_id = asset != nullptr ? asset->id : "";
    row.available_gpu_ms = available_gpu_ms(node, asset, month_ms, now_ms);
    meter_power(state, node, month_ms, row);
  }
  return nodes;
}

}  // namespace

int64_t NodeMonth::costs_micros() const {
  return depreciation_micros + retirement_loss_micros + interest_micros + lease_micros +
         power_micros + colocation_micros + other_micros;
}

std::array<std::pair<std::string_view, int64_t>, 10> NodeMonth::lines() const {
  return {{{"revenue", revenue_micros},
           {"depreciation", depreciation_micros},
           {"retirement_loss", retirement_loss_micros},
           {"interest", interest_micros},
           {"lease", lease_micros},
           {"power", power_micros},
           {"colocation", colocation_micros},
           {"other", other_micros},
           {"costs", costs_micros()},
           {"margin", margin_micros()}}};
}

Result<int64_t> MonthPnl::revenue_micros() const {
  int64_t sum = 0;
  for (const NodeMonth& node : nodes) {
    if (!add(sum, node.revenue_micros)) return std::unexpected(overflow());
  }
  for (const auto& [region, amount] : storage_by_region) {
    if (!add(sum, amount)) return std::unexpected(overflow());
  }
  return sum;
}

Result<MonthPnl> month_pnl(const State& state, TimeMs month_ms, TimeMs now_ms) {
  if (month_start(month_ms) != month_ms) {
    return fail(ErrorCode::kInvalidArgument, "a P&L's month starts at its first moment");
  }
  std::map<std::string, NodeMonth> nodes = node_rows(state, month_ms, now_ms);
  const int64_t from_s = month_ms / 1000;
  const int64_t to_s = next_month_start(month_ms) / 1000;
  const TimeMs read_at_ms = std::min(now_ms, next_month_start(month_ms));
  std::map<std::string, int64_t> revenue_by_tenant;
  for (const auto& [id, instance] : state.instances) {
    auto usage = usage_of(state, instance, read_at_ms);
    if (!usage || !nodes.contains(instance.node_id)) continue;
    auto amount = charge_between(state, *usage, from_s, to_s);
    if (!amount) return std::unexpected(amount.error());
    auto held =
        billing::milli_seconds_within(usage->milli, usage->start_s, usage->end_s, from_s, to_s);
    if (!held) return std::unexpected(held.error());
    NodeMonth& row = nodes[instance.node_id];
    // GPU milli x seconds is GPU-milliseconds: 1,000 milli for one second is one GPU-second.
    if (!add(row.revenue_micros, *amount) || !add(revenue_by_tenant[instance.tenant_id], *amount) ||
        !add(row.allocated_gpu_ms, *held)) {
      return std::unexpected(overflow());
    }
  }
  MonthPnl out{.month_ms = month_ms,
               .through_ms = std::clamp(now_ms, month_ms, next_month_start(month_ms))};
  for (const auto& [id, volume] : state.volumes) {
    auto amount = storage_between(state, storage_use(volume, read_at_ms), from_s, to_s);
    if (!amount) return std::unexpected(amount.error());
    if (*amount == 0) continue;
    if (!add(out.storage_by_region[volume.region], *amount) ||
        !add(revenue_by_tenant[volume.tenant_id], *amount)) {
      return std::unexpected(overflow());
    }
  }
  for (const auto& [id, asset] : state.books.assets) charge_asset(state, asset, month_ms, nodes);
  const int64_t fixed_whole_month = charge_fixed_costs(state, month_ms, out.through_ms, nodes);
  for (auto& [id, row] : nodes) out.nodes.push_back(std::move(row));
  for (const auto& [tenant_id, revenue] : revenue_by_tenant) {
    const int64_t credits = billing::credits_applied(state, tenant_id, month_ms, now_ms);
    out.credits_micros += std::clamp<int64_t>(credits, 0, revenue);
  }
  if (now_ms > month_ms && now_ms < next_month_start(month_ms)) {
    auto projection = project(out, fixed_whole_month, now_ms);
    if (!projection) return std::unexpected(projection.error());
    out.projection = *projection;
    for (NodeMonth& row : out.nodes) prorate(state, month_ms, now_ms, row);
  }
  return out;
}

}  // namespace allot::finance
