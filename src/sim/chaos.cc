#include "sim/chaos.h"

#include <chrono>
#include <memory>

#include <fmt/format.h>

#include "core/core.h"
#include "core/kernel/state_diff.h"
#include "sched/core_scheduler.h"
#include "sim/chaos_world.h"
#include "store/store.h"

namespace allot::sim {
namespace {

// Five minutes before a month turns, so that every run crosses a month's end.
const TimeMs kStartMs = next_month_start(1'800'000'000'000) - 300'000;

enum class Fault { kNone, kCommitFailed, kCrash };

CoreOptions chaos_core_options() { return CoreOptions{.check_invariants = InvariantCheck::kCount}; }

// One seed's run: its world, its core and its store.
class ChaosSeed {
 public:
  ChaosSeed(uint64_t seed, const ChaosOptions& options, const Scheduler& scheduler,
            ChaosReport& report)
      : seed_(seed),
        options_(options),
        scheduler_(scheduler),
        report_(report),
        rng_(seed ^ 0x9e3779b97f4a7c15ULL),
        world_(seed, kStartMs),
        core_(std::make_unique<Core>(chaos_core_options(), &scheduler)) {}

  Status run() {
    auto store = open_sqlite_store(":memory:");
    if (!store) return std::unexpected(store.error());
    store_ = std::move(*store);
    if (!step(0, world_.setup(), Fault::kNone)) return {};
    for (int i = 1; i <= options_.steps; ++i) {
      ChaosStep next = world_.next(core_->state());
      if (next.commands.empty()) next.commands.emplace_back(Tick{});
      if (!step(i, next, draw_fault())) return {};
    }
    // The end: what the store holds is what the controller holds.
    compare_with_store(options_.steps, "end");
    tally(core_->state());
    return {};
  }

 private:
  Fault draw_fault() {
    const uint64_t roll = rng_() % 200;
    const auto percent = static_cast<uint64_t>(options_.fault_percent);
    if (roll < percent) return Fault::kCommitFailed;
    if (roll < 2 * percent) return Fault::kCrash;
    return Fault::kNone;
  }

  void tally(const State& state) {
    for (const auto& [id, i] : state.instances)
      ++report_.instances[std::string(instance_state_name(i.state))];
    for (const auto& [id, node] : state.nodes) report_.nodes_lost += node.lost ? 1 : 0;
    report_.transfers += static_cast<int64_t>(state.ledger.transfers().size());
    report_.events += state.last_event_seq;
  }

  // Runs one step as one group commit; false once a violation ends the seed.
  bool step(int index, const ChaosStep& step, Fault fault) {
    ++report_.steps;
    action_ = step.action;
    const TimeMs now_ms = world_.now_ms();
    if (now_ms < last_ms_) violation(index, "time", fmt::format("{} after {}", now_ms, last_ms_));
    last_ms_ = now_ms;
    if (index == options_.corrupt_gpu_at_step) corrupt_a_gpu();
    const size_t known = core_->violations().size();
    const int64_t checks = core_->checks();
    std::unique_ptr<State> before;
    if (fault == Fault::kCommitFailed) before = std::make_unique<State>(core_->state());
    Batch batch;
    for (const Command& command : step.commands) {
      ++report_.commands;
      auto rows = core_->apply(command, now_ms);
      if (!rows) {
        ++report_.refused;
        continue;
      }
      batch.rows.insert(batch.rows.end(), rows->begin(), rows->end());
    }
    report_.checks += core_->checks() - checks;
    const auto& found = core_->violations();
    for (size_t i = known; i < found.size(); ++i) {
      violation(index, found[i].invariant, found[i].detail);
    }
    switch (fault) {
      case Fault::kNone:
        if (auto ok = store_->commit(batch); !ok) {
          violation(index, "store", "a step's changes were refused: " + ok.error().message);
        }
        break;
      case Fault::kCommitFailed:
        // Nothing of the transaction is written; the controller takes its state from the store.
        ++report_.commit_failed;
        reload(index, now_ms);
        if (auto difference = kernel::first_difference(*before, core_->state())) {
          violation(index, "reload_after_failed_commit", *difference);
        }
        break;
      case Fault::kCrash:
        ++report_.crashes;
        if (auto ok = store_->commit(batch); !ok) {
          violation(index, "store", "a step's changes were refused: " + ok.error().message);
          break;
        }
        compare_with_store(index, "crash");
        reload(index, now_ms);
        break;
    }
    return !stopped_;
  }

  // A new core from what the store holds, as a controller starting over.
  std::unique_ptr<Core> load(int index) {
    auto rows = store_->load();
    auto ledger = store_->load_ledger();
    if (!rows || !ledger) {
      violation(index, "store", "the store cannot be read back");
      return nullptr;
    }
    auto core = std::make_unique<Core>(chaos_core_options(), &scheduler_);
    core->restore(*rows);
    if (auto ok = core->restore_ledger(std::move(*ledger)); !ok) {
      violation(index, "ledger_sums", ok.error().message);
      return nullptr;
    }
    for (const kernel::Violation& v : kernel::check_state(core->state())) {
      violation(index, v.invariant, "after loading: " + v.detail);
    }
    return core;
  }

  void reload(int index, TimeMs now_ms) {
    std::unique_ptr<Core> core = load(index);
    if (core == nullptr) return;
    core->resume(now_ms);
    core_ = std::move(core);
  }

  void compare_with_store(int index, std::string_view when) {
    std::unique_ptr<Core> loaded = load(index);
    if (loaded == nullptr) return;
    if (auto difference = kernel::first_difference(core_->state(), loaded->state())) {
      violation(index, "reload", fmt::format("at the {}: {}", when, *difference));
    }
  }

  void corrupt_a_gpu() {
    for (const auto& [id, node] : core_->state().nodes) {
      if (node.gpus.empty()) continue;
      Node broken = node;
      broken.gpus.front().used_milli += 250;
      core_->restore(std::vector<Row>{broken});
      return;
    }
  }

  void violation(int index, std::string invariant, std::string detail) {
    report_.violations.push_back(ChaosViolation{.seed = seed_,
                                                .step = index,
                                                .action = action_,
                                                .invariant = std::move(invariant),
                                                .detail = std::move(detail)});
    stopped_ = true;
  }

  uint64_t seed_;
  const ChaosOptions& options_;
  const Scheduler& scheduler_;
  ChaosReport& report_;
  std::mt19937_64 rng_;
  ChaosWorld world_;
  std::unique_ptr<Core> core_;
  std::unique_ptr<Store> store_;
  std::string action_;
  TimeMs last_ms_ = 0;
  bool stopped_ = false;
};

}  // namespace

Result<ChaosReport> run_chaos(const ChaosOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  auto policy = sched::make_policy(sched::kDefaultPolicy);
  if (!policy) return std::unexpected(policy.error());
  const sched::PolicyScheduler scheduler(std::move(*policy));
  ChaosReport report;
  for (uint64_t seed = options.seeds.first; seed <= options.seeds.last; ++seed) {
    ChaosSeed run(seed, options, scheduler, report);
    if (auto ok = run.run(); !ok) return std::unexpected(ok.error());
    ++report.seeds_run;
  }
  report.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

nlohmann::json to_json(const ChaosReport& report) {
  nlohmann::json violations = nlohmann::json::array();
  for (const ChaosViolation& v : report.violations) {
    violations.push_back({{"seed", v.seed},
                          {"step", v.step},
                          {"action", v.action},
                          {"invariant", v.invariant},
                          {"detail", v.detail}});
  }
  return {{"seeds_run", report.seeds_run},
          {"steps", report.steps},
          {"commands", report.commands},
          {"refused", report.refused},
          {"checks", report.checks},
          {"faults", {{"commit_failed", report.commit_failed}, {"crash", report.crashes}}},
          {"reached",
           {{"instances", report.instances},
            {"nodes_lost", report.nodes_lost},
            {"transfers", report.transfers},
            {"events", report.events}}},
          {"violations", violations},
          {"wall_s", report.wall_s}};
}

std::string to_table(const ChaosReport& report) {
  std::string out = fmt::format(
      "seeds run      {}\nsteps          {}\ncommands       {} ({} refused)\ninvariant checks {}\n"
      "faults         {} failed commits, {} crashes\nviolations     {}\nwall           {:.1f} s\n",
      report.seeds_run, report.steps, report.commands, report.refused, report.checks,
      report.commit_failed, report.crashes, report.violations.size(), report.wall_s);
  out += "reached        ";
  for (const auto& [state, count] : report.instances) out += fmt::format("{} {}, ", count, state);
  out += fmt::format("{} nodes lost, {} transfers, {} events\n", report.nodes_lost,
                     report.transfers, report.events);
  for (const ChaosViolation& v : report.violations) {
    out += fmt::format("  seed {} step {} ({}): {}: {}\n", v.seed, v.step, v.action, v.invariant,
                       v.detail);
  }
  return out;
}

}  // namespace allot::sim
