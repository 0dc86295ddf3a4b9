#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "sched/policy.h"

namespace allot::sched {
namespace {

// What the policy decided about each node for one request shape, as parallel arrays so that the
// scan reads few bytes per node. An entry is valid while the node's version is the one recorded
// (node versions start at 1, so a zeroed entry is never valid).
struct Row {
  Request request;  // Owns what `compiled` points to.
  internal::CompiledRequest compiled;
  std::vector<uint32_t> version;
  std::vector<uint8_t> pass;
  std::vector<double> score;
  std::vector<internal::Pick> pick;
};

// Entries kept over all shapes before the memo is dropped and refilled: about 50 MB.
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

  void rebuild() {
    env = internal::make_env(cycle, nodes, facts);
    env.frag_cache = &frag;
    frag.assign(nodes.size(), std::numeric_limits<double>::quiet_NaN());
    version.assign(nodes.size(), 1);
    rows.clear();
    entries = 0;
  }

  void changed(size_t index) {
    facts[index] = internal::facts_of(nodes[index], env.models);
    frag[index] = std::numeric_limits<double>::quiet_NaN();
    ++version[index];
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
    row->pass.resize(nodes.size());
    row->score.resize(nodes.size());
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
  std::optional<size_t> best;
  double best_score = 0;
  for (size_t i = 0; i < m.nodes.size(); ++i) {
    if (row.version[i] != m.version[i]) {
      row.version[i] = m.version[i];
      const bool pass = m.plugins->passes(row.compiled, m.nodes[i], m.facts[i]);
      row.pass[i] = pass ? 1 : 0;
      if (pass) row.score[i] = m.plugins->evaluate(m.env, row.compiled, i, m.facts[i], row.pick[i]);
    }
    // Strictly better only, as Policy::place: ties keep the lowest node index.
    if (row.pass[i] != 0 && (!best || row.score[i] > best_score)) {
      best = i;
      best_score = row.score[i];
    }
  }
  if (!best) {
    why = m.plugins->explain(row.compiled, m.nodes, m.facts);
    return std::nullopt;
  }
  return Choice{.node = *best,
                .gpus = internal::pick_indices(m.nodes[*best], m.facts[*best], row.pick[*best])};
}

void Placer::allocate(const Request& request, const Choice& choice) {
  sched::allocate(impl_->nodes[choice.node], request, choice);
  impl_->changed(choice.node);
}

void Placer::release(const Request& request, const Choice& choice) {
  sched::release(impl_->nodes[choice.node], request, choice);
  impl_->changed(choice.node);
}

void Placer::update(size_t index, NodeView node) {
  const internal::NodeFacts old = impl_->facts[index];
  impl_->nodes[index] = std::move(node);
  const size_t known = impl_->env.models.size();
  impl_->changed(index);
  // A model never seen before changes every compiled model table, and a change in a node's
  // healthy GPUs changes the capacity that each model's pressure is computed from: start over.
  const internal::NodeFacts& now = impl_->facts[index];
  const bool same_gpus =
      now.count == old.count &&
      std::equal(now.model.begin(), now.model.begin() + now.count, old.model.begin());
  if (impl_->env.models.size() != known || !same_gpus) impl_->rebuild();
}

}  // namespace allot::sched
