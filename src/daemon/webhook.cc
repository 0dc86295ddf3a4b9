#include "daemon/webhook.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "daemon/webhook_post.h"
#include "store/budget_store.h"

namespace allot {

std::string webhook_signature(std::string_view secret, int64_t timestamp_s, std::string_view body) {
  const std::string message = fmt::format("{}.{}", timestamp_s, body);
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
           reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest.data(),
           &length) == nullptr) {
    std::abort();  // Only an OpenSSL failure to allocate gets here.
  }
  std::string out = "sha256=";
  for (unsigned int i = 0; i < length; ++i) out += fmt::format("{:02x}", digest[i]);
  return out;
}

int64_t retry_delay_ms(const WebhookOptions& options, int64_t failures) {
  int64_t delay = options.retry_base_ms;
  for (int64_t i = 1; i < failures && delay < options.retry_max_ms; ++i) delay *= 2;
  return std::min(delay, options.retry_max_ms);
}

WebhookSender::WebhookSender(std::unique_ptr<Store> store, const Clock& clock,
                             WebhookOptions options)
    : store_(std::move(store)), clock_(clock), options_(std::move(options)) {
  thread_ = std::thread([this] { loop(); });
}

WebhookSender::~WebhookSender() { stop(); }

void WebhookSender::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void WebhookSender::loop() {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, std::chrono::milliseconds(options_.poll_ms),
                     [this] { return stopping_; });
      if (stopping_) return;
    }
    auto due = store_->due_deliveries(clock_.now_ms(), 32);
    if (!due) {
      spdlog::warn("msg=\"cannot read the webhook outbox\" error=\"{}\"", due.error().message);
      continue;
    }
    for (const Delivery& delivery : *due) {
      {
        std::lock_guard lock(mutex_);
        if (stopping_) return;
      }
      deliver(delivery);
    }
  }
}

void WebhookSender::deliver(const Delivery& delivery) {
  const Event& event = delivery.event;
  const std::string body = event_json(event).dump();
  const TimeMs at_ms = clock_.now_ms();
  const int64_t timestamp_s = at_ms / 1000;
  std::string result;
  bool delivered = false;
  auto target = parse_webhook_url(event.webhook_url);
  if (!target) {
    result = target.error().message;
  } else {
    auto status =
        post(*target, body,
             {{"X-Allot-Event", event.kind},
              {"X-Allot-Delivery", fmt::format("dlv_{:016x}", event.seq)},
              {"X-Allot-Timestamp", std::to_string(timestamp_s)},
              {"X-Allot-Signature", webhook_signature(delivery.secret, timestamp_s, body)}},
             options_.allow, options_.timeout_ms);
    if (status) {
      result = std::to_string(*status);
      delivered = *status >= 200 && *status < 300;
    } else {
      result = status.error().message;
    }
  }
  DeliveryStatus next{.state = "pending",
                      .attempts = delivery.status.attempts + 1,
                      .next_attempt_ms = 0,
                      .last_status = result};
  if (delivered) {
    next.state = "delivered";
  } else if (next.attempts >= options_.max_attempts) {
    next.state = "failed";
  } else {
    next.next_attempt_ms = at_ms + retry_delay_ms(options_, next.attempts);
  }
  spdlog::info("msg=\"webhook attempt\" event={} attempt={} result=\"{}\" state={}", event.id(),
               next.attempts, result, next.state);
  auto ok = store_->record_delivery_attempt(
      DeliveryAttempt{.event_seq = event.seq, .at_ms = at_ms, .result = result, .next = next});
  if (!ok) {
    spdlog::warn("msg=\"cannot record a webhook attempt\" error=\"{}\"", ok.error().message);
  }
}

}  // namespace allot
