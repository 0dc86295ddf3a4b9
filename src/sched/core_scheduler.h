// The controller's scheduler: the core's Scheduler interface served by a policy of the framework,
// so that the controller places work with the very code that `allot sim replay` measures.
#pragma once

#include <memory>

#include "core/scheduler.h"
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

}  // namespace allot::sched
