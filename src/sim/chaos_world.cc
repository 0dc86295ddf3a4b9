#include "sim/chaos_world.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/random.h"
#include "core/pools/autoscale.h"
#include "core/pools/burst_pool.h"

namespace allot::sim {
namespace {

constexpr int64_t kUnit = 1'000'000;
constexpr std::string_view kModels[] = {"H100-80GB", "A100-80GB"};
constexpr std::string_view kRegions[] = {"eu", "us"};
constexpr int kCriticalXid = 79;  // The GPU fell off the bus.

// Instances an agent runs: placed on its node and not ended.
std::vector<const Instance*> placed_on(const State& state, const std::string& node_id) {
  std::vector<const Instance*> out;
  for (const auto& [id, i] : state.instances) {
    if (i.node_id == node_id && !is_final(i.state) && i.state != InstanceState::kQueued) {
      out.push_back(&i);
    }
  }
  return out;
}

}  // namespace

ChaosWorld::ChaosWorld(uint64_t seed, TimeMs start_ms) : rng_(seed), now_ms_(start_ms) {}

std::string ChaosWorld::next_id(std::string_view prefix) {
  return fmt::format("{}_{:016x}", prefix, ++next_);
}

ChaosStep ChaosWorld::setup() {
  ChaosStep step{.action = "setup"};
  std::vector<Command>& out = step.commands;
  out.emplace_back(CreateTenant{next_id("ten"), "operator", true});
  const int tenants = 2 + static_cast<int>(draw(2));
  for (int t = 0; t < tenants; ++t) {
    const std::string id = next_id("ten");
    tenants_.push_back(id);
    out.emplace_back(CreateTenant{id, fmt::format("tenant-{}", t)});
    project_of_[id] = next_id("prj");
    out.emplace_back(CreateProject{project_of_[id], id, "main"});
    switch (draw(3)) {
      case 0:
        out.emplace_back(SetBilling{id, BillingMode::kPrepaid});
        out.emplace_back(Topup{.id = next_id("pay"),
                               .tenant_id = id,
                               .amount_micros = static_cast<int64_t>(draw(200) + 1) * kUnit});
        break;
      case 1:
        out.emplace_back(
            SetBilling{id, BillingMode::kPostpaid, static_cast<int64_t>(draw(100) + 1) * kUnit});
        break;
      default:
        break;  // Postpaid without a limit.
    }
  }
  token_hash_ = sha256_hex(fmt::format("join-{}", next_));
  out.emplace_back(CreateJoinToken{next_id("jtk"), "rack", token_hash_, 0});
  for (std::string_view model : kModels) {
    for (std::string_view region : kRegions) {
      for (PriceClass c : {PriceClass::kOnDemand, PriceClass::kSpot, PriceClass::kReserved}) {
        out.emplace_back(SetPrice{
            {.key = {.model = std::string(model), .region = std::string(region), .price_class = c},
             .gpu_hour_micros = static_cast<int64_t>(draw(4'000) + 500) * 1'000}});
      }
    }
  }
  const int nodes = 2 + static_cast<int>(draw(3));
  for (int n = 0; n < nodes; ++n) {
    Agent agent{.node_id = next_id("nod"),
                .name = fmt::format("gpu-{}", n),
                .model = std::string(kModels[draw(2)]),
                .region = std::string(kRegions[draw(2)]),
                .gpus = 2 << draw(3)};
    out.emplace_back(join(agent, token_hash_));
    agents_.push_back(std::move(agent));
  }
  pool_id_ = next_id("pol");
  out.emplace_back(CreatePool{burst_pool(pool_id_, 30'000)});
  return step;
}

JoinNode ChaosWorld::join(const Agent& agent, const std::string& token_hash) {
  JoinNode join{.node_id = agent.node_id,
                .join_token_hash = token_hash,
                .credential_hash = sha256_hex(fmt::format("{}#{}", agent.node_id, agent.restarts)),
                .name = agent.name,
                .region = agent.region,
                .cpu_milli = 64'000,
                .memory_mib = 512'000,
                .backend = "simulated",
                .runtime = "container"};
  for (int i = 0; i < agent.gpus; ++i) {
    join.gpus.push_back(GpuReport{
        .index = i, .uuid = fmt::format("{}-gpu-{}", agent.name, i), .model = agent.model});
  }
  return join;
}

ChaosStep ChaosWorld::next(const State& state) {
  now_ms_ += static_cast<TimeMs>(draw(6'000)) + 500;
  ChaosStep step;
  switch (draw(20)) {
    case 0:
    case 1:
    case 2:
      step = launch();
      break;
    case 3:
      step = stop(state);
      break;
    case 4:
      step = money();
      break;
    case 5:
      step = price();
      break;
    case 6:
      step = spot_rule();
      break;
    case 7:
      step = node_fails();
      break;
    case 8:
      step = node_returns(state);
      break;
    case 9:
      step = node_admin();
      break;
    case 10:
      step = limits(state);
      break;
    case 11:
      step = idle_policy();
      break;
    case 12:
      step = chance(20) ? month_end() : ChaosStep{.action = "tick", .commands = {Tick{}}};
      break;
    case 13:
      step = autoscale(state);
      break;
    default:
      step = ChaosStep{.action = "tick", .commands = {Tick{}}};
      break;
  }
  // The agents report on their own clocks: most steps carry a few heartbeats.
  std::vector<Command> beats;
  heartbeats(state, now_ms_ - 2'000, beats);
  step.commands.insert(step.commands.begin(), std::make_move_iterator(beats.begin()),
                       std::make_move_iterator(beats.end()));
  return step;
}

void ChaosWorld::heartbeats(const State& state, TimeMs due_ms, std::vector<Command>& out) {
  for (Agent& agent : agents_) {
    const Node* node = state.node(agent.node_id);
    if (!agent.up || node == nullptr || node->last_heartbeat_ms > due_ms) continue;
    out.emplace_back(heartbeat(state, agent));
  }
}

NodeHeartbeat ChaosWorld::heartbeat(const State& state, Agent& agent) {
  NodeHeartbeat beat{.node_id = agent.node_id};
  for (int i = 0; i < agent.gpus; ++i) {
    agent.energy_mj += static_cast<int64_t>(draw(2'000'000));
    GpuHeartbeat gpu{.index = i,
                     .telemetry = {.utilization_pct = chance(50) ? 0 : static_cast<int>(draw(101)),
                                   .power_mw = static_cast<int64_t>(draw(700'000)),
                                   .energy_mj = agent.energy_mj}};
    if (chance(1)) gpu.xids.push_back(kCriticalXid);
    if (chance(1)) gpu.lost = true;
    beat.gpus.push_back(std::move(gpu));
  }
  for (const Instance* i : placed_on(state, agent.node_id)) {
    WorkloadReport report{.instance_id = i->id};
    if (i->stop_requested) {
      report.state = WorkloadReportState::kExited;
      report.signal = 15;
    } else if (i->state != InstanceState::kRunning) {
      report.state = chance(5)    ? WorkloadReportState::kFailedToStart
                     : chance(20) ? WorkloadReportState::kStarting
                                  : WorkloadReportState::kRunning;
    } else if (!i->spec.interactive && chance(10)) {
      report.state = WorkloadReportState::kExited;
      report.exit_code = chance(80) ? 0 : 1;
    }
    beat.workloads.push_back(std::move(report));
  }
  // An agent that restarted may report work the controller no longer places on it.
  if (chance(3) && !state.instances.empty()) {
    auto it = state.instances.begin();
    std::advance(it, static_cast<long>(draw(state.instances.size())));
    beat.workloads.push_back(WorkloadReport{.instance_id = it->first});
  }
  return beat;
}

ChaosStep ChaosWorld::launch() {
  const std::string tenant_id = tenant();
  InstanceSpec spec{.cpu_milli = 1'000, .memory_mib = 1'024, .command = {"train"}};
  if (chance(30)) {
    spec.gpu_milli = static_cast<int>(draw(900)) + 100;
  } else {
    spec.gpus = 1 << draw(3);
  }
  if (chance(30)) spec.gpu_models = {std::string(kModels[draw(2)])};
  if (chance(15)) spec.region = std::string(kRegions[draw(2)]);
  const uint64_t kind = draw(10);
  spec.price_class = kind < 3   ? PriceClass::kSpot
                     : kind < 4 ? PriceClass::kReserved
                                : PriceClass::kOnDemand;
  spec.interactive = chance(40);
  spec.requeue = chance(50);
  if (chance(20)) spec.max_run_s = static_cast<int64_t>(draw(300)) + 30;
  if (chance(20)) spec.max_price_micros = static_cast<int64_t>(draw(4'000) + 500) * 1'000;
  if (chance(10)) spec.idle = IdlePolicy{.threshold_pct = 20, .window_s = 60};
  CreateInstance create{.id = next_id("ins"),
                        .tenant_id = tenant_id,
                        .project_id = project_of_[tenant_id],
                        .user_id = "usr_chaos",
                        .spec = spec};
  if (chance(15) && spec.gpus > 0) {
    create.spec.nodes = 2;
    create.spec.gpus = 1;
    create.member_ids = {next_id("ins")};
  }
  ChaosStep step{.action = create.spec.nodes > 1 ? "launch_gang" : "launch"};
  step.commands.emplace_back(std::move(create));
  return step;
}

ChaosStep ChaosWorld::stop(const State& state) {
  ChaosStep step{.action = "stop"};
  std::vector<std::string> live;
  for (const auto& [id, i] : state.instances) {
    if (!is_final(i.state)) live.push_back(id);
  }
  if (!live.empty()) step.commands.emplace_back(StopInstance{live[draw(live.size())]});
  return step;
}

ChaosStep ChaosWorld::money() {
  const std::string tenant_id = tenant();
  ChaosStep step{.action = "money"};
  switch (draw(3)) {
    case 0:
      step.commands.emplace_back(Topup{.id = next_id("pay"),
                                       .tenant_id = tenant_id,
                                       .amount_micros = static_cast<int64_t>(draw(50) + 1) * kUnit,
                                       .credit = chance(30),
                                       .expires_at_ms = chance(50) ? 0 : now_ms_ + 60'000});
      break;
    case 1:
      step.commands.emplace_back(
          SetBilling{tenant_id, chance(50) ? BillingMode::kPrepaid : BillingMode::kPostpaid,
                     chance(50) ? 0 : static_cast<int64_t>(draw(100) + 1) * kUnit});
      break;
    default:
      step.commands.emplace_back(
          SetBudget{.id = next_id("bud"),
                    .tenant_id = tenant_id,
                    .amount_micros = static_cast<int64_t>(draw(30) + 1) * kUnit,
                    .enforcement = static_cast<Enforcement>(draw(3))});
      break;
  }
  return step;
}

ChaosStep ChaosWorld::price() {
  ChaosStep step{.action = "price"};
  step.commands.emplace_back(
      SetPrice{{.key = {.model = std::string(kModels[draw(2)]),
                        .region = std::string(kRegions[draw(2)]),
                        .price_class = static_cast<PriceClass>(draw(3))},
                .gpu_hour_micros = static_cast<int64_t>(draw(6'000) + 200) * 1'000}});
  return step;
}

ChaosStep ChaosWorld::spot_rule() {
  const std::string model(kModels[draw(2)]);
  const std::string region(kRegions[draw(2)]);
  ChaosStep step{.action = "spot_rule"};
  if (chance(25)) {
    step.commands.emplace_back(DeleteSpotRule{model, region});
  } else {
    const int64_t low = static_cast<int64_t>(draw(1'000) + 100) * 1'000;
    step.commands.emplace_back(
        SetSpotRule{SpotRule{.model = model,
                             .region = region,
                             .curve = {{.utilisation_pct = 0, .gpu_hour_micros = low},
                                       {.utilisation_pct = 100, .gpu_hour_micros = low * 4}},
                             .interval_ms = 60'000}});
  }
  return step;
}

ChaosStep ChaosWorld::node_fails() {
  // The agent goes quiet; the timer finds the node lost once its timeout passes.
  Agent& agent = agents_[draw(agents_.size())];
  agent.up = false;
  return ChaosStep{.action = "node_fails", .commands = {Tick{}}};
}

ChaosStep ChaosWorld::node_returns(const State& state) {
  // An agent restarts: it joins again with a new credential and reports what it still runs.
  Agent& agent = agents_[draw(agents_.size())];
  agent.up = true;
  ++agent.restarts;
  ChaosStep step{.action = "agent_restarts"};
  step.commands.emplace_back(join(agent, token_hash_));
  step.commands.emplace_back(heartbeat(state, agent));
  return step;
}

ChaosStep ChaosWorld::node_admin() {
  const Agent& agent = agents_[draw(agents_.size())];
  const NodeAdmin admin = chance(50)   ? NodeAdmin::kNone
                          : chance(50) ? NodeAdmin::kCordoned
                                       : NodeAdmin::kDraining;
  return ChaosStep{.action = "node_admin", .commands = {SetNodeAdmin{agent.node_id, admin}}};
}

ChaosStep ChaosWorld::limits(const State& state) {
  const std::string tenant_id = tenant();
  ChaosStep step{.action = "limits"};
  if (chance(50)) {
    step.commands.emplace_back(SetQuota{.id = next_id("quo"),
                                        .tenant_id = tenant_id,
                                        .project_id = project_of_[tenant_id],
                                        .gpu_model = std::string(kModels[draw(2)]),
                                        .gpu_milli = static_cast<int64_t>(draw(8)) * 1'000});
  } else if (chance(50) || state.reservations.empty()) {
    step.commands.emplace_back(CreateReservation{.id = next_id("rsv"),
                                                 .tenant_id = tenant_id,
                                                 .gpu_model = std::string(kModels[draw(2)]),
                                                 .gpus = static_cast<int>(draw(4)) + 1,
                                                 .starts_at_ms = now_ms_,
                                                 .ends_at_ms = now_ms_ + 3'600'000});
  } else {
    auto it = state.reservations.begin();
    std::advance(it, static_cast<long>(draw(state.reservations.size())));
    step.commands.emplace_back(CancelReservation{it->first});
  }
  return step;
}

ChaosStep ChaosWorld::idle_policy() {
  const std::string tenant_id = tenant();
  std::optional<IdlePolicy> policy;
  if (chance(70)) {
    policy = IdlePolicy{.threshold_pct = static_cast<int>(draw(30)) + 5,
                        .window_s = 60 + static_cast<int64_t>(draw(120)),
                        .action = chance(50) ? IdleAction::kStop : IdleAction::kNotify};
  }
  return ChaosStep{.action = "idle_policy",
                   .commands = {SetProjectIdle{project_of_[tenant_id], policy}}};
}

ChaosStep ChaosWorld::month_end() {
  // The books close: every tenant's usage so far is posted (each seed's run crosses the turn of a
  // month: see chaos.cc).
  return ChaosStep{.action = "month_end", .commands = {Tick{.post_all = true}}};
}

ChaosStep ChaosWorld::autoscale(const State& state) {
  ChaosStep step{.action = "autoscale"};
  for (const ScaleDecision& d : plan_scaling(state, now_ms_, {})) {
    switch (d.kind) {
      case ScaleDecision::Kind::kLaunch: {
        ScaleUpPool up{.pool_id = d.pool_id, .reason = d.reason};
        for (int i = 0; i < d.count; ++i) {
          const std::string id = next_id("pnd");
          const std::string token = sha256_hex(id);
          up.launches.push_back(PoolLaunch{.pool_node_id = id,
                                           .name = "burst-" + id.substr(id.size() - 6),
                                           .join_token_id = next_id("jtk"),
                                           .token_hash = token});
          pool_tokens_[id] = token;
        }
        std::vector<PoolLaunch> launches = up.launches;
        step.commands.emplace_back(std::move(up));
        for (const PoolLaunch& launch : launches) {
          step.commands.emplace_back(
              RecordPoolNode{.id = launch.pool_node_id, .provider_ref = launch.name});
          if (chance(20)) continue;  // This one never boots: its timeout finds it.
          Agent agent{.node_id = next_id("nod"),
                      .name = launch.name,
                      .model = "H100-80GB",
                      .region = "eu",
                      .gpus = 2};
          step.commands.emplace_back(join(agent, launch.token_hash));
          agents_.push_back(std::move(agent));
        }
        break;
      }
      case ScaleDecision::Kind::kBootTimeout:
        step.commands.emplace_back(RecordPoolNode{
            .id = d.pool_node_id, .outcome = PoolNodeOutcome::kBootTimedOut, .detail = d.reason});
        break;
      case ScaleDecision::Kind::kRetire:
        step.commands.emplace_back(RetirePoolNode{.id = d.pool_node_id, .reason = d.reason});
        step.commands.emplace_back(
            RecordPoolNode{.id = d.pool_node_id, .outcome = PoolNodeOutcome::kDeleted});
        break;
      case ScaleDecision::Kind::kDelete:
        step.commands.emplace_back(
            RecordPoolNode{.id = d.pool_node_id, .outcome = PoolNodeOutcome::kDeleted});
        break;
    }
  }
  return step;
}

}  // namespace allot::sim
