#include "core/model/books.h"

#include <algorithm>

#include "common/enum_names.h"

namespace allot {

int64_t value_at(const std::vector<RatePoint>& steps, TimeMs at_ms) {
  auto after = std::upper_bound(steps.begin(), steps.end(), at_ms,
                                [](TimeMs at, const RatePoint& step) { return at < step.from_ms; });
  return after == steps.begin() ? 0 : std::prev(after)->value;
}

constexpr EnumNames<AllocationRule, 4> kRules{{"per_node", "per_gpu", "by_cost", "by_power"}};

std::string_view allocation_rule_name(AllocationRule rule) { return kRules.name(rule, "per_node"); }

std::optional<AllocationRule> parse_allocation_rule(std::string_view name) {
  return kRules.parse(name);
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
