// Every simulated node's long poll of /v1/agent/wait, kept open as a real agent keeps its own: one
// connection per node, each from its own loopback address (as nodes have their own addresses), all
// on one asio thread. When a wait answers with a newer generation, the node is handed to `woken`
// so that it heartbeats at once for its new work.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fleet {

struct WaitingNode {
  std::string credential;
  std::atomic<int64_t>* generation;  // The newest its heartbeats have seen.
  size_t index;                      // Handed to `woken`.
};

class Waits {
 public:
  // `port`: allotd's, on loopback.
  Waits(std::vector<WaitingNode> nodes, uint16_t port, std::function<void(size_t)> woken);
  ~Waits();
  Waits(const Waits&) = delete;
  Waits& operator=(const Waits&) = delete;

  long answered() const;  // Waits answered so far.
  long failed() const;    // Connections or answers that went wrong.

  struct Impl;  // The connections and their thread (fleet_waits.cc).

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace fleet
