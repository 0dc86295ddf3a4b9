// Webhook deliveries: how a delivery is signed, when a failed one is tried again, and the sender
// that works through the store's outbox on its own thread and its own store connection.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "common/address_policy.h"
#include "common/clock.h"
#include "store/store.h"

namespace allot {

// "sha256=" + lowercase hex HMAC-SHA256, keyed with `secret`, of "<timestamp_s>.<body>".
std::string webhook_signature(std::string_view secret, int64_t timestamp_s, std::string_view body);

struct WebhookOptions {
  int64_t retry_base_ms = 1'000;   // The wait after the first failure; it doubles after each.
  int64_t retry_max_ms = 300'000;  // The longest wait between attempts.
  int64_t max_attempts = 10;       // After this many failures the delivery is given up.
  int64_t poll_ms = 200;           // How often the outbox is read for due deliveries.
  int64_t timeout_ms = 10'000;     // One attempt, connecting to the answer's status line.
  AddressAllowList allow;          // Internal addresses that deliveries may reach nonetheless.
};

// The wait before the next attempt after `failures` failed ones: base, 2 x base, 4 x base, ...,
// never more than retry_max_ms.
int64_t retry_delay_ms(const WebhookOptions& options, int64_t failures);

// Works through the outbox until stopped. Each attempt's result is recorded before the next is
// made, so a restarted daemon resumes where this one left off (a delivery may then arrive twice;
// receivers tell repeats apart by X-Allot-Delivery).
class WebhookSender {
 public:
  WebhookSender(std::unique_ptr<Store> store, const Clock& clock, WebhookOptions options);
  ~WebhookSender();
  WebhookSender(const WebhookSender&) = delete;
  WebhookSender& operator=(const WebhookSender&) = delete;

  // Stops after the attempt in progress, if any.
  void stop();

 private:
  void loop();
  void deliver(const Delivery& delivery);

  std::unique_ptr<Store> store_;  // Used by the sender's thread only.
  const Clock& clock_;
  WebhookOptions options_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;  // Guarded by mutex_.
  std::thread thread_;
};

}  // namespace allot
