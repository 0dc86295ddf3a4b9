// The part of allotd that leads: the state loaded from the store into the core, the service that
// sequences commands, the API, and the timers (ticks, the autoscaler, webhooks). A single allotd
// builds it at start; a replica builds it once it holds the lease, fencing every write with it.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "api/app.h"
#include "daemon/autoscaler.h"
#include "daemon/config.h"
#include "daemon/service_controller.h"
#include "daemon/timed_scheduler.h"
#include "daemon/webhook.h"
#include "sched/core_scheduler.h"

namespace allot {

// Opens the store the config names: SQLite in the data dir, or PostgreSQL.
[[nodiscard]] Result<std::unique_ptr<Store>> open_configured_store(const DaemonConfig& config);

class Leader {
 public:
  // Opens the store (fenced with `fence` when given), loads and checks the state, makes the first
  // operator key when there is none yet, and builds the API, which keeps time by `clock`.
  // `version` is allotd's.
  [[nodiscard]] static Result<std::unique_ptr<Leader>> open(const DaemonConfig& config,
                                                            Metrics& metrics, const Clock& clock,
                                                            std::optional<Fence> fence,
                                                            const std::string& version);
  // Only open() makes a usable one.
  Leader(const DaemonConfig& config, Metrics& metrics, const Clock& clock,
         std::unique_ptr<sched::Policy> policy);
  Leader(const Leader&) = delete;
  Leader& operator=(const Leader&) = delete;
  // Stops the timers, answers what is queued and stops the service.
  ~Leader();

  // The first operator key, made by this start (shown once), if one was.
  const std::optional<std::string>& first_key() const { return first_key_; }
  App& app() { return *app_; }
  Service& service() { return *service_; }
  // Starts the ticks, the autoscaler and webhooks. `url` is where this allotd listens, for the
  // agents the local pool provider starts.
  void start_timers(const std::string& url);
  // Answers parked long polls now: the first step of a stop.
  void release_parked() { service_->release_parked(); }

 private:
  const DaemonConfig& config_;
  Metrics& metrics_;
  const Clock& clock_;
  RandomIdSource ids_{clock_};
  sched::PolicyScheduler scheduler_;
  TimedScheduler timed_{scheduler_, metrics_};
  std::unique_ptr<Store> store_;
  std::unique_ptr<Store> outbox_;  // The webhook sender's own connection.
  std::unique_ptr<Core> core_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<App> app_;
  std::optional<std::string> first_key_;
  std::unique_ptr<WebhookSender> webhooks_;
  std::unique_ptr<Autoscaler> autoscaler_;
  std::unique_ptr<ServiceController> services_;
  std::atomic<bool> stopping_{false};
  std::thread ticker_;
};

}  // namespace allot
