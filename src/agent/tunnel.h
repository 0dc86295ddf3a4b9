// The node's end of its tunnel to allotd (api/tunnel_hub.h): a control connection the agent keeps
// open outward, and for each stream allotd asks for on it, a new outward connection spliced to
// the port of the workload asked for. The node takes no inbound connection for any of it.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/runtime/dial.h"
#include "client/stream.h"

namespace allot::agent {

// What the node runs for an exec into one of its workloads (Runtime::exec_argv).
using ExecArgv = std::function<std::vector<std::string>(
    const std::string& instance_id, const std::vector<std::string>& argv, bool tty)>;

class Tunnel {
 public:
  // `server_url` tells where the controller is now ("http://HOST:PORT"): asked again each time
  // the control connection opens, so that the tunnel follows the leader among replicas.
  Tunnel(std::function<std::string()> server_url, PortDialer dialer, ExecArgv exec_argv);
  ~Tunnel();
  Tunnel(const Tunnel&) = delete;
  Tunnel& operator=(const Tunnel&) = delete;

  // Opens the control connection with the node's credential, and keeps it open (reconnecting
  // after a break) until stop().
  void start(const std::string& credential);
  void stop();

  // The workloads that run here now: streams go to these only.
  void set_running(std::set<std::string> instance_ids);

 private:
  boost::asio::awaitable<void> keep_open();
  boost::asio::awaitable<void> serve(net::Stream control);
  boost::asio::awaitable<void> open_stream(std::string line);
  boost::asio::awaitable<void> open_exec(std::string stream, std::string instance,
                                         nlohmann::json exec);
  // Answers allotd's stream request with why the stream cannot be had.
  boost::asio::awaitable<void> refuse_stream(std::string path, std::string why);
  bool runs(const std::string& instance_id);

  std::function<std::string()> server_url_;
  net::Endpoint server_;  // Where the control connection is open: streams go back there.
  PortDialer dialer_;
  ExecArgv exec_argv_;
  std::string authorization_;
  boost::asio::io_context io_{1};
  // For the instances' https ports, whose certificates are not checked (tunnel.cc says why).
  boost::asio::ssl::context tls_{boost::asio::ssl::context::tls_client};
  // Dials block (a container's namespace is entered by a thread): they run here.
  boost::asio::thread_pool dials_{4};
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::set<std::string> running_;  // Guarded by mutex_.
};

}  // namespace allot::agent
