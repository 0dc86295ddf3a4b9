#include "agent/runtime/tenant_network.h"

#include <charconv>
#include <chrono>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/limits.h"

#include "agent/runtime/command.h"

namespace allot::agent {
namespace {

using namespace std::chrono_literals;

constexpr auto kCommandTimeout = 30s;
constexpr std::string_view kForwardChain = "ALLOT-ISOLATION";
constexpr std::string_view kInputChain = "ALLOT-HOST";
constexpr std::string_view kCniAdminChain = "CNI-ADMIN";
// podman's CNI bridges are named cni-podmanN; a tenant's may only talk to itself among them.
constexpr std::string_view kBridges = "cni-podman+";

constexpr std::string_view kTenantLabel = "allot.tenant=";  // Read back by release_all_but.

// Each agent's own networks, even where several agents share a host (tests, demos).
std::string network_name(const std::string& owner, const std::string& tenant_id) {
  std::string name = "allot-" + owner.substr(0, 8) + "-";
  for (const char c : tenant_id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    name += ok ? c : '-';
  }
  return tenant_id.empty() ? name + "shared" : name;
}

// Every gang port of a node, FIRST:LAST.
std::string gang_port_range() {
  return fmt::format("{}:{}", limits::kGangPortFirst, limits::kGangPortLast);
}

// Marks the rules open_peers makes for an instance of one agent (several may share a host).
std::string peers_comment(const std::string& owner, const std::string& instance_id) {
  return "allot-gang-" + owner.substr(0, 8) + "-" + instance_id;
}

Result<CommandOutput> checked(const std::vector<std::string>& argv) {
  auto out = run_command(argv, kCommandTimeout);
  if (!out) return out;
  if (out->exit_code != 0) {
    return fail(ErrorCode::kUnavailable,
                argv.front() + " " + argv[1] + ": " + last_line(out->output));
  }
  return out;
}

}  // namespace

std::string gang_port_clash(const std::string& range_file) {
  std::ifstream in(range_file);
  int low = 0;
  int high = 0;
  if (!(in >> low >> high) || high < limits::kGangPortFirst || low > limits::kGangPortLast) {
    return {};
  }
  return fmt::format(
      "the ephemeral ports {}-{} ({}) overlap the gang ports {}-{}: a gang member whose ports an "
      "outgoing connection holds fails to start; set net.ipv4.ip_local_port_range apart, or "
      "list the gang ports in net.ipv4.ip_local_reserved_ports",
      low, high, range_file, limits::kGangPortFirst, limits::kGangPortLast);
}

Result<std::string> TenantNetworks::ensure(const std::string& tenant_id) {
  std::string name = network_name(options_.owner, tenant_id);
  idle_since_.erase(tenant_id);
  if (ready_.contains(tenant_id)) return name;
  const auto exists = run_command({options_.podman, "network", "exists", name}, kCommandTimeout);
  if (!exists) return std::unexpected(exists.error());
  if (exists->exit_code != 0) {
    std::vector<std::string> create = {options_.podman,
                                       "network",
                                       "create",
                                       "--label",
                                       "allot.owner=" + options_.owner,
                                       "--label",
                                       std::string(kTenantLabel) + tenant_id};
    if (options_.deny_egress) create.emplace_back("--internal");
    create.push_back(name);
    auto created = checked(create);
    // Another agent on the host may have made it meanwhile.
    if (!created) {
      const auto again = run_command({options_.podman, "network", "exists", name}, kCommandTimeout);
      if (!again || again->exit_code != 0) return std::unexpected(created.error());
    }
  }
  auto inspected =
      checked({options_.podman, "network", "inspect", "--format", "{{.NetworkInterface}}", name});
  if (!inspected) return std::unexpected(inspected.error());
  const std::string interface = last_line(inspected->output);
  if (interface.empty()) return fail(ErrorCode::kUnavailable, "network " + name + " has no bridge");
  if (!options_.firewall.empty()) {
    if (Status walled = wall_in(interface); !walled) return std::unexpected(walled.error());
  }
  if (!options_.firewall.empty()) {
    // A bridge name is reused by later networks: ways opened for gangs on an earlier network of
    // that name (by an agent that died with them) must not open this one.
    forget_gang_rules([&](const std::string& line) {
      return line.find(" -i " + interface + " ") != std::string::npos;
    });
  }
  ready_.insert(tenant_id);
  interfaces_[tenant_id] = interface;
  return name;
}

void TenantNetworks::release(const std::string& tenant_id) {
  const std::string name = network_name(options_.owner, tenant_id);
  ready_.erase(tenant_id);
  idle_since_.erase(tenant_id);
  interfaces_.erase(tenant_id);
  (void)run_command({options_.podman, "network", "rm", name}, kCommandTimeout);
}

void TenantNetworks::keep_only_busy(const std::set<std::string>& busy, TimeMs now_ms) {
  std::vector<std::string> idle;
  for (const std::string& tenant : ready_) {
    if (busy.contains(tenant)) {
      idle_since_.erase(tenant);
      continue;
    }
    const TimeMs since = idle_since_.try_emplace(tenant, now_ms).first->second;
    if (now_ms - since >= kIdleMs) idle.push_back(tenant);
  }
  for (const std::string& tenant : idle) release(tenant);
}

void TenantNetworks::release_all_but(const std::set<std::string>& in_use) {
  auto listed = run_command({options_.podman, "network", "ls", "--filter",
                             "label=allot.owner=" + options_.owner, "--format", "json"},
                            kCommandTimeout);
  if (!listed || listed->exit_code != 0) return;
  const auto networks = nlohmann::json::parse(listed->output, nullptr, false);
  if (!networks.is_array()) return;
  for (const auto& network : networks) {
    const auto labels = network.value("labels", nlohmann::json::object());
    const std::string tenant = labels.value("allot.tenant", "");
    if (labels.contains("allot.tenant") && !in_use.contains(tenant)) release(tenant);
  }
}

// Rules are added only when `iptables -C` does not find them, so agents and restarts share them.
Status TenantNetworks::wall_in(const std::string& interface) {
  const std::string& ipt = options_.firewall;
  const std::string forward(kForwardChain);
  const std::string input(kInputChain);
  auto ensure_rule = [&ipt](const std::string& chain, const std::vector<std::string>& rule,
                            bool first) -> Status {
    std::vector<std::string> check = {ipt, "-w", "-C", chain};
    check.insert(check.end(), rule.begin(), rule.end());
    auto found = run_command(check, kCommandTimeout);
    if (!found) return std::unexpected(found.error());
    if (found->exit_code == 0) return {};
    std::vector<std::string> add = {ipt, "-w", first ? "-I" : "-A", chain};
    if (first) add.emplace_back("1");
    add.insert(add.end(), rule.begin(), rule.end());
    auto added = checked(add);
    if (!added) return std::unexpected(added.error());
    return {};
  };
  for (const std::string& chain : {forward, input}) {
    (void)run_command({ipt, "-w", "-N", chain}, kCommandTimeout);  // Exists already: fine.
  }
  const std::string bridges(kBridges);
  // Hooks from the built-in chains, first so that no broader ACCEPT comes before them.
  if (Status hooked = ensure_rule("FORWARD", {"-j", forward}, true); !hooked) return hooked;
  if (Status hooked = ensure_rule("INPUT", {"-j", input}, true); !hooked) return hooked;
  // podman's CNI firewall plugin, the first time a container starts on the host, puts its own
  // chain first in FORWARD, and that chain accepts each container's traffic; on a fresh host that
  // is after the hook above, which then comes too late. The plugin's CNI-ADMIN chain runs before
  // those accepts and is there for an administrator's rules: the walls hook there too, so they
  // hold whichever came first. The plugin keeps a chain it finds.
  (void)run_command({ipt, "-w", "-N", std::string(kCniAdminChain)}, kCommandTimeout);
  if (Status hooked = ensure_rule(std::string(kCniAdminChain), {"-j", forward}, true); !hooked) {
    return hooked;
  }
  // Connections that were let through, both ways (podman's own bridge isolation, further on,
  // would drop the replies of a gang's peers on one host); and no container reaches a gang's
  // ports beyond its node unless open_peers opened that way for it.
  if (Status added = ensure_rule(
          forward, {"-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED", "-j", "ACCEPT"}, true);
      !added) {
    return added;
  }
  if (Status added = ensure_rule(forward,
                                 {"-i", bridges, "!", "-o", bridges, "-p", "tcp", "-m", "conntrack",
                                  "--ctorigdstport", gang_port_range(), "-j", "REJECT"},
                                 false);
      !added) {
    return added;
  }
  // Same bridge: one tenant's containers. Any other bridge: refused, both ways.
  for (const auto& rule :
       std::vector<std::vector<std::string>>{{"-i", interface, "-o", interface, "-j", "RETURN"},
                                             {"-i", interface, "-o", bridges, "-j", "REJECT"},
                                             {"-i", bridges, "-o", interface, "-j", "REJECT"}}) {
    if (Status added = ensure_rule(forward, rule, false); !added) return added;
  }
  // The node itself: DNS only.
  for (const auto& rule : std::vector<std::vector<std::string>>{
           {"-i", interface, "-p", "udp", "--dport", "53", "-j", "RETURN"},
           {"-i", interface, "-p", "tcp", "--dport", "53", "-j", "RETURN"},
           {"-i", interface, "-j", "REJECT"}}) {
    if (Status added = ensure_rule(input, rule, false); !added) return added;
  }
  return {};
}

Status TenantNetworks::open_peers(const std::string& tenant_id, const std::string& instance_id,
                                  const std::vector<std::string>& peers) {
  if (options_.firewall.empty() || peers.empty()) return {};
  const auto interface = interfaces_.find(tenant_id);
  if (interface == interfaces_.end()) {
    return fail(ErrorCode::kUnavailable, "no network for tenant " + tenant_id);
  }
  for (const std::string& peer : peers) {
    const size_t colon = peer.rfind(':');
    int port = 0;
    if (colon != std::string::npos) {
      std::from_chars(peer.data() + colon + 1, peer.data() + peer.size(), port);
    }
    if (colon == std::string::npos || peer.starts_with('[') || port < limits::kGangPortFirst) {
      continue;  // An IPv6 peer or one without ports: nothing this IPv4 firewall can open.
    }
    const std::vector<std::string> rule = {
        options_.firewall,
        "-w",
        "-I",
        std::string(kForwardChain),
        "1",
        "-i",
        interface->second,
        "-p",
        "tcp",
        "-m",
        "conntrack",
        "--ctorigdst",
        peer.substr(0, colon),
        "--ctorigdstport",
        fmt::format("{}:{}", port, port + limits::kGangPortsPerMember - 1),
        "-m",
        "comment",
        "--comment",
        peers_comment(options_.owner, instance_id),
        "-j",
        "ACCEPT"};
    if (auto added = checked(rule); !added) return std::unexpected(added.error());
  }
  return {};
}

void TenantNetworks::forget_gang_rules(const std::function<bool(const std::string&)>& which) {
  auto listed =
      run_command({options_.firewall, "-w", "-S", std::string(kForwardChain)}, kCommandTimeout);
  if (!listed || listed->exit_code != 0) return;
  std::istringstream lines(listed->output);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("-A ") || line.find("--comment allot-gang-") == std::string::npos ||
        !which(line)) {
      continue;
    }
    std::vector<std::string> remove = {options_.firewall, "-w", "-D"};
    std::istringstream words(line.substr(3));
    for (std::string word; words >> word;) remove.push_back(word);
    (void)run_command(remove, kCommandTimeout);
  }
}

void TenantNetworks::close_peers(const std::string& instance_id) {
  if (options_.firewall.empty()) return;
  const std::string mark = "--comment " + peers_comment(options_.owner, instance_id) + " ";
  forget_gang_rules([&](const std::string& line) { return line.find(mark) != std::string::npos; });
}

void TenantNetworks::close_all_peers_but(const std::set<std::string>& keep) {
  if (options_.firewall.empty()) return;
  const std::string prefix = "--comment " + peers_comment(options_.owner, "");
  forget_gang_rules([&](const std::string& line) {
    const size_t at = line.find(prefix);
    if (at == std::string::npos) return false;
    std::istringstream rest(line.substr(at + prefix.size()));
    std::string id;
    rest >> id;
    return !keep.contains(id);
  });
}

}  // namespace allot::agent
