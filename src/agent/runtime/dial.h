// Connections from the agent to a port of a workload, for the node's tunnel (agent/tunnel.h): on
// the host's loopback for the process runtime, inside the container's own network namespace for
// containers (so that a port the workload keeps to its loopback answers too, and no firewall
// rule of the tenant walls has to let the node in).
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>

#include "common/error.h"

namespace allot::agent {

// Opens a TCP connection to `port` of a workload and returns its descriptor. Safe from any thread:
// it touches no runtime's state. kNotFound when the workload is not running here; kBadGateway
// when nothing answers on the port.
using PortDialer = std::function<Result<int>(const std::string& instance_id, int port)>;

// 127.0.0.1:port of the host.
[[nodiscard]] Result<int> dial_loopback(int port);
// address:port of the host, for an IPv4 `address` (a process-runtime node's workload address).
[[nodiscard]] Result<int> dial_address(const std::string& address, int port);
// 127.0.0.1:port in the network namespace of process `pid`.
[[nodiscard]] Result<int> dial_in_namespace(pid_t pid, int port);
// The process id of the container of `instance_id` (container_runtime.h's name for it), from
// `podman inspect`; kNotFound when it does not run.
[[nodiscard]] Result<pid_t> container_pid(const std::string& podman,
                                          const std::string& instance_id);

}  // namespace allot::agent
