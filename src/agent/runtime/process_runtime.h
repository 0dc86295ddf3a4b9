// Internal: open_process_runtime with the cgroup hierarchy chosen by the caller, so that tests can
// check the limits against a directory of their own on hosts that do not delegate cgroups.
#pragma once

#include <memory>
#include <string>

#include "agent/runtime/cgroup.h"
#include "agent/runtime/runtime.h"

namespace allot::agent {

[[nodiscard]] Result<std::unique_ptr<Runtime>> open_process_runtime_with(
    const std::string& state_dir, const Clock& clock, CgroupHost cgroups,
    int64_t orphan_timeout_ms = kDefaultOrphanTimeoutMs, std::string address = "127.0.0.1");

}  // namespace allot::agent
