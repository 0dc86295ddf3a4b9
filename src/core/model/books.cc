#include "core/model/books.h"

#include <algorithm>
#include <array>

namespace allot {

int64_t value_at(const std::vector<RatePoint>& steps, TimeMs at_ms) {
  auto after = std::upper_bound(steps.begin(), steps.end(), at_ms,
                                [](TimeMs at, const RatePoint& step) { return at < step.from_ms; });
  return after == steps.begin() ? 0 : std::prev(after)->value;
}

namespace {

constexpr std::array<std::pair<AllocationRule, std::string_view>, 4> kRules = {{
    {AllocationRule::kPerNode, "per_node"},
    {AllocationRule::kPerGpu, "per_gpu"},
    {AllocationRule::kByCost, "by_cost"},
    {AllocationRule::kByPower, "by_power"},
}};

}  // namespace

std::string_view allocation_rule_name(AllocationRule rule) {
  for (const auto& [value, name] : kRules) {
    if (value == rule) return name;
  }
  return "per_node";
}

std::optional<AllocationRule> parse_allocation_rule(std::string_view name) {
  for (const auto& [value, text] : kRules) {
    if (text == name) return value;
  }
  return std::nullopt;
}

const finance::Asset* Books::asset_of_node(const std::string& node_id) const {
  for (const auto& [id, asset] : assets) {
    if (std::ranges::find(asset.node_ids, node_id) != asset.node_ids.end()) return &asset;
  }
  return nullptr;
}

const Site* Books::site(const std::string& region) const {
  auto it = sites.find(region);
  return it == sites.end() ? nullptr : &it->second;
}

}  // namespace allot
