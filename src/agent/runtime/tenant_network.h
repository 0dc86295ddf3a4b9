// One podman bridge network per tenant on a node, walled in by the agent's own firewall rules:
// a tenant's containers reach each other and, unless egress is denied, the outside world; never
// another tenant's containers, and never the node itself (so not the agent, allotd on the same
// host, or any other service listening there), except DNS.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "agent/runtime/container_runtime.h"
#include "common/clock.h"

namespace allot::agent {

// Why gang members could fail to start on this host: the ephemeral ports its kernel hands to
// outgoing connections (`range_file`, normally /proc/sys/net/ipv4/ip_local_port_range) overlap
// the gang ports, so one of them may be held when a member publishes its block. Empty when they
// are apart or the file cannot be read.
std::string gang_port_clash(const std::string& range_file);

class TenantNetworks {
 public:
  explicit TenantNetworks(const ContainerOptions& options) : options_(options) {}

  // The network for `tenant_id`, created and walled in on first use. kUnavailable when podman or
  // the firewall refuses: a container must not start without its walls.
  [[nodiscard]] Result<std::string> ensure(const std::string& tenant_id);
  // Told at every poll which tenants have work here: a network none of whose tenant's work has
  // been here for kIdleMs is removed, so that a node that has served many tenants does not run
  // out of bridge subnets, while a tenant starting short jobs one after another keeps its own.
  void keep_only_busy(const std::set<std::string>& busy, TimeMs now_ms);
  // Removes this agent's networks of tenants not in `in_use` (after an agent restart).
  void release_all_but(const std::set<std::string>& in_use);

  // A gang member's way to its peers: the tenant's containers here may open connections to each
  // peer's published gang ports ("ADDRESS:PORT", the block of limits::kGangPortsPerMember from
  // PORT), which every other container is refused. Kept until close_peers(instance_id).
  [[nodiscard]] Status open_peers(const std::string& tenant_id, const std::string& instance_id,
                                  const std::vector<std::string>& peers);
  // Removes what open_peers made for the instance; for every instance but `keep` with close_all.
  void close_peers(const std::string& instance_id);
  void close_all_peers_but(const std::set<std::string>& keep);

  static constexpr TimeMs kIdleMs = 300'000;

 private:
  Status wall_in(const std::string& interface);
  // Deletes the gang rules (open_peers) whose `iptables -S` line `which` admits.
  void forget_gang_rules(const std::function<bool(const std::string&)>& which);
  // Removes the network; one still in use stays.
  void release(const std::string& tenant_id);

  const ContainerOptions& options_;
  std::set<std::string> ready_;                    // Tenants whose network is made and walled.
  std::map<std::string, std::string> interfaces_;  // Their networks' bridges.
  std::map<std::string, TimeMs> idle_since_;  // Tenants of ready_ with no work here, since when.
};

}  // namespace allot::agent
