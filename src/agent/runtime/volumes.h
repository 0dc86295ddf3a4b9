// Where a node keeps the volumes its work mounts: local ones under its volume directory, nfs ones
// under the directory where the operator mounted the region's NFS export. Each volume is the
// directory of its id there, made on first use.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/runtime/runtime.h"
#include "common/error.h"

namespace allot::agent {

struct VolumeDirs {
  std::string local;  // Default: the agent's state directory's "volumes".
  std::string nfs;    // Empty: this node has no NFS export mounted.
};

// The binds for a run item's "volumes" ([{volume_id, name, backend, path, read_only}]), their
// directories made. Sets ALLOT_VOLUME_<NAME> in `env` for each: the path a container sees it at,
// or, with `in_container` false, the directory itself. Fails for a malformed item, an nfs volume
// on a node without an NFS directory, or a directory that cannot be made.
[[nodiscard]] Result<std::vector<VolumeBind>> volume_binds(const nlohmann::json& items,
                                                           const VolumeDirs& dirs,
                                                           bool in_container,
                                                           std::map<std::string, std::string>& env);

// ALLOT_VOLUME_ and the volume's name in capitals, '-' and '.' as '_'.
std::string volume_variable(const std::string& name);

}  // namespace allot::agent
