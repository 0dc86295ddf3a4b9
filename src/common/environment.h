// The environment a tenant may give its workload. Checked by allotd when a launch, a template or
// a service names variables, and again by the agent before it writes them for a container.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/error.h"

namespace allot {

// True for the variables Allot sets itself and a launch may not: every ALLOT_ name, and those
// that choose the GPUs a workload sees (CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES).
bool reserved_env_name(std::string_view name);

// kInvalidArgument naming the first bad variable: a name that is not [A-Za-z_][A-Za-z0-9_]* of
// at most 256 bytes, or a value with a NUL byte, a newline or a carriage return; kLimitExceeded
// past 256 variables or 64 KiB of values in all. Empty is fine. What an agent checks, since the
// controller adds reserved variables of its own (a gang's).
[[nodiscard]] Status check_environment(const std::map<std::string, std::string>& env);

// check_environment, and kInvalidArgument for a reserved name: what a tenant may give.
[[nodiscard]] Status check_tenant_environment(const std::map<std::string, std::string>& env);

}  // namespace allot
