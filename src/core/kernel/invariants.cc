#include "core/kernel/invariants.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "core/model/accounts.h"

namespace allot::kernel {
namespace {

class Checker {
 public:
  explicit Checker(const State& state) : state_(state) {}

  std::vector<Violation> run() {
    ledger_sums();
    holds();
    prepaid_balances();
    placements();
    queue_index();
    tenant_indexes();
    return std::move(out_);
  }

 private:
  template <typename... Args>
  void fail(std::string invariant, fmt::format_string<Args...> format, Args&&... args) {
    out_.push_back(
        Violation{std::move(invariant), fmt::format(format, std::forward<Args>(args)...)});
  }

  void ledger_sums() {
    const auto sums = state_.ledger.sums();
    if (sums.posted != 0 || sums.pending != 0)
      fail("ledger_sums", "the ledger does not sum to zero");
  }

  void holds() {
    std::map<std::string, int64_t> held;  // By tenant.
    for (const auto& [id, i] : state_.instances) {
      if (i.hold_id.empty()) {
        if (i.hold_micros != 0)
          fail("holds", "instance {} holds {} with no hold", id, i.hold_micros);
        continue;
      }
      held[i.tenant_id] += i.hold_micros;
      const ledger::Transfer* t = state_.ledger.transfer(i.hold_id);
      const auto pending = state_.ledger.pending_state(i.hold_id);
      if (t == nullptr || pending != ledger::PendingState::kPending) {
        fail("holds", "instance {}'s hold {} is not pending in the ledger", id, i.hold_id);
      } else if (t->amount != i.hold_micros) {
        fail("holds", "instance {} says it holds {}, its hold {} is {}", id, i.hold_micros,
             i.hold_id, t->amount);
      }
    }
    for (const auto& [id, tenant] : state_.tenants) {
      int64_t pending = 0;
      for (BillingMode mode : {BillingMode::kPrepaid, BillingMode::kPostpaid}) {
        const ledger::Account* own = state_.ledger.account(tenant_account(id, mode));
        if (own != nullptr) pending += own->debits_pending;
      }
      if (pending != held[id]) {
        fail("holds", "tenant {} has {} pending, its instances hold {}", id, pending, held[id]);
      }
    }
  }

  void prepaid_balances() {
    for (const auto& [id, tenant] : state_.tenants) {
      const ledger::Account* own = state_.ledger.account(tenant_account(id, BillingMode::kPrepaid));
      if (own == nullptr) continue;
      const int64_t free = own->credits_posted - own->debits_posted - own->debits_pending;
      if (free < 0) fail("prepaid_balance", "tenant {}'s prepaid balance is {}", id, free);
    }
  }

  // What the work placed on one node holds, by GPU index.
  struct NodeUse {
    std::map<int, int> milli;
    std::map<int, std::vector<std::string_view>> whole;
    int64_t cpu = 0;
    int64_t memory = 0;
  };

  void placements() {
    std::unordered_map<std::string_view, NodeUse> on_node;
    for (const auto& [id, i] : state_.instances) {
      if (i.state == InstanceState::kQueued && !i.gpu_indices.empty()) {
        fail("gpu_milli", "queued instance {} holds GPUs", id);
      }
      if (is_final(i.state) || i.state == InstanceState::kQueued) continue;
      if (state_.node(i.node_id) == nullptr) {
        fail("gpu_milli", "instance {} is placed on unknown node {}", id, i.node_id);
        continue;
      }
      NodeUse& use = on_node[i.node_id];
      for (int index : i.gpu_indices) {
        use.milli[index] += i.milli_per_gpu();
        if (i.spec.gpus > 0) use.whole[index].push_back(id);
      }
      use.cpu += i.spec.cpu_milli;
      use.memory += i.spec.memory_mib;
    }
    static const NodeUse kIdle;
    for (const auto& [node_id, node] : state_.nodes) {
      auto found = on_node.find(node_id);
      const NodeUse& use = found == on_node.end() ? kIdle : found->second;
      check_node(node, use);
    }
  }

  void check_node(const Node& node, const NodeUse& use) {
    size_t matched = 0;
    for (const Gpu& gpu : node.gpus) {
      auto held = use.milli.find(gpu.index);
      const int milli = held == use.milli.end() ? 0 : held->second;
      matched += held == use.milli.end() ? 0 : 1;
      if (gpu.used_milli < 0 || gpu.used_milli > 1000 || gpu.used_milli != milli) {
        fail("gpu_milli", "node {} GPU {} says {} milli, its work holds {}", node.id, gpu.index,
             gpu.used_milli, milli);
      }
      auto whole = use.whole.find(gpu.index);
      if (whole != use.whole.end() && whole->second.size() > 1) {
        fail("gpu_exclusive", "node {} GPU {} is held whole by {}", node.id, gpu.index,
             fmt::join(whole->second, " and "));
      }
    }
    if (matched != use.milli.size())
      fail("gpu_milli", "work is placed on node {}'s missing GPUs", node.id);
    if (node.used_cpu_milli != use.cpu || node.used_memory_mib != use.memory) {
      fail("node_resources", "node {} says {} CPU milli and {} MiB used, its work holds {} and {}",
           node.id, node.used_cpu_milli, node.used_memory_mib, use.cpu, use.memory);
    }
  }

  void queue_index() {
    for (const std::string& id : state_.queue) {
      const Instance* i = state_.instance(id);
      if (i == nullptr || i->state != InstanceState::kQueued) {
        fail("queue_index", "the queue holds {}, which is not queued", id);
      }
    }
    std::map<QueueStream, std::set<QueueEntry>> streams;
    std::set<std::string> placed;
    std::set<std::string> placed_spot;
    std::unordered_map<std::string, std::set<std::string>> placed_on;
    for (const auto& [id, i] : state_.instances) {
      if (i.state != InstanceState::kQueued && !is_final(i.state)) {
        placed.insert(id);
        placed_on[i.node_id].insert(id);
        if (i.spec.price_class == PriceClass::kSpot) placed_spot.insert(id);
      }
      if (i.state != InstanceState::kQueued) continue;
      if (!state_.queue.contains(id)) {
        fail("queue_index", "queued instance {} is not in the queue", id);
      }
      streams[QueueStream::of(i)].insert(QueueEntry::of(i));
    }
    if (placed != state_.placed) {
      fail("queue_index", "the placed index ({}) differs from the placed instances ({})",
           state_.placed.size(), placed.size());
    }
    if (placed_spot != state_.placed_spot) {
      fail("queue_index", "the placed spot index ({}) differs from the placed spot instances ({})",
           state_.placed_spot.size(), placed_spot.size());
    }
    if (placed_on != state_.placed_on) {
      fail("queue_index", "the placed index by node ({} nodes) differs from the placed instances",
           state_.placed_on.size());
    }
    if (streams != state_.queue_streams) {
      fail("queue_index", "the queue's streams ({}) differ from its queued instances ({} streams)",
           state_.queue_streams.size(), streams.size());
    }
  }

  void tenant_indexes() {
    std::map<std::string, size_t> active;
    std::map<std::string, std::set<std::string>> unsettled;
    for (const auto& [id, i] : state_.instances) {
      if (!is_final(i.state)) ++active[i.tenant_id];
      if ((i.started_at_ms != 0 || !i.hold_id.empty()) && !i.settled) {
        unsettled[i.tenant_id].insert(id);
      }
    }
    for (const auto& [tenant, count] : state_.active_by_tenant) {
      if (count != active[tenant]) {
        fail("tenant_index", "tenant {} counts {} active instances, it has {}", tenant, count,
             active[tenant]);
      }
    }
    for (const auto& [tenant, count] : active) {
      if (count != 0 && !state_.active_by_tenant.contains(tenant)) {
        fail("tenant_index", "tenant {}'s {} active instances are not counted", tenant, count);
      }
    }
    std::map<std::string, std::set<std::string>> mounts;
    for (const auto& [id, i] : state_.instances) {
      if (is_final(i.state)) continue;
      for (const VolumeMount& mount : i.spec.volumes) mounts[mount.volume_id].insert(id);
    }
    if (mounts != state_.mounts_by_volume) {
      fail("tenant_index", "the index of volumes' users is not the instances' mounts");
    }
    std::map<std::string, std::set<std::string>> replicas;
    for (const auto& [id, i] : state_.instances) {
      if (!is_final(i.state) && !i.spec.service_id.empty()) replicas[i.spec.service_id].insert(id);
    }
    if (replicas != state_.replicas_by_service) {
      fail("tenant_index", "the index of services' replicas is not the instances' services");
    }
    std::map<std::pair<std::string, std::string>, std::string> services_named;
    for (const auto& [id, service] : state_.services) {
      if (!service.deleted()) services_named[{service.tenant_id, service.name}] = id;
    }
    if (services_named != state_.service_by_name) {
      fail("tenant_index", "the index of services by name is not the live services");
    }
    std::set<std::string> billed;
    std::map<std::string, std::set<std::string>> by_service;
    for (const auto& [id, key] : state_.service_keys) {
      if (key.billed() && key.revoked_at_ms == 0) billed.insert(id);
      by_service[key.service_id].insert(id);
      auto hashed = state_.service_key_by_hash.find(key.token_hash);
      if (hashed == state_.service_key_by_hash.end() || hashed->second != id) {
        fail("tenant_index", "the index of service keys by hash misses key {}", id);
      }
    }
    if (billed != state_.billed_keys || by_service != state_.keys_by_service ||
        state_.service_key_by_hash.size() != state_.service_keys.size()) {
      fail("tenant_index", "the indexes of service keys are not the keys");
    }
    std::map<std::string, std::set<std::string>> by_caller;
    std::map<std::string, std::set<std::string>> used;
    for (const auto& [id, u] : state_.service_usage) {
      by_caller[u.caller_tenant_id].insert(id);
      used[u.service_id].insert(id);
    }
    if (by_caller != state_.usage_by_caller || used != state_.usage_by_service) {
      fail("tenant_index", "the indexes of service usage are not the usage");
    }
    std::map<std::string, std::set<std::string>> unsettled_volumes;
    std::map<std::pair<std::string, std::string>, std::string> named;
    for (const auto& [id, v] : state_.volumes) {
      if (!v.settled) unsettled_volumes[v.tenant_id].insert(id);
      if (v.deleted_at_ms == 0) named[{v.tenant_id, v.name}] = id;
    }
    if (unsettled_volumes != state_.unsettled_volumes || named != state_.volume_by_name) {
      fail("tenant_index", "the indexes of volumes are not the volumes");
    }
    std::map<WorkShape, std::set<std::string>> shapes;
    for (const auto& [id, i] : state_.instances) {
      if (!is_final(i.state)) shapes[work_shape(i.spec)].insert(id);
    }
    if (shapes != state_.active_by_shape) {
      fail("tenant_index", "the active instances by shape differ from the index");
    }
    std::unordered_map<std::string, Resources> use;
    for (const auto& [id, i] : state_.instances) {
      if (Resources of = Resources::of(i); !of.empty()) use[i.tenant_id].add(of, 1);
    }
    Resources capacity;
    for (const auto& [id, node] : state_.nodes) capacity.add(Resources::capacity_of(node), 1);
    if (capacity != state_.capacity) {
      fail("tenant_index", "the nodes' summed capacity differs from the index");
    }
    if (use != state_.use_by_tenant) {
      fail("tenant_index", "what each tenant's placed work holds differs from the index");
    }
    if (unsettled != state_.unsettled_by_tenant) {
      fail("tenant_index", "the unsettled instances per tenant differ from the index");
    }
    model_indexes();
  }

  // What admission reads per GPU model: held per tenant and project, free, and the GPUs there are.
  void model_indexes() {
    std::unordered_map<std::string, ModelMilli> by_tenant;
    std::unordered_map<std::string, ModelMilli> by_project;
    for (const auto& [id, i] : state_.instances) {
      const Node* node = state_.node(i.node_id);
      if (node == nullptr) continue;
      add_held(by_tenant[i.tenant_id], *node, i, 1);
      add_held(by_project[i.project_id], *node, i, 1);
    }
    std::erase_if(by_tenant, [](const auto& entry) { return entry.second.empty(); });
    std::erase_if(by_project, [](const auto& entry) { return entry.second.empty(); });
    ModelMilli free;
    ModelMilli gpus;
    for (const auto& [id, node] : state_.nodes) {
      add_free(free, node, 1);
      for (const Gpu& gpu : node.gpus) add_milli(gpus, gpu.model, 1);
    }
    if (by_tenant != state_.held_by_tenant || by_project != state_.held_by_project) {
      fail("model_index", "what tenants or projects hold per GPU model differs from the index");
    }
    if (free != state_.free_by_model || gpus != state_.gpus_by_model) {
      fail("model_index", "the free or total GPUs per model differ from the index");
    }
  }

  const State& state_;
  std::vector<Violation> out_;
};

}  // namespace

std::vector<Violation> check_state(const State& state) { return Checker(state).run(); }

std::vector<Violation> check_time(TimeMs previous_ms, TimeMs now_ms) {
  if (now_ms >= previous_ms) return {};
  return {Violation{"time", fmt::format("a command at {} after one at {}", now_ms, previous_ms)}};
}

std::vector<Violation> check_command(int64_t last_event_seq, std::span<const Row> rows) {
  std::vector<Violation> out;
  int64_t expected = last_event_seq;
  for (const Row& row : rows) {
    const auto* event = std::get_if<Event>(&row);
    if (event == nullptr) continue;
    if (event->seq != ++expected) {
      out.push_back(
          Violation{"events", fmt::format("event {} where {} was next", event->seq, expected)});
      expected = event->seq;
    }
  }
  return out;
}

std::string describe(std::span<const Violation> violations) {
  std::string out;
  for (const Violation& v : violations) out += fmt::format("{}: {}\n", v.invariant, v.detail);
  return out;
}

}  // namespace allot::kernel
