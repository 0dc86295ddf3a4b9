#include <algorithm>
#include <cmath>

#include "sched/plugins.h"

namespace allot::sched::internal {

double Score::score(const CycleState& cycle, const Request& request, const NodeView& node,
                    std::vector<int>& gpus) const {
  std::vector<NodeFacts> facts;
  Env env = make_env(cycle, {node}, facts);
  const CompiledRequest compiled = compile(request, env.models);
  Pick pick = 0;
  const double result = eval(env, compiled, 0, facts[0], pick);
  gpus = pick_indices(node, facts[0], pick);
  return result;
}

namespace {

enum class Prefer { kLowest, kTightest, kLoosest };

// The GPUs a request takes on a node that passed the filters: for a share one GPU chosen by
// `prefer` (ties to the lowest index), for whole GPUs the lowest-index free ones.
Pick pick_gpus(const CompiledRequest& request, const NodeFacts& facts, Prefer prefer) {
  const Need& n = request.need;
  Pick pick = 0;
  if (n.milli > 0) {
    int best = -1;
    for (int i = 0; i < facts.count; ++i) {
      const int f = facts.free[static_cast<size_t>(i)];
      if (!usable(facts, request, i) || f < n.milli) continue;
      const int cur = best < 0 ? 0 : facts.free[static_cast<size_t>(best)];
      if (best < 0 || (prefer == Prefer::kTightest && f < cur) ||
          (prefer == Prefer::kLoosest && f > cur)) {
        best = i;
      }
    }
    return best < 0 ? 0 : Pick{1} << best;
  }
  int taken = 0;
  for (int i = 0; i < facts.count && taken < n.gpus; ++i) {
    if (usable(facts, request, i) && facts.free[static_cast<size_t>(i)] == kWholeMilli) {
      pick |= Pick{1} << i;
      ++taken;
    }
  }
  return pick;
}

double ratio(double part, double whole) { return whole > 0 ? part / whole : 0.0; }

// The signature of a score plugin's core: node number `index`'s score, with the GPUs it would
// take set in `pick`.
using Eval = double(Env& env, const CompiledRequest& request, size_t index, const NodeFacts& facts,
                    Pick& pick);

// A score plugin that keeps nothing of its own: all it knows comes from the cycle, so its core is
// the function `kEval`.
template <Eval* kEval>
class PureScore final : public Score {
 public:
  explicit PureScore(std::string_view name) : name_(name) {}
  std::string_view name() const override { return name_; }
  double eval(Env& env, const CompiledRequest& request, size_t index, const NodeFacts& facts,
              Pick& pick) const override {
    return kEval(env, request, index, facts, pick);
  }

 private:
  std::string_view name_;
};

double first_fit(Env& /*env*/, const CompiledRequest& request, size_t index, const NodeFacts& facts,
                 Pick& pick) {
  pick = pick_gpus(request, facts, Prefer::kLowest);
  return -static_cast<double>(index);
}

double best_fit(Env& /*env*/, const CompiledRequest& request, size_t /*index*/,
                const NodeFacts& facts, Pick& pick) {
  pick = pick_gpus(request, facts, Prefer::kTightest);
  // GPU milli left decides; CPU left (a fraction below 1) only breaks ties between equal milli.
  const auto gpu_left = static_cast<double>(facts.total_free - gpu_milli(request.need));
  const double cpu_left = ratio(static_cast<double>(facts.free_cpu - request.need.cpu),
                                static_cast<double>(facts.cap_cpu) + 1.0);
  return -(gpu_left + cpu_left);
}

double spread(Env& /*env*/, const CompiledRequest& request, size_t /*index*/,
              const NodeFacts& facts, Pick& pick) {
  pick = pick_gpus(request, facts, Prefer::kLoosest);
  return facts.total_free;
}

// The FGD paper's GpuPacking baseline: a share goes first to a GPU already in use, then to an
// idle GPU on a node in use, then to an idle node; whole GPUs go to the node with fewest free.
double packing(Env& /*env*/, const CompiledRequest& request, size_t /*index*/,
               const NodeFacts& facts, Pick& pick) {
  const Need& n = request.need;
  const double fewest_free = -static_cast<double>(facts.full);
  if (n.milli <= 0) {
    pick = pick_gpus(request, facts, Prefer::kLowest);
    return fewest_free;
  }
  int partial = -1;
  for (int i = 0; i < facts.count; ++i) {
    const int f = facts.free[static_cast<size_t>(i)];
    if (usable(facts, request, i) && f >= n.milli && f < kWholeMilli &&
        (partial < 0 || f < facts.free[static_cast<size_t>(partial)])) {
      partial = i;
    }
  }
  if (partial >= 0) {
    pick = Pick{1} << partial;
    return 2 * kMaxGpus + fewest_free;
  }
  pick = pick_gpus(request, facts, Prefer::kLowest);
  const bool node_in_use = facts.full < facts.count;
  return (node_in_use ? kMaxGpus : 0) + fewest_free;
}

// Tetris: the dot product of the request and the node's free resources, each normalised by the
// node's capacity, so a node whose free shape matches the request's shape wins.
double dot_product(Env& /*env*/, const CompiledRequest& request, size_t /*index*/,
                   const NodeFacts& facts, Pick& pick) {
  pick = pick_gpus(request, facts, Prefer::kLowest);
  const Need& n = request.need;
  const double cpu = static_cast<double>(facts.cap_cpu);
  const double mem = static_cast<double>(facts.cap_mem);
  const double gpu = kWholeMilli * static_cast<double>(facts.count);
  return ratio(static_cast<double>(n.cpu), cpu) * ratio(static_cast<double>(facts.free_cpu), cpu) +
         ratio(static_cast<double>(n.mem), mem) * ratio(static_cast<double>(facts.free_mem), mem) +
         ratio(static_cast<double>(gpu_milli(n)), gpu) * ratio(facts.total_free, gpu);
}

class Frag final : public Score {
 public:
  Frag(std::string name, FragOptions options) : name_(std::move(name)), options_(options) {}
  std::string_view name() const override { return name_; }
  double eval(Env& env, const CompiledRequest& request, size_t index, const NodeFacts& facts,
              Pick& pick) const override {
    double before = 0;
    if (env.frag_cache != nullptr && index < env.frag_cache->size()) {
      double& cached = (*env.frag_cache)[index];
      if (std::isnan(cached)) cached = node_frag(env.shapes, facts);
      before = cached;
    } else {
      before = node_frag(env.shapes, facts);
    }
    return frag_place(env.shapes, request, facts, before, options_, pick);
  }

 private:
  std::string name_;
  FragOptions options_;
};

// Grams of CO2e per kWh that cost one point of score: at weight 1 a region 100 g/kWh cleaner is
// worth one step of the FGD paper score that the default policy uses (about 40 GPU milli of
// fragmentation), enough to decide between near-equal nodes without overriding packing.
constexpr double kCarbonPerPoint = 100.0;

// Prefers nodes in cleaner regions. It keeps no state: the intensities come from the cycle
// through Env::carbon, fixed for the cycle. It picks GPUs as first-fit does, which matters only
// when it is a policy's first score plugin; otherwise the first plugin's pick is used.
double carbon(Env& env, const CompiledRequest& request, size_t index, const NodeFacts& facts,
              Pick& pick) {
  pick = pick_gpus(request, facts, Prefer::kLowest);
  const double grams = index < env.carbon.size() ? env.carbon[index] : 0.0;
  return -grams / kCarbonPerPoint;
}

// Points per step of preference rank: far above what any policy's own score spans between two
// nodes (fragmentation is counted in GPU milli of a node, at most a few tens of thousands), so
// that the preferred region and model win whenever one of their nodes passes the filters.
constexpr double kPointsPerRank = 10'000'000.0;

// Prefers the (region, model) that the request's ranking puts first. A node is as good as the
// best-ranked model among its healthy GPUs that the request may use; a node whose region and
// models the ranking does not hold (no latency known from the client, say) comes after every
// ranked one.
double prefer(Env& env, const CompiledRequest& request, size_t index, const NodeFacts& facts,
              Pick& pick) {
  // It is never a policy's first plugin, so its pick is never used: skip the work.
  pick = 0;
  const auto& ranks = env.cycle->preference_rank;
  if (ranks.empty() || index >= env.region.size()) return 0;
  auto best = static_cast<int>(ranks.size());
  for (int i = 0; i < facts.count; ++i) {
    if (!usable(facts, request, i)) continue;
    const std::string& model = env.models.name(facts.model[static_cast<size_t>(i)]);
    if (auto it = ranks.find({env.region[index], model}); it != ranks.end()) {
      best = std::min(best, it->second);
    }
  }
  return -kPointsPerRank * best;
}

}  // namespace

double region_carbon(const CycleState& cycle, const std::string& region) {
  const auto& known = cycle.carbon_g_per_kwh;
  if (const auto it = known.find(region); it != known.end()) return it->second;
  // A region with no intensity counts as the worst known one, not as clean: otherwise a site that
  // never reported its grid would attract work on missing data. Counting it as worse than the
  // worst known would push work away from it on no evidence either, so the worst known is the
  // neutral choice: the plugin then only rewards nodes known to be cleaner.
  double worst = 0;
  for (const auto& [name, grams] : known) worst = std::max(worst, grams);
  return worst;
}

std::unique_ptr<Score> first_fit_score() {
  return std::make_unique<PureScore<first_fit>>("first-fit");
}
std::unique_ptr<Score> best_fit_score() {
  return std::make_unique<PureScore<best_fit>>("best-fit");
}
std::unique_ptr<Score> spread_score() { return std::make_unique<PureScore<spread>>("spread"); }
std::unique_ptr<Score> packing_score() {
  return std::make_unique<PureScore<packing>>("gpu-packing");
}
std::unique_ptr<Score> dot_product_score() {
  return std::make_unique<PureScore<dot_product>>("dot-product");
}
std::unique_ptr<Score> frag_score(std::string name, FragOptions options) {
  return std::make_unique<Frag>(std::move(name), options);
}
std::unique_ptr<Score> carbon_score() { return std::make_unique<PureScore<carbon>>("carbon"); }
std::unique_ptr<Score> prefer_score() { return std::make_unique<PureScore<prefer>>("prefer"); }

}  // namespace allot::sched::internal
