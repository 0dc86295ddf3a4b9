// Host uids for containers: each container runs in a user namespace of its own (podman's
// --userns=auto), mapped onto a range no other container holds at the time, so that no two
// instances share a host uid, root in an image is an unprivileged uid on the node, and
// per-user limits (processes, files) count each instance alone. podman takes the ranges from the
// subordinate ids of the user "containers", which this sets up.
#pragma once

#include <string>

#include "common/error.h"

namespace allot::agent {

// The range given to containers when the node has none: the upper half of the 32-bit ids, far
// from any real user's.
inline constexpr std::string_view kContainersIdRange = "containers:2147483647:2147483648";

// Makes sure `subuid` and `subgid` (/etc/subuid, /etc/subgid) give the user "containers" a range,
// adding kContainersIdRange to a file that gives it none. kUnavailable when a file cannot be
// written.
[[nodiscard]] Status ensure_container_id_ranges(const std::string& subuid = "/etc/subuid",
                                                const std::string& subgid = "/etc/subgid");

}  // namespace allot::agent
