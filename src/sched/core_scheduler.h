// The controller's scheduler: the core's Scheduler interface served by a policy of the framework,
// so that the controller places work with the very code that `allot sim replay` measures.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "core/kernel/scheduler.h"
#include "sched/sched.h"

namespace allot::sched {

class PolicyScheduler final : public allot::Scheduler {
 public:
  explicit PolicyScheduler(std::unique_ptr<Policy> policy) : policy_(std::move(policy)) {}

  std::optional<Placement> place(const Draft& draft, const Instance& instance,
                                 const NodeFilter& only, std::string& why) const override;
  // The policy's queue-sort plugin.
  bool queue_before(const QueuePosition& a, const QueuePosition& b) const override;

  std::string_view policy_name() const { return policy_->name(); }

 private:
  std::unique_ptr<Policy> policy_;
};

// The scheduler's view of one node of the core: what it has and what is free.
NodeView view_of(const Node& node);
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
