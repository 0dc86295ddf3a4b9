// Runs a scenario through the core on virtual time: the simulated agents start placed work at
// once, heartbeat every heartbeat_s from time 0 (not while their node has failed), and report
// work exited when its run_s is over or it was told to stop.
//
// Virtual time jumps from one moment that matters to the next: an event, an exit, a rating
// interval, the tick that finds a failed node lost, the second a bounded tenant's money runs out.
// Heartbeats in between change nothing but the node's last heartbeat and the energy its GPUs'
// counters report, so each node gets the heartbeat of the last multiple of heartbeat_s before
// whatever happens next, and energy is kept exact by reports at the moments it is attributed:
// every hour's end (the core files a reading under the hour it arrives in), every start and end of
// work, and just before the core may end running work on its own.
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/money.h"
#include "common/random.h"
#include "core/core.h"
#include "core/money/metering.h"
#include "core/money/money.h"
#include "core/pools/demand.h"
#include "sched/core_scheduler.h"
#include "sim/gpu_meter.h"
#include "sim/pool_driver.h"
#include "sim/pool_report.h"
#include "sim/scenario.h"
#include "sim/scenario_books.h"
#include "sim/scenario_report.h"

namespace allot::sim {
namespace {

const std::string kToken = std::string(64, '0');
// An error of the books' commands, named by the scenario's item that caused it.
Status named(Status ok, const std::string& where) {
  if (ok) return ok;
  return std::unexpected(Error{ok.error().code, fmt::format("{}: {}", where, ok.error().message)});
}

class Runner {
 public:
  Runner(const Scenario& s, const Scheduler& scheduler, bool forecast, Predictor predictor)
      : s_(s),
        core_(CoreOptions{.heartbeat_timeout_ms = 3 * s.heartbeat_s * 1000,
                          .rating_interval_ms = s.rating_interval_s * 1000,
                          .runway_s = s.runway_s},
              &scheduler),
        pools_(s, forecast, std::move(predictor),
               [this](std::string_view prefix) { return next_id(prefix); }) {}

  Status run() {
    if (auto ok = setup(); !ok) return ok;
    size_t next_event = 0;
    for (int64_t t = 0; t <= s_.until_s;) {
      if (auto ok = heartbeats_before(t); !ok) return ok;
      if (auto ok = exits_at(t); !ok) return ok;
      if (auto ok = pool_nodes_at(t); !ok) return ok;
      for (; next_event < s_.events.size() && s_.events[next_event].at_s == t; ++next_event) {
        if (auto ok = event(s_.events[next_event]); !ok) return ok;
      }
      if (auto ok = report_before_tick(t); !ok) return ok;
      if (auto ok = apply(Tick{}, t); !ok) return ok;
      if (auto ok = start_placed(t); !ok) return ok;
      if (auto ok = autoscale(t); !ok) return ok;
      int64_t next = std::min(s_.until_s, (t / s_.rating_interval_s + 1) * s_.rating_interval_s);
      next = std::min(next, next_hour_s(t));
      if (next_event < s_.events.size()) next = std::min(next, s_.events[next_event].at_s);
      if (!exits_.empty()) next = std::min(next, exits_.begin()->first);
      next = std::min(next, watch(t));
      if (!s_.pools.empty()) next = std::min(next, pools_.next_after(t));
      if (t == s_.until_s) break;
      t = std::max(next, t + 1);
    }
    // The books close at the end: every tenant's usage so far is posted.
    return apply(Tick{.post_all = true}, s_.until_s);
  }

  const Core& core() const { return core_; }
  const PoolDriver& pools() const { return pools_; }

 private:
  // Each live node's heartbeat at the last multiple of heartbeat_s at or before t, once; and when
  // t is an hour's start, the report that closes the hour before it.
  Status heartbeats_before(int64_t t) {
    const int64_t at = t / s_.heartbeat_s * s_.heartbeat_s;
    const bool regular = at > last_beat_s_;
    if (regular && at < t) {
      if (auto ok = beat_all(at); !ok) return ok;
    }
    if (t > 0 && at_ms(t) % kHourMs == 0) {
      // The counters as of the hour's end, reported a millisecond before it, so that the hour's
      // energy is filed under that hour (and priced and weighed at its rates).
      for (const std::string& name : agents_) {
        if (failed_.contains(name)) continue;
        last_heard_s_[name] = t;
        if (auto ok = beat(node_ids_.at(name), at_ms(t) - 1, {}, at_ms(t)); !ok) return ok;
      }
    }
    if (regular && at == t) return beat_all(at);
    return {};
  }

  Status beat_all(int64_t at) {
    last_beat_s_ = at;
    for (const std::string& name : agents_) {
      if (failed_.contains(name)) continue;
      last_heard_s_[name] = at;
      if (auto ok = beat(node_ids_.at(name), at_ms(at), {}); !ok) return ok;
    }
    return {};
  }

  // The scenario second of the next hour's start after t.
  int64_t next_hour_s(int64_t t) const {
    const TimeMs now = at_ms(t);
    return (now - now % kHourMs + kHourMs - s_.start_ms + 999) / 1000;
  }

  // The core may end running work on its own now: spot work for on-demand work, or when a price
  // rises past its maximum; a bounded tenant's work when its money runs out. The nodes running
  // such work report first, so that the energy up to now goes to it.
  Status report_before(int64_t t, bool spot, const std::set<std::string>& tenants) {
    std::set<std::string> nodes;
    for (const std::string& id : active_) {
      const Instance& i = *core_.state().instance(id);
      if (i.state != InstanceState::kRunning) continue;
      if ((spot && i.spec.price_class == PriceClass::kSpot) || tenants.contains(i.tenant_id)) {
        nodes.insert(i.node_id);
      }
    }
    for (const std::string& node_id : nodes) {
      if (failed_.contains(core_.state().node(node_id)->name)) continue;
      if (last_report_ms_[node_id] >= at_ms(t)) continue;
      if (auto ok = beat(node_id, at_ms(t), {}); !ok) return ok;
    }
    return {};
  }

  // Before the timer: spot work may give way to queued work, and tenants whose money runs out by
  // now have their work stopped.
  Status report_before_tick(int64_t t) {
    std::set<std::string> running_out;
    for (const auto& [name, id] : tenant_ids_) {
      if (money_runs_out_at(core_.state(), id, at_ms(t), at_ms(t))) running_out.insert(id);
    }
    return report_before(t, !core_.state().queue.empty(), running_out);
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

  Status apply(const Command& command, int64_t t) { return apply_ms(command, at_ms(t)); }

  Status apply_ms(const Command& command, TimeMs now_ms) {
    auto rows = apply_rows(command, now_ms);
    if (!rows) return std::unexpected(rows.error());
    return {};
  }

  // Every change to the core goes through here, so that the GPUs' draw follows what runs: energy
  // up to now at the draw before, then the draw the change leaves.
  Result<Rows> apply_rows(const Command& command, TimeMs now_ms) {
    meters_.advance(now_ms);
    auto rows = core_.apply(command, now_ms);
    set_draw();
    return rows;
  }

  void set_draw() {
    std::set<std::string> down;
    for (const std::string& name : failed_) down.insert(node_ids_.at(name));
    meters_.set_draw(core_.state(), down, active_);
  }

  std::string next_id(std::string_view prefix) {
    return fmt::format("{}_{:016x}", prefix, ++serial_);
  }

  Status setup() {
    if (auto ok = apply(CreateJoinToken{next_id("jtk"), "sim", kToken, 0}, 0); !ok) return ok;
    for (const ScenarioNode& n : s_.nodes) {
      node_ids_[n.name] = next_id("nod");
      agents_.push_back(n.name);
      meters_.add_node(node_ids_.at(n.name), n.gpus, n.idle_w, n.busy_w);
      if (auto ok = join(n, 0); !ok) return ok;
    }
    if (auto ok = setup_books(); !ok) return ok;
    for (const auto& [command, where] : pools_.setup()) {
      if (auto ok = named(apply(command, 0), where); !ok) return ok;
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

  // The node's heartbeat at now_ms: its bound work runs, except what `ended` says has ended; its
  // GPUs' counters are read at reading_ms (0: now).
  Status beat(const std::string& node_id, TimeMs now_ms, const std::set<std::string>& ended,
              TimeMs reading_ms = 0) {
    meters_.advance(reading_ms != 0 ? reading_ms : now_ms);
    last_report_ms_[node_id] = now_ms;
    NodeHeartbeat hb{.node_id = node_id, .gpus = meters_.readings(node_id)};
    for (const std::string& id : bound_on(node_id)) {
      hb.workloads.push_back(WorkloadReport{.instance_id = id,
                                            .state = ended.contains(id)
                                                         ? WorkloadReportState::kExited
                                                         : WorkloadReportState::kRunning,
                                            .exit_code = 0});
    }
    return apply_ms(hb, now_ms);
  }

  std::vector<std::string> bound_on(const std::string& node_id) const {
    std::vector<std::string> out;
    for (const std::string& id : active_) {
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
    std::erase_if(active_, [&](const std::string& id) {
      return is_final(core_.state().instance(id)->state);
    });
    std::set<std::string> nodes;
    for (const std::string& id : active_) {
      const Instance& i = *core_.state().instance(id);
      if ((i.state == InstanceState::kScheduled || i.state == InstanceState::kStarting) &&
          !failed_.contains(core_.state().node(i.node_id)->name)) {
        nodes.insert(i.node_id);
      }
    }
    for (const std::string& node_id : nodes) {
      if (auto ok = beat(node_id, at_ms(t), {}); !ok) return ok;
    }
    for (const std::string& id : active_) {
      const Instance& i = *core_.state().instance(id);
      const int64_t run_s = run_s_.at(id);
      if (i.state == InstanceState::kRunning && run_s > 0 && !exit_scheduled_.contains(id)) {
        exits_.emplace((i.started_at_ms - s_.start_ms) / 1000 + run_s, id);
        exit_scheduled_.insert(id);
      }
    }
    return {};
  }

  // Pool machines whose boot is over join now, as agents of the pool's shape; at an hour's start
  // the forecast takes the hour before.
  Status pool_nodes_at(int64_t t) {
    for (PoolJoin& join : pools_.joins_due(core_.state(), t, at_ms(t))) {
      const ScenarioNode& n = join.node;
      node_ids_[n.name] = join.command.node_id;
      agents_.push_back(n.name);
      meters_.add_node(join.command.node_id, n.gpus, n.idle_w, n.busy_w);
      last_heard_s_[n.name] = t;
      if (auto ok = named(apply(join.command, t), "pool node " + n.name); !ok) return ok;
    }
    if (t > 0 && at_ms(t) % kHourMs == 0) return pools_.hour(core_.state(), at_ms(t));
    return {};
  }

  // An autoscaler round, when one is due: its decisions applied; a deleted node's agent stops.
  Status autoscale(int64_t t) {
    for (const Command& command : pools_.round(core_.state(), t, at_ms(t))) {
      if (auto ok = named(apply(command, t), fmt::format("autoscaler at {} s", t)); !ok) return ok;
    }
    std::erase_if(agents_, [&](const std::string& name) {
      const Node& node = *core_.state().node(node_ids_.at(name));
      if (!node.lost || node.labels.find("pool") == node.labels.end()) return false;
      meters_.remove_node(node.id);
      return true;
    });
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
    return beat(node.id, at_ms(t), {id});
  }

  std::string project_of(const std::string& tenant_id, const std::string& name) {
    auto [it, added] = project_ids_.try_emplace({tenant_id, name});
    if (added) {
      it->second = next_id("prj");
      pending_projects_.push_back(CreateProject{it->second, tenant_id, name});
    }
    return it->second;
  }

  Status submit(const ScenarioEvent& e) {
    const std::string tenant = tenant_ids_.at(e.tenant);
    const std::string project = project_of(tenant, e.project);
    for (const CreateProject& c : pending_projects_) {
      if (auto ok = apply(c, e.at_s); !ok) return ok;
    }
    pending_projects_.clear();
    if (auto ok = report_before(e.at_s, true, {}); !ok) return ok;
    const std::string id = next_id("ins");
    instance_ids_[e.id] = id;
    run_s_[id] = e.run_s;
    // Refused work (its tenant's money is used up) is reported, not an error of the run.
    auto rows = apply_rows(CreateInstance{id, tenant, project, "usr_sim", e.spec}, at_ms(e.at_s));
    if (!rows) {
      instance_ids_.erase(e.id);
      refused_[e.id] = rows.error();
    } else {
      // Only a running instance draws busy power, and a new one is at most placed.
      active_.insert(id);
    }
    return {};
  }

  // A node going down draws nothing until it is back; its counters keep what they had.
  Status set_failed(const std::string& name, bool failed, int64_t t) {
    meters_.advance(at_ms(t));
    if (failed) {
      failed_.insert(name);
    } else {
      failed_.erase(name);
    }
    set_draw();
    return failed ? Status{} : beat(node_ids_.at(name), at_ms(t), {});
  }

  Status event(const ScenarioEvent& e) {
    switch (e.kind) {
      case EventKind::kSubmit:
        return submit(e);
      case EventKind::kStop: {
        auto it = instance_ids_.find(e.id);
        if (it == instance_ids_.end()) return {};
        if (auto ok = apply(StopInstance{it->second}, e.at_s); !ok) return ok;
        return end_work(it->second, e.at_s);
      }
      case EventKind::kFailNode:
      case EventKind::kRestoreNode:
        return set_failed(e.node, e.kind == EventKind::kFailNode, e.at_s);
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
        if (auto ok = report_before(e.at_s, true, {}); !ok) return ok;
        return apply(SetPrice{price}, e.at_s);
      }
      default:
        return books_event(e);
    }
  }

  // The operator's books, before any work, each through the core's own command and its checks.
  Status setup_books() {
    const auto commands = books_commands(
        s_, [this](std::string_view prefix) { return next_id(prefix); }, node_ids_, asset_ids_);
    for (const auto& [command, where] : commands) {
      if (auto ok = apply(command, 0); !ok) return named(ok, where);
    }
    return {};
  }

  Status books_event(const ScenarioEvent& e) {
    auto command = books_event_command(e, at_ms(e.at_s), asset_ids_);
    if (!command) return {};
    if (e.kind == EventKind::kCarbon) {
      // Running work's energy so far is weighed at the intensity it was used under.
      std::set<std::string> tenants;
      for (const auto& [name, id] : tenant_ids_) tenants.insert(id);
      if (auto ok = report_before(e.at_s, false, tenants); !ok) return ok;
    }
    return named(apply(*command, e.at_s), fmt::format("{} (at {} s)", e.where, e.at_s));
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
  GpuMeters meters_;
  std::map<std::string, TimeMs> last_report_ms_;     // node id -> its last heartbeat
  std::map<std::string, std::string> asset_ids_;     // name -> id
  std::map<std::string, std::string> node_ids_;      // name -> id
  std::map<std::string, std::string> tenant_ids_;    // name -> id
  std::map<std::string, std::string> instance_ids_;  // scenario id -> id
  std::map<std::pair<std::string, std::string>, std::string> project_ids_;
  std::vector<CreateProject> pending_projects_;
  std::map<std::string, int64_t> run_s_;
  std::multimap<int64_t, std::string> exits_;
  std::set<std::string> exit_scheduled_;
  std::set<std::string> failed_;
  std::vector<std::string> agents_;  // Names of the nodes whose agents run, in join order.
  std::set<std::string> active_;     // Ids of instances not yet final.
  PoolDriver pools_;
  std::map<std::string, Error> refused_;
};

}  // namespace

namespace {

Result<nlohmann::json> run_once(const Scenario& scenario, bool forecast) {
  auto policy = sched::make_policy(scenario.policy);
  if (!policy) return std::unexpected(policy.error());
  const sched::PolicyScheduler scheduler(std::move(*policy));
  Runner runner(scenario, scheduler, forecast, default_predictor());
  if (auto ok = runner.run(); !ok) return std::unexpected(ok.error());
  const State& state = runner.core().state();
  nlohmann::json out = report(state,
                              ScenarioIds{.tenants = runner.tenant_ids(),
                                          .instances = runner.instance_ids(),
                                          .refused = runner.refused()},
                              scenario.start_ms, runner.end_ms());
  nlohmann::json workloads = nlohmann::json::array();
  for (const ScenarioWorkload& w : scenario.workloads) {
    workloads.push_back({{"seed", w.seed}, {"jobs", w.jobs}});
  }
  out["workloads"] = workloads;
  out["pools"] = pool_report(state, runner.end_ms());
  out["queue_wait"] = queue_wait(state);
  out["forecast"] = runner.pools().summary();
  return out;
}

}  // namespace

Result<nlohmann::json> run_scenario(const Scenario& scenario) {
  return run_once(scenario, scenario.forecast.enabled);
}

Result<nlohmann::json> compare_forecast(const Scenario& scenario) {
  auto without = run_once(scenario, false);
  if (!without) return without;
  auto with = run_once(scenario, true);
  if (!with) return with;
  return nlohmann::json{{"without_forecast", *without}, {"with_forecast", *with}};
}

}  // namespace allot::sim
