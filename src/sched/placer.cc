#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

#include "sched/policy.h"

namespace allot::sched {
namespace {

constexpr double kNone = -std::numeric_limits<double>::infinity();

// What the policy decided about each node for one request shape. An entry is valid while the
// node's version is the one recorded (node versions start at 1, so a zeroed entry is never
// valid). `score` is kNone where the node does not pass, so that a decision is one pass over a
// contiguous array of doubles, after re-deciding only the nodes changed since the shape was last
// placed (read from the change log).
struct Row {
  Request request;  // Owns what `compiled` points to.
  internal::CompiledRequest compiled;
  std::vector<uint32_t> version;
  std::vector<double> score;
  std::vector<internal::Pick> pick;
  uint64_t synced = 0;  // The change log's position this row has seen up to.
  bool built = false;
};

// The first index holding the largest value (ties to the lowest index, as Policy::place), or
// nullopt when every value is kNone. Four running maxima keep the pass branch-free.
std::optional<size_t> best_of(const std::vector<double>& score) {
  const size_t n = score.size();
  std::array<double, 4> top = {kNone, kNone, kNone, kNone};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (size_t k = 0; k < 4; ++k) top[k] = std::max(top[k], score[i + k]);
  }
  for (; i < n; ++i) top[0] = std::max(top[0], score[i]);
  const double best = std::max(std::max(top[0], top[1]), std::max(top[2], top[3]));
  if (best == kNone) return std::nullopt;
  return static_cast<size_t>(std::find(score.begin(), score.end(), best) - score.begin());
}

// Entries (node x shape) kept over all shapes before the memo is dropped and refilled: about
// 50 MB.
constexpr size_t kMaxEntries = size_t{1} << 21;

using Key = std::tuple<int, int, int64_t, int64_t, std::vector<std::string>, std::string>;

}  // namespace

struct Placer::Impl {
  const Policy& policy;
  const internal::PluginPolicy* plugins = nullptr;  // Null: a foreign policy, no caching.
  CycleState cycle;
  std::vector<NodeView> nodes;
  std::vector<internal::NodeFacts> facts;
  internal::Env env;
  std::vector<double> frag;
  std::vector<uint32_t> version;
  std::map<Key, std::unique_ptr<Row>> rows;
  size_t entries = 0;
  // The nodes changed, in order; position p is log[p - log_start]. Rows that fell behind the
  // start look at every node once more.
  std::vector<size_t> log;
  uint64_t log_start = 0;

  void rebuild() {
    env = internal::make_env(cycle, nodes, facts);
    env.frag_cache = &frag;
    frag.assign(nodes.size(), std::numeric_limits<double>::quiet_NaN());
    version.assign(nodes.size(), 1);
    rows.clear();
    entries = 0;
    log_start += log.size();
    log.clear();
  }

  void changed(size_t index) {
    facts[index] = internal::facts_of(nodes[index], env.models);
    // A replaced node may have moved region; the cycle's intensities themselves stay fixed.
    env.carbon[index] = internal::region_carbon(cycle, nodes[index].region);
    env.region[index] = nodes[index].region;
    frag[index] = std::numeric_limits<double>::quiet_NaN();
    ++version[index];
    if (log.size() >= 4 * nodes.size() + 1024) {
      log_start += log.size();
      log.clear();
    }
    log.push_back(index);
  }

  // Re-decides node i for `row` if it changed since the row last looked.
  void refresh(Row& row, size_t i) {
    if (row.version[i] == version[i]) return;
    row.version[i] = version[i];
    row.score[i] = plugins->passes(row.compiled, nodes[i], facts[i])
                       ? plugins->evaluate(env, row.compiled, i, facts[i], row.pick[i])
                       : kNone;
  }

  void bring_up_to_date(Row& row) {
    const uint64_t end = log_start + log.size();
    if (!row.built || row.synced < log_start) {
      for (size_t i = 0; i < nodes.size(); ++i) refresh(row, i);
      row.built = true;
    } else {
      for (uint64_t p = row.synced; p < end; ++p) refresh(row, log[p - log_start]);
    }
    row.synced = end;
  }

  Row& row_for(const Request& request) {
    const internal::Need n = internal::need_of(request);
    Key key{n.gpus, n.milli, n.cpu, n.mem, request.models, request.region};
    auto it = rows.find(key);
    if (it != rows.end()) return *it->second;
    if (entries + nodes.size() > kMaxEntries) {
      rows.clear();
      entries = 0;
    }
    auto row = std::make_unique<Row>();
    row->request = request;
    row->compiled = internal::compile(row->request, env.models);
    row->version.resize(nodes.size());
    row->score.resize(nodes.size(), kNone);
    row->pick.resize(nodes.size());
    entries += nodes.size();
    return *rows.emplace(std::move(key), std::move(row)).first->second;
  }
};

Placer::Placer(const Policy& policy, CycleState cycle, std::vector<NodeView> nodes)
    : impl_(new Impl{.policy = policy,
                     .plugins = dynamic_cast<const internal::PluginPolicy*>(&policy),
                     .cycle = std::move(cycle),
                     .nodes = std::move(nodes)}) {
  impl_->rebuild();
}

Placer::~Placer() = default;

const std::vector<NodeView>& Placer::nodes() const { return impl_->nodes; }

std::optional<Choice> Placer::place(const Request& request, std::string& why) {
  Impl& m = *impl_;
  if (m.plugins == nullptr) return m.policy.place(m.cycle, request, m.nodes, why);
  Row& row = m.row_for(request);
  m.bring_up_to_date(row);
  const std::optional<size_t> best = best_of(row.score);
  if (!best) {
    why = m.plugins->explain(row.compiled, m.nodes, m.facts);
    return std::nullopt;
  }
  return Choice{.node = *best,
                .gpus = internal::pick_indices(m.nodes[*best], m.facts[*best], row.pick[*best])};
}

void Placer::allocate(const Request& request, const Choice& choice) {
  impl_->policy.reserve(impl_->nodes[choice.node], request, choice);
  impl_->changed(choice.node);
}

void Placer::release(const Request& request, const Choice& choice) {
  impl_->policy.unreserve(impl_->nodes[choice.node], request, choice);
  impl_->changed(choice.node);
}

void Placer::update(size_t index, NodeView node) {
  const internal::NodeFacts old = impl_->facts[index];
  impl_->nodes[index] = std::move(node);
  const size_t known = impl_->env.models.size();
  impl_->changed(index);
  // A model never seen before changes every compiled model table, and a change in a node's
  // healthy GPUs or CPU capacity changes the capacity that each model's pressure and whether the
  // cluster is CPU-bound are computed from: start over.
  const internal::NodeFacts& now = impl_->facts[index];
  const bool same_gpus =
      now.count == old.count && now.cap_cpu == old.cap_cpu &&
      std::equal(now.model.begin(), now.model.begin() + now.count, old.model.begin());
  if (impl_->env.models.size() != known || !same_gpus) impl_->rebuild();
}

void Placer::set_cycle(CycleState cycle) {
  impl_->cycle = std::move(cycle);
  impl_->rebuild();
}

const CycleState& Placer::cycle() const { return impl_->cycle; }

}  // namespace allot::sched
