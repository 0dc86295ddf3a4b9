// The controller's scheduler: the core's Scheduler interface served by a policy of the framework,
// so that the controller places work with the very code that `allot sim replay` measures.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/kernel/scheduler.h"
#include "sched/sched.h"

namespace allot::sched {

// It keeps a Placer over the nodes that take work between calls: each call brings the nodes whose
// view changed up to date (a walk that compares, building nothing) and the cycle's state where it
// changed, so a decision costs the nodes changed since the last one, not every node's view built
// again. Its answers are those of place_afresh (below), which the tests hold it to.
class PolicyScheduler final : public allot::Scheduler {
 public:
  explicit PolicyScheduler(std::unique_ptr<Policy> policy);
  ~PolicyScheduler() override;

  std::optional<Placement> place(const Draft& draft, const Instance& instance,
                                 const NodeFilter& only, std::string& why) const override;
  // The policy's queue-sort plugin.
  bool queue_before(const QueuePosition& a, const QueuePosition& b) const override;

  std::string_view policy_name() const { return policy_->name(); }

 private:
  // The Placer's nodes made to match the draft's nodes that take work, in id order.
  Placer& synced(const Draft& draft) const;

  std::unique_ptr<Policy> policy_;
  mutable std::mutex mutex_;  // Guards the Placer: place() is const, and may be called anywhere.
  mutable std::unique_ptr<Placer> placer_;
};

// What PolicyScheduler::place answers, computed from nothing: every node's view built and the
// policy asked over those that `only` lets through.
std::optional<Placement> place_afresh(const Policy& policy, const Draft& draft,
                                      const Instance& instance, const NodeFilter& only,
                                      std::string& why);

// The scheduler's cycle state for placing `instance`: the typical shapes of the state's active
// work and the instance's own request (typical_shapes over them, in id order, read from the
// state's index), the carbon intensities at the placement's time, and the instance's preference
// ranks.
CycleState cycle_for(const Draft& draft, const Instance& instance);

// The scheduler's view of one node of the core: what it has and what is free.
NodeView view_of(const Node& node);
// Whether `view` is what view_of(node) would give.
bool same_view(const Node& node, const NodeView& view);
// The request an instance makes.
Request request_of(const InstanceSpec& spec);

// Each region's grid carbon intensity in force at `at_ms` times the site's PUE, in grams of CO2e
// per kWh of IT energy (CycleState::carbon_g_per_kwh). Sites with no intensity step at or before
// `at_ms` are left out: the carbon plugin treats them as unknown, not as carbon-free.
std::map<std::string, double> carbon_by_region(const Books& books, TimeMs at_ms);

// For a spec that states a preference: each (region, GPU model) it could use, ranked by
// rank_quote (core/admission/quote.h) as if each had room, 0 the best
// (CycleState::preference_rank). Empty for a spec without a preference.
std::map<std::pair<std::string, std::string>, int> preference_ranks(const State& state,
                                                                    const InstanceSpec& spec,
                                                                    TimeMs at_ms);

// The moment a placement in `draft` is made, as far as the scheduler can tell (see
// core_scheduler.cc): the newest node heartbeat or the instance's creation, whichever is later.
TimeMs placement_time(const Draft& draft, const Instance& instance);

}  // namespace allot::sched
