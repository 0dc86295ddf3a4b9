// The gauges and counters of /metrics that are read off the state (api/metrics.h).
#include <fmt/format.h>

#include <set>

#include "api/metrics.h"
#include "common/int128.h"
#include "core/money/money.h"
#include "core/money/spend.h"

namespace allot {
namespace {

void header(std::string& out, const char* name, const char* type, const char* help) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

void node_metrics(std::string& out, const State& state) {
  std::map<std::string, int> by_state;
  for (NodeState s : {NodeState::kRegistering, NodeState::kReady, NodeState::kCordoned,
                      NodeState::kDraining, NodeState::kUnhealthy, NodeState::kLost}) {
    by_state[std::string(node_state_name(s))] = 0;
  }
  std::map<std::pair<std::string, std::string>, int> gpus;  // (state, model)
  for (const auto& [id, node] : state.nodes) {
    if (node.deleted_at_ms != 0) continue;  // Out of the fleet: kept for the books only.
    ++by_state[std::string(node_state_name(node.state()))];
    for (const Gpu& gpu : node.gpus) {
      const char* s = !gpu.healthy || node.lost ? "unhealthy"
                      : gpu.used_milli > 0      ? "allocated"
                                                : "free";
      ++gpus[{s, gpu.model}];
    }
  }
  header(out, "allot_nodes", "gauge", "Nodes by state.");
  for (const auto& [s, n] : by_state) out += fmt::format("allot_nodes{{state=\"{}\"}} {}\n", s, n);
  header(out, "allot_gpus", "gauge", "GPUs by state (free, allocated, unhealthy) and model.");
  for (const auto& [key, n] : gpus) {
    out += fmt::format("allot_gpus{{state=\"{}\",model=\"{}\"}} {}\n", key.first,
                       label_value(key.second), n);
  }
}

void gpu_metrics(std::string& out, const State& state) {
  struct Series {
    const char* name;
    const char* type;
    const char* help;
  };
  const Series series[] = {
      {"allot_gpu_utilization_percent", "gauge", "GPU utilisation in the last heartbeat."},
      {"allot_gpu_power_watts", "gauge", "GPU board power in the last heartbeat."},
      {"allot_gpu_energy_joules_total", "counter", "GPU energy since its agent started."}};
  for (int which = 0; which < 3; ++which) {
    header(out, series[which].name, series[which].type, series[which].help);
    for (const auto& [id, node] : state.nodes) {
      if (node.lost || node.last_heartbeat_ms == 0) continue;
      for (const Gpu& gpu : node.gpus) {
        const GpuTelemetry& t = gpu.telemetry;
        const double value = which == 0   ? t.utilization_pct
                             : which == 1 ? static_cast<double>(t.power_mw) / 1e3
                                          : static_cast<double>(t.energy_mj) / 1e3;
        out += fmt::format("{}{{node=\"{}\",gpu=\"{}\",model=\"{}\"}} {}\n", series[which].name,
                           label_value(node.name), gpu.index, label_value(gpu.model), value);
      }
    }
  }
}

// When the instance left the queue: its first event into a state past queued.
TimeMs placed_at(const Instance& instance) {
  for (const InstanceEvent& e : instance.events) {
    if (!e.state.empty() && e.state != "queued") return e.at_ms;
  }
  return 0;
}

void instance_metrics(std::string& out, const State& state) {
  std::map<std::string, int> by_state;
  for (InstanceState s :
       {InstanceState::kQueued, InstanceState::kScheduled, InstanceState::kStarting,
        InstanceState::kRunning, InstanceState::kSucceeded, InstanceState::kFailed,
        InstanceState::kStopped, InstanceState::kPreempted, InstanceState::kLost}) {
    by_state[std::string(instance_state_name(s))] = 0;
  }
  Histogram wait;
  for (const auto& [id, instance] : state.instances) {
    ++by_state[std::string(instance_state_name(instance.state))];
    if (const TimeMs at = placed_at(instance); at != 0) {
      wait.observe(static_cast<double>(at - instance.created_at_ms) / 1e3);
    }
  }
  header(out, "allot_instances", "gauge", "Instances by state.");
  for (const auto& [s, n] : by_state) {
    out += fmt::format("allot_instances{{state=\"{}\"}} {}\n", s, n);
  }
  header(out, "allot_queue_length", "gauge", "Instances waiting in the queue.");
  out += fmt::format("allot_queue_length {}\n", by_state["queued"]);
  header(out, "allot_queue_wait_seconds", "histogram",
         "From an instance's creation to its placement, over every instance placed.");
  wait.write(out, "allot_queue_wait_seconds", "");
}

void money_metrics(std::string& out, const State& state, TimeMs now_ms) {
  std::set<std::string> ids;
  for (const auto& [id, tenant] : state.tenants) ids.insert(id);
  const auto spends = month_spends(state, ids, now_ms);
  header(out, "allot_tenant_month_spend_micros", "gauge",
         "What the tenant's work cost this calendar month, in micro-units.");
  for (const auto& [id, tenant] : state.tenants) {
    const auto it = spends.find(id);
    out +=
        fmt::format("allot_tenant_month_spend_micros{{tenant=\"{}\",tenant_id=\"{}\"}} {}\n",
                    label_value(tenant.name), id, it == spends.end() ? 0 : it->second.total_micros);
  }
  header(out, "allot_tenant_balance_micros", "gauge",
         "The tenant's cash and promotional credit, in micro-units (negative: owed).");
  for (const auto& [id, tenant] : state.tenants) {
    const auto balance = balance_of(state, id, now_ms);
    if (!balance) continue;
    out +=
        fmt::format("allot_tenant_balance_micros{{tenant=\"{}\",tenant_id=\"{}\"}} {}\n",
                    label_value(tenant.name), id, balance->cash_micros + balance->credits_micros);
  }
  const auto sums = state.ledger.sums();
  Int128 posted = 0;
  for (const auto& [id, account] : state.ledger.accounts()) posted += account.debits_posted;
  header(out, "allot_ledger_transfers_total", "counter", "Transfers the ledger has applied.");
  out += fmt::format("allot_ledger_transfers_total {}\n", state.ledger.transfers().size());
  header(out, "allot_ledger_posted_micros_total", "counter",
         "Money posted by the ledger's transfers (each once), in micro-units.");
  out += fmt::format("allot_ledger_posted_micros_total {}\n", static_cast<double>(posted));
  header(out, "allot_ledger_balance_sum_micros", "gauge",
         "Credits minus debits over every account: zero, as double entry demands.");
  out += fmt::format("allot_ledger_balance_sum_micros {}\n", static_cast<double>(sums.posted));
}

}  // namespace

std::string render_state_metrics(const State& state, TimeMs now_ms) {
  std::string out;
  node_metrics(out, state);
  gpu_metrics(out, state);
  instance_metrics(out, state);
  money_metrics(out, state, now_ms);
  return out;
}

}  // namespace allot
