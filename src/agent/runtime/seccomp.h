// The seccomp profile containers run under: podman's default, with no way to make a user
// namespace. Inside one, a workload would be root with every capability over what it mounts
// there: a wide door into the kernel that training and serving never need.
#pragma once

#include <string>

#include "common/error.h"

namespace allot::agent {

inline constexpr std::string_view kDefaultSeccompProfile = "/usr/share/containers/seccomp.json";

// Writes `dir`/seccomp.json: the profile at `base_path` with clone and unshare allowed only
// without CLONE_NEWUSER, and clone3 (whose flags a filter cannot read) answered ENOSYS, so that
// C libraries fall back to clone. Returns its path. kUnavailable when the base profile cannot be
// read or is not of the form podman's is (an allow list with defaultAction SCMP_ACT_ERRNO).
[[nodiscard]] Result<std::string> write_seccomp_profile(
    const std::string& dir, const std::string& base_path = std::string(kDefaultSeccompProfile));

}  // namespace allot::agent
