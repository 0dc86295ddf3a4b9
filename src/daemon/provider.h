// Node providers: what makes and removes a pool's machines. The autoscaler knows only this
// interface and finds a pool's provider by its name, so a cloud API provider is one more class
// registered in main.cc.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/error.h"
#include "core/model/pool.h"

namespace allot {

struct ProviderCall {
  Pool pool;
  PoolNode node;
  std::string join_token;  // For create: the node joins with it (and its name) on its own.
  std::string server_url;  // The controller the node's agent talks to.
};

class NodeProvider {
 public:
  virtual ~NodeProvider() = default;
  // Makes the node's machine; returns what the provider calls it. May block (it runs on a
  // worker thread of its own).
  [[nodiscard]] virtual Result<std::string> create(const ProviderCall& call) = 0;
  // Removes the machine. Removing one that is already gone succeeds.
  [[nodiscard]] virtual Status remove(const ProviderCall& call) = 0;
};

using Providers = std::map<std::string, std::shared_ptr<NodeProvider>>;

// Runs the pool's create and delete commands with `/bin/sh -c`, each under `timeout_ms`. They get
// ALLOT_SERVER, ALLOT_JOIN_TOKEN (create), ALLOT_NODE_NAME, ALLOT_POOL, ALLOT_GPU_MODEL,
// ALLOT_REGION, ALLOT_GPUS, ALLOT_CPU_MILLI, ALLOT_MEMORY_MIB and ALLOT_PROVIDER_REF (delete).
// Create succeeds when it exits 0 and prints nothing or one line naming the machine
// ([A-Za-z0-9._:/@-], at most 200 bytes); anything else is a failure with the reason.
class CommandProvider final : public NodeProvider {
 public:
  explicit CommandProvider(int64_t timeout_ms) : timeout_ms_(timeout_ms) {}
  Result<std::string> create(const ProviderCall& call) override;
  Status remove(const ProviderCall& call) override;

 private:
  int64_t timeout_ms_;
};

// Starts a real allot-agent with simulated GPUs of the pool's model per node, on this machine,
// with its state under `root`/<node name>. Its agents stop when allotd does. For tests and demos.
class LocalProvider final : public NodeProvider {
 public:
  LocalProvider(std::string agent_path, std::string root)
      : agent_path_(std::move(agent_path)), root_(std::move(root)) {}
  ~LocalProvider() override;
  LocalProvider(const LocalProvider&) = delete;
  LocalProvider& operator=(const LocalProvider&) = delete;

  Result<std::string> create(const ProviderCall& call) override;
  Status remove(const ProviderCall& call) override;

 private:
  std::string agent_path_;
  std::string root_;
  std::mutex mutex_;
  std::map<std::string, pid_t> agents_;  // By node name.
};

}  // namespace allot
