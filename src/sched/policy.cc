#include "sched/policy.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace allot::sched {
namespace internal {

PluginPolicy::PluginPolicy(std::string name, std::vector<std::unique_ptr<Filter>> filters,
                           std::vector<std::pair<std::unique_ptr<Score>, double>> scores)
    : name_(std::move(name)), filters_(std::move(filters)), scores_(std::move(scores)) {}

bool PluginPolicy::passes(const CompiledRequest& request, const NodeView& node,
                          const NodeFacts& facts) const {
  for (const auto& filter : filters_) {
    if (!filter->check(request, node, facts, nullptr)) return false;
  }
  return true;
}

double PluginPolicy::evaluate(Env& env, const CompiledRequest& request, size_t index,
                              const NodeFacts& facts, Pick& pick) const {
  double total = 0;
  for (size_t k = 0; k < scores_.size(); ++k) {
    Pick p = 0;
    total += scores_[k].second * scores_[k].first->eval(env, request, index, facts, p);
    if (k == 0) pick = p;
  }
  return total;
}

std::string PluginPolicy::explain(const CompiledRequest& request,
                                  const std::vector<NodeView>& nodes,
                                  const std::vector<NodeFacts>& facts) const {
  if (nodes.empty()) return "no nodes";
  // Count without building strings (a full cluster turns away every node for every request),
  // then word, for each filter that turned nodes away, one such node's reason, most common first.
  std::vector<size_t> count(filters_.size(), 0);
  std::vector<size_t> first(filters_.size(), 0);
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (size_t f = 0; f < filters_.size(); ++f) {
      if (filters_[f]->check(request, nodes[i], facts[i], nullptr)) continue;
      if (count[f]++ == 0) first[f] = i;
      break;
    }
  }
  std::vector<size_t> order(filters_.size());
  for (size_t f = 0; f < order.size(); ++f) order[f] = f;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return count[a] != count[b] ? count[a] > count[b] : a < b; });
  std::string out;
  for (size_t f : order) {
    if (count[f] == 0) continue;
    std::string why;
    (void)filters_[f]->check(request, nodes[first[f]], facts[first[f]], &why);
    out += fmt::format("{}{} of {} nodes: {} ({}{})", out.empty() ? "" : "; ", count[f],
                       nodes.size(), why, nodes[first[f]].id, count[f] > 1 ? ", ..." : "");
  }
  return out.empty() ? "no node fits" : "no node fits: " + out;
}

std::optional<Choice> PluginPolicy::place(const CycleState& cycle, const Request& request,
                                          const std::vector<NodeView>& nodes,
                                          std::string& why) const {
  std::vector<NodeFacts> facts;
  Env env = make_env(cycle, nodes, facts);
  std::vector<double> frag(nodes.size(), std::numeric_limits<double>::quiet_NaN());
  env.frag_cache = &frag;
  const CompiledRequest compiled = compile(request, env.models);
  std::optional<size_t> best;
  double best_score = 0;
  Pick best_pick = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!passes(compiled, nodes[i], facts[i])) continue;
    Pick pick = 0;
    const double score = evaluate(env, compiled, i, facts[i], pick);
    // Strictly better only: equal scores keep the lowest node index, so results are repeatable.
    if (!best || score > best_score) {
      best = i;
      best_score = score;
      best_pick = pick;
    }
  }
  if (!best) {
    why = explain(compiled, nodes, facts);
    return std::nullopt;
  }
  return Choice{.node = *best, .gpus = pick_indices(nodes[*best], facts[*best], best_pick)};
}

namespace {

std::vector<std::unique_ptr<Filter>> all_filters() {
  std::vector<std::unique_ptr<Filter>> filters;
  filters.push_back(region_filter());
  filters.push_back(health_filter());
  filters.push_back(model_filter());
  filters.push_back(resources_filter());
  return filters;
}

// Allot's default: FGD with the paper's score, plus two charges in the same unit (GPU milli of
// fragment): GPU milli that a node's CPU can no longer feed, at weight 1 (a stranded milli is a
// fragment milli; 0.5 to 4 measured the same) or 0.1 when the cluster is CPU-bound (0.05 to 0.3
// beat FGD on CPU-scaled resamples, 1 lost to it at 2.5x), and GPU milli taken from models that
// constrained work presses on, at weight 2 (1 left more constrained work unplaced on gpuspec33 and
// the spec50 resample, 3 more on all three constrained traces). See docs/sim.md.
FragOptions allot_options() {
  return FragOptions{.paper_score = true,
                     .cpu_strand_weight = 1.0,
                     .cpu_bound_strand_weight = 0.1,
                     .model_pressure_weight = 2.0};
}

}  // namespace
}  // namespace internal

std::vector<std::string_view> policy_names() {
  return {"first-fit", "best-fit", "spread", "gpu-packing", "dot-product", "fgd", "allot"};
}

std::vector<std::string_view> added_score_names() { return {"carbon"}; }

Result<std::unique_ptr<Policy>> make_policy(std::string_view name) { return make_policy(name, {}); }

Result<std::unique_ptr<Policy>> make_policy(std::string_view name,
                                            const std::vector<AddedScore>& added) {
  using namespace internal;  // NOLINT(google-build-using-namespace): the factories below.
  std::unique_ptr<Score> own;
  if (name == "first-fit") own = first_fit_score();
  if (name == "best-fit") own = best_fit_score();
  if (name == "spread") own = spread_score();
  if (name == "gpu-packing") own = packing_score();
  if (name == "dot-product") own = dot_product_score();
  if (name == "fgd") own = frag_score("fgd", FragOptions{.paper_score = true});
  if (name == "allot") own = frag_score("allot", allot_options());
  if (own == nullptr) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("unknown scheduling policy \"{}\"; known: {}", name,
                            fmt::join(policy_names(), ", ")));
  }
  std::vector<std::pair<std::unique_ptr<Score>, double>> scores;
  // The policy's own plugin comes first, so that it still picks the GPUs.
  scores.emplace_back(std::move(own), 1.0);
  for (const AddedScore& extra : added) {
    std::unique_ptr<Score> score;
    if (extra.plugin == "carbon") score = carbon_score();
    if (score == nullptr) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("unknown score plugin \"{}\"; known: {}", extra.plugin,
                              fmt::join(added_score_names(), ", ")));
    }
    // A weight of 0 or below would make the plugin do nothing or prefer the dirtier node, and NaN
    // would make every score NaN: refuse them rather than place work by them.
    if (!(extra.weight > 0) || !std::isfinite(extra.weight)) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("score plugin \"{}\" needs a weight above 0, not {}", extra.plugin,
                              extra.weight));
    }
    scores.emplace_back(std::move(score), extra.weight);
  }
  // Last: a request's stated preference, which scores 0 for every request without one.
  scores.emplace_back(prefer_score(), 1.0);
  return std::make_unique<PluginPolicy>(std::string(name), all_filters(), std::move(scores));
}

}  // namespace allot::sched
