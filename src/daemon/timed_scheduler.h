// A Scheduler that times each placement decision of another into the metrics' histogram.
#pragma once

#include <chrono>

#include "api/metrics.h"
#include "core/kernel/scheduler.h"

namespace allot {

class TimedScheduler final : public Scheduler {
 public:
  TimedScheduler(const Scheduler& inner, Metrics& metrics) : inner_(inner), metrics_(metrics) {}

  bool queue_before(const QueuePosition& a, const QueuePosition& b) const override {
    return inner_.queue_before(a, b);
  }

  std::optional<Placement> place(const Draft& draft, const Instance& instance,
                                 const NodeFilter& only, std::string& why) const override {
    const auto start = std::chrono::steady_clock::now();
    auto placement = inner_.place(draft, instance, only, why);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    metrics_.record_schedule(took.count());
    return placement;
  }

 private:
  const Scheduler& inner_;
  Metrics& metrics_;
};

}  // namespace allot
