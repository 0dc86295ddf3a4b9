// Runs a scenario through the core on virtual time: the simulated agents start placed work at
// once, heartbeat every heartbeat_s from time 0 (not while their node has failed), and report
// work exited when its run_s is over or it was told to stop.
//
// Virtual time jumps from one moment that matters to the next: an event, an exit, a rating
// interval, the tick that finds a failed node lost, the second a bounded tenant's money runs out.
// Heartbeats in between change nothing but the node's last heartbeat, so each node gets the
// heartbeat of the last multiple of heartbeat_s before whatever happens next.
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/money.h"
#include "common/random.h"
#include "core/core.h"
#include "core/metering.h"
#include "core/money.h"
#include "sched/core_scheduler.h"
#include "sim/scenario.h"
#include "sim/scenario_report.h"

namespace allot::sim {
namespace {

const std::string kToken = std::string(64, '0');

class Runner {
 public:
  Runner(const Scenario& s, const Scheduler& scheduler)
      : s_(s),
        core_(CoreOptions{.heartbeat_timeout_ms = 3 * s.heartbeat_s * 1000,
                          .rating_interval_ms = s.rating_interval_s * 1000,
                          .runway_s = s.runway_s},
              &scheduler) {}

  Status run() {
    if (auto ok = setup(); !ok) return ok;
    size_t next_event = 0;
    for (int64_t t = 0; t <= s_.until_s;) {
      if (auto ok = heartbeats_before(t); !ok) return ok;
      if (auto ok = exits_at(t); !ok) return ok;
      for (; next_event < s_.events.size() && s_.events[next_event].at_s == t; ++next_event) {
        if (auto ok = event(s_.events[next_event]); !ok) return ok;
      }
      if (auto ok = apply(Tick{}, t); !ok) return ok;
      if (auto ok = start_placed(t); !ok) return ok;
      int64_t next = std::min(s_.until_s, (t / s_.rating_interval_s + 1) * s_.rating_interval_s);
      if (next_event < s_.events.size()) next = std::min(next, s_.events[next_event].at_s);
      if (!exits_.empty()) next = std::min(next, exits_.begin()->first);
      next = std::min(next, watch(t));
      if (t == s_.until_s) break;
      t = std::max(next, t + 1);
    }
    // The books close at the end: every tenant's usage so far is posted.
    return apply(Tick{.post_all = true}, s_.until_s);
  }

  const Core& core() const { return core_; }

 private:
  // Each live node's heartbeat at the last multiple of heartbeat_s at or before t, once.
  Status heartbeats_before(int64_t t) {
    const int64_t at = t / s_.heartbeat_s * s_.heartbeat_s;
    if (at <= last_beat_s_) return {};
    last_beat_s_ = at;
    for (const auto& node : s_.nodes) {
      if (failed_.contains(node.name)) continue;
      last_heard_s_[node.name] = at;
      if (auto ok = beat(node_ids_.at(node.name), at, {}); !ok) return ok;
    }
    return {};
  }

  // The next moment the timer must see after t: a failed node found lost, or a bounded tenant's
  // money running out.
  int64_t watch(int64_t t) {
    int64_t next = s_.until_s;
    for (const std::string& name : failed_) {
      const Node& node = *core_.state().node(node_ids_.at(name));
      if (!node.lost) next = std::min(next, last_heard_s_[name] + 3 * s_.heartbeat_s + 1);
    }
    for (const auto& [name, id] : tenant_ids_) {
      auto out = money_runs_out_at(core_.state(), id, at_ms(t), at_ms(s_.until_s));
      if (out) next = std::min(next, (*out - s_.start_ms) / 1000);
    }
    return next;
  }

 public:
  const std::map<std::string, std::string>& instance_ids() const { return instance_ids_; }
  const std::map<std::string, std::string>& tenant_ids() const { return tenant_ids_; }
  TimeMs end_ms() const { return at_ms(s_.until_s); }

 private:
  TimeMs at_ms(int64_t t) const { return s_.start_ms + t * 1000; }

  Status apply(const Command& command, int64_t t) {
    auto rows = core_.apply(command, at_ms(t));
    if (!rows) return std::unexpected(rows.error());
    return {};
  }

  std::string next_id(std::string_view prefix) {
    return fmt::format("{}_{:016x}", prefix, ++serial_);
  }

  Status setup() {
    if (auto ok = apply(CreateJoinToken{next_id("jtk"), "sim", kToken, 0}, 0); !ok) return ok;
    for (const ScenarioNode& n : s_.nodes) {
      node_ids_[n.name] = next_id("nod");
      if (auto ok = join(n, 0); !ok) return ok;
    }
    for (const ScenarioTenant& t : s_.tenants) {
      const std::string id = next_id("ten");
      tenant_ids_[t.name] = id;
      if (auto ok = apply(CreateTenant{id, t.name}, 0); !ok) return ok;
      if (auto ok = apply(SetBilling{id, t.billing, t.credit_limit_micros}, 0); !ok) return ok;
    }
    return {};
  }

  Status join(const ScenarioNode& n, int64_t t) {
    JoinNode join{.node_id = node_ids_.at(n.name),
                  .join_token_hash = kToken,
                  .credential_hash = sha256_hex(n.name),
                  .name = n.name,
                  .region = n.region,
                  .cpu_milli = 256'000,
                  .memory_mib = 2'048'000,
                  .backend = "simulated"};
    for (int i = 0; i < n.gpus; ++i) {
      join.gpus.push_back(
          GpuReport{.index = i, .uuid = fmt::format("{}-gpu-{}", n.name, i), .model = n.model});
    }
    return apply(join, t);
  }

  // The node's heartbeat: its bound work runs, except what `ended` says has ended.
  Status beat(const std::string& node_id, int64_t t, const std::set<std::string>& ended) {
    NodeHeartbeat hb{.node_id = node_id};
    for (const std::string& id : bound_on(node_id)) {
      hb.workloads.push_back(WorkloadReport{.instance_id = id,
                                            .state = ended.contains(id)
                                                         ? WorkloadReportState::kExited
                                                         : WorkloadReportState::kRunning,
                                            .exit_code = 0});
    }
    return apply(hb, t);
  }

  std::vector<std::string> bound_on(const std::string& node_id) const {
    std::vector<std::string> out;
    for (const auto& [scenario_id, id] : instance_ids_) {
      const Instance* i = core_.state().instance(id);
      if (i != nullptr && i->node_id == node_id && !is_final(i->state) &&
          i->state != InstanceState::kQueued) {
        out.push_back(id);
      }
    }
    return out;
  }

  // Placed work on nodes that are up starts now; work that has a run time gets its exit.
  Status start_placed(int64_t t) {
    std::set<std::string> nodes;
    for (const auto& [scenario_id, id] : instance_ids_) {
      const Instance& i = *core_.state().instance(id);
      if ((i.state == InstanceState::kScheduled || i.state == InstanceState::kStarting) &&
          !failed_.contains(core_.state().node(i.node_id)->name)) {
        nodes.insert(i.node_id);
      }
    }
    for (const std::string& node_id : nodes) {
      if (auto ok = beat(node_id, t, {}); !ok) return ok;
    }
    for (const auto& [scenario_id, id] : instance_ids_) {
      const Instance& i = *core_.state().instance(id);
      const int64_t run_s = run_s_.at(id);
      if (i.state == InstanceState::kRunning && run_s > 0 && !exit_scheduled_.contains(id)) {
        exits_.emplace((i.started_at_ms - s_.start_ms) / 1000 + run_s, id);
        exit_scheduled_.insert(id);
      }
    }
    return {};
  }

  Status exits_at(int64_t t) {
    while (!exits_.empty() && exits_.begin()->first <= t) {
      const std::string id = exits_.begin()->second;
      exits_.erase(exits_.begin());
      exit_scheduled_.erase(id);
      if (auto ok = end_work(id, t); !ok) return ok;
    }
    return {};
  }

  // The agent reports the work gone (it exited, or it was stopped and killed).
  Status end_work(const std::string& id, int64_t t) {
    const Instance& i = *core_.state().instance(id);
    if (is_final(i.state) || i.state == InstanceState::kQueued) return {};
    const Node& node = *core_.state().node(i.node_id);
    if (failed_.contains(node.name)) return {};
    return beat(node.id, t, {id});
  }

  std::string project_of(const std::string& tenant_id, const std::string& name) {
    auto [it, added] = project_ids_.try_emplace({tenant_id, name});
    if (added) {
      it->second = next_id("prj");
      pending_projects_.push_back(CreateProject{it->second, tenant_id, name});
    }
    return it->second;
  }

  Status event(const ScenarioEvent& e) {
    switch (e.kind) {
      case EventKind::kSubmit: {
        const std::string tenant = tenant_ids_.at(e.tenant);
        const std::string project = project_of(tenant, e.project);
        for (const CreateProject& c : pending_projects_) {
          if (auto ok = apply(c, e.at_s); !ok) return ok;
        }
        pending_projects_.clear();
        const std::string id = next_id("ins");
        instance_ids_[e.id] = id;
        run_s_[id] = e.run_s;
        // Refused work (its tenant's money is used up) is reported, not an error of the run.
        auto rows =
            core_.apply(CreateInstance{id, tenant, project, "usr_sim", e.spec}, at_ms(e.at_s));
        if (!rows) {
          instance_ids_.erase(e.id);
          refused_[e.id] = rows.error();
        }
        return {};
      }
      case EventKind::kStop: {
        auto it = instance_ids_.find(e.id);
        if (it == instance_ids_.end()) return {};
        if (auto ok = apply(StopInstance{it->second}, e.at_s); !ok) return ok;
        return end_work(it->second, e.at_s);
      }
      case EventKind::kFailNode:
        failed_.insert(e.node);
        return {};
      case EventKind::kRestoreNode:
        failed_.erase(e.node);
        return beat(node_ids_.at(e.node), e.at_s, {});
      case EventKind::kTopup:
        return apply(Topup{.id = fmt::format("sim-{}", ++topups_),
                           .tenant_id = tenant_ids_.at(e.topup.tenant),
                           .amount_micros = e.topup.amount_micros,
                           .credit = e.topup.credit,
                           .expires_at_ms = e.topup.expires_s == 0 ? 0 : at_ms(e.topup.expires_s)},
                     e.at_s);
      case EventKind::kPrice: {
        meter::Price price = e.price;
        price.effective_ms = at_ms(e.at_s);
        return apply(SetPrice{price}, e.at_s);
      }
    }
    return {};
  }

 public:
  const std::map<std::string, Error>& refused() const { return refused_; }

 private:
  const Scenario& s_;
  Core core_;
  int64_t serial_ = 0;
  int64_t last_beat_s_ = -1;
  std::map<std::string, int64_t> last_heard_s_;  // node name -> its last heartbeat
  int64_t topups_ = 0;
  std::map<std::string, std::string> node_ids_;      // name -> id
  std::map<std::string, std::string> tenant_ids_;    // name -> id
  std::map<std::string, std::string> instance_ids_;  // scenario id -> id
  std::map<std::pair<std::string, std::string>, std::string> project_ids_;
  std::vector<CreateProject> pending_projects_;
  std::map<std::string, int64_t> run_s_;
  std::multimap<int64_t, std::string> exits_;
  std::set<std::string> exit_scheduled_;
  std::set<std::string> failed_;
  std::map<std::string, Error> refused_;
};

}  // namespace

Result<nlohmann::json> run_scenario(const Scenario& scenario) {
  auto policy = sched::make_policy(scenario.policy);
  if (!policy) return std::unexpected(policy.error());
  const sched::PolicyScheduler scheduler(std::move(*policy));
  Runner runner(scenario, scheduler);
  if (auto ok = runner.run(); !ok) return std::unexpected(ok.error());
  return report(runner.core().state(),
                ScenarioIds{.tenants = runner.tenant_ids(),
                            .instances = runner.instance_ids(),
                            .refused = runner.refused()},
                scenario.start_ms, runner.end_ms());
}

}  // namespace allot::sim
