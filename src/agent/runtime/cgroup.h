// CPU and memory limits through cgroup v2, where the host delegates them. Limits are a best
// effort: on a host without cgroup v2, or one that does not let the agent enable the cpu and
// memory controllers, workloads run without limits and their status says so.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/error.h"

namespace allot::agent {

class CgroupHost {
 public:
  // The hierarchy is normally mounted at /sys/fs/cgroup. Limits are usable when `root` has
  // cgroup.controllers, `root`/allot.slice exists or can be created, and the cpu and memory
  // controllers are (or can be) enabled in the subtree_control of `root` and of allot.slice.
  static CgroupHost probe(const std::string& root);

  // Creates allot.slice/<instance_id> with cpu.max and memory.max set (0: that limit is not set)
  // and returns its directory, which the workload joins before exec. On failure nothing is left
  // behind and the error says why, for the workload's status message.
  [[nodiscard]] Result<std::string> create(std::string_view instance_id, int64_t cpu_milli,
                                           int64_t memory_mib) const;

  // Removes a workload's cgroup once it has ended; an error (a process still in it) is ignored.
  static void remove(const std::string& dir);

 private:
  std::string slice_dir_;    // Empty: limits are unavailable.
  std::string unavailable_;  // Why, when they are.
};

}  // namespace allot::agent
