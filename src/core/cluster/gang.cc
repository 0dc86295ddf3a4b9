// Gangs: N members, one per node, placed all at once or not at all, in one rack if they fit there,
// else in one region, else anywhere.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/limits.h"
#include "core/admission/admission.h"
#include "core/cluster/cluster.h"
#include "core/money/money.h"
#include "core/regions/regions.h"

namespace allot {
namespace {

// The sets of nodes a gang may be confined to, most preferred first: each rack (by the node
// label "rack" within a region), each region, then every node. Repeats are dropped.
std::vector<std::set<std::string>> scopes(const Draft& draft, size_t members) {
  std::map<std::pair<std::string, std::string>, std::set<std::string>> racks;
  std::map<std::string, std::set<std::string>> regions;
  std::set<std::string> all;
  draft.for_each_node([&](const Node& node) {
    if (!node_takes_work(node)) return;
    auto rack = node.labels.find("rack");
    if (rack != node.labels.end()) racks[{node.region, rack->second}].insert(node.id);
    regions[node.region].insert(node.id);
    all.insert(node.id);
  });
  std::vector<std::set<std::string>> out;
  auto add = [&](std::set<std::string> scope) {
    if (scope.size() >= members && std::find(out.begin(), out.end(), scope) == out.end()) {
      out.push_back(std::move(scope));
    }
  };
  for (auto& [key, nodes] : racks) add(std::move(nodes));
  for (auto& [key, nodes] : regions) add(std::move(nodes));
  add(std::move(all));
  return out;
}

// The first port of a free block of gang ports on `node`'s host: one no other live member holds
// there, on this node or on another with the same address (agents sharing a host share its
// ports). 0 when all are taken.
int free_gang_port(const Draft& draft, const Node& node, const std::string& member_id) {
  std::set<int> held;
  auto hold = [&](const std::string& node_id) {
    for (const std::string& id : draft.instances_on(node_id)) {
      const Instance& other = *draft.instance(id);
      if (id != member_id && !is_final(other.state) && other.gang_port != 0) {
        held.insert(other.gang_port);
      }
    }
  };
  hold(node.id);
  if (!node.address.empty()) {
    draft.for_each_node([&](const Node& other) {
      if (other.id != node.id && other.address == node.address) hold(other.id);
    });
  }
  for (int slot = 0; slot < limits::kGangPortSlots; ++slot) {
    const int port = limits::kGangPortFirst + slot * limits::kGangPortsPerMember;
    if (!held.contains(port)) return port;
  }
  return 0;
}

// Tells each member where the others run: ranks, the nodes in rank order, and each member's
// address and ports, which its container publishes on its node so the others reach it there.
void introduce(Draft& draft, const std::vector<std::string>& members) {
  std::vector<std::string> hosts;
  std::vector<std::string> addresses;  // Each member's node, as its peers reach it.
  std::vector<std::string> endpoints;  // ADDRESS:PORT ([ADDRESS]:PORT for IPv6), rank order.
  for (const std::string& id : members) {
    const Node& node = *draft.node(draft.instance(id)->node_id);
    hosts.push_back(node.name);
    addresses.push_back(node.address.empty() ? node.name : node.address);
    const int port = free_gang_port(draft, node, id);
    draft.edit_instance(id).gang_port = port;
    const bool v6 = addresses.back().find(':') != std::string::npos;
    const std::string host = v6 ? "[" + addresses.back() + "]" : addresses.back();
    endpoints.push_back(port == 0 ? host : fmt::format("{}:{}", host, port));
  }
  const int leader_port = draft.instance(members.front())->gang_port;
  for (const std::string& id : members) {
    Instance& member = draft.edit_instance(id);
    auto& env = member.spec.env;
    env["ALLOT_GANG_ID"] = member.gang_id;
    env["ALLOT_GANG_RANK"] = std::to_string(member.gang_rank);
    env["ALLOT_GANG_SIZE"] = std::to_string(members.size());
    env["ALLOT_GANG_HOSTS"] = fmt::format("{}", fmt::join(hosts, ","));
    env["ALLOT_GANG_LEADER"] = hosts.front();
    env["ALLOT_GANG_ADDRS"] = fmt::format("{}", fmt::join(endpoints, ","));
    if (member.gang_port != 0) {
      env["ALLOT_GANG_PORT"] = std::to_string(member.gang_port);
      env["ALLOT_GANG_PORTS"] = fmt::format("{}-{}", member.gang_port,
                                            member.gang_port + limits::kGangPortsPerMember - 1);
    }
    // What torch.distributed reads for its rendezvous: the leader and its first port.
    env["MASTER_ADDR"] = addresses.front();
    if (leader_port != 0) env["MASTER_PORT"] = std::to_string(leader_port);
  }
}

// How many nodes could each take one member now, on their own: the gang waits until there are
// as many as it has members.
int nodes_that_fit(const Draft& draft, const Instance& member, TimeMs now_ms) {
  const NodeFilter priced = hard_limits_filter(draft.base(), member, now_ms);
  int count = 0;
  draft.for_each_node([&](const Node& node) {
    if (node_takes_work(node) && (!priced || priced(node)) &&
        !fitting_gpus(node, member.spec).empty()) {
      ++count;
    }
  });
  return count;
}

// "8 GPUs of H100", "250m of a GPU": what each member asks of its node.
std::string member_share(const InstanceSpec& spec) {
  std::string share = spec.gpus > 0 ? fmt::format("{} GPU{}", spec.gpus, spec.gpus == 1 ? "" : "s")
                                    : fmt::format("{}m of a GPU", spec.gpu_milli);
  if (!spec.gpu_models.empty()) share += fmt::format(" of {}", fmt::join(spec.gpu_models, " or "));
  return share;
}

}  // namespace

Outcome place_gang(Draft& draft, const std::vector<std::string>& members, TimeMs now_ms,
                   const Placing& placing) {
  for (const std::string& id : members) {
    if (draft.instance(id)->state != InstanceState::kQueued) return Outcome::kNoRoom;
  }
  std::string why = "no nodes are ready to take work";
  for (const std::set<std::string>& scope : scopes(draft, members.size())) {
    Draft trial = draft;
    std::set<std::string> taken;
    bool placed_all = true;
    for (const std::string& id : members) {
      const Instance& member = *trial.instance(id);
      const Admission admission = admit(trial, member, now_ms);
      if (!admission.ok) {
        for (const std::string& m : members) {
          if (draft.instance(m)->reason != "waits: " + admission.why) {
            draft.edit_instance(m).reason = "waits: " + admission.why;
          }
        }
        return Outcome::kNotAdmitted;
      }
      Instance probe = member;
      if (!admission.models.empty()) probe.spec.gpu_models = admission.models;
      const NodeFilter priced = hard_limits_filter(trial.base(), probe, now_ms);
      auto only = [&](const Node& node) {
        return scope.contains(node.id) && !taken.contains(node.id) && (!priced || priced(node));
      };
      std::string member_why;
      auto placement = placing.scheduler.place(trial, probe, only, member_why);
      if (!placement) {
        why = fmt::format("rank {} fits on none of the {} other nodes left: {}", member.gang_rank,
                          scope.size() - taken.size(), member_why);
        placed_all = false;
        break;
      }
      taken.insert(placement->node_id);
      Instance& placed = trial.edit_instance(id);
      bind(trial, placed, *placement, now_ms);
      hold_runway(trial, placed, *trial.node(placement->node_id), now_ms, placing.options);
    }
    if (placed_all) {
      introduce(trial, members);
      draft = std::move(trial);
      return Outcome::kPlaced;
    }
  }
  const Instance& first = *draft.instance(members.front());
  const int fit = nodes_that_fit(draft, first, now_ms);
  const std::string reason =
      fmt::format("waits for {} nodes at once: {} node{} can take {} now; {}", members.size(), fit,
                  fit == 1 ? "" : "s", member_share(first.spec), why);
  for (const std::string& id : members) {
    if (draft.instance(id)->reason != reason) draft.edit_instance(id).reason = reason;
  }
  return Outcome::kNoRoom;
}

}  // namespace allot
