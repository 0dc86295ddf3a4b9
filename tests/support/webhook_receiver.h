// A real HTTP endpoint for webhook tests: it listens on a free loopback port, records every
// request with its headers, and answers with scripted statuses.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace allot::testing {

class WebhookReceiver {
 public:
  struct Request {
    std::string method;
    std::string target;
    std::map<std::string, std::string> headers;  // Names in lower case.
    std::string body;
    int answered = 0;  // The status it was answered with.
  };

  WebhookReceiver();
  ~WebhookReceiver();
  WebhookReceiver(const WebhookReceiver&) = delete;
  WebhookReceiver& operator=(const WebhookReceiver&) = delete;

  // "http://127.0.0.1:PORT" + path.
  std::string url(const std::string& path) const;
  // The next requests get these statuses in turn; after them, the default.
  void script(std::deque<int> statuses);
  void set_default(int status);
  std::vector<Request> requests() const;

 private:
  void serve();
  void handle(int connection);

  int listener_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;
  std::deque<int> script_;         // Guarded by mutex_.
  int default_status_ = 200;       // Guarded by mutex_.
  std::vector<Request> requests_;  // Guarded by mutex_.
  std::thread thread_;
};

}  // namespace allot::testing
