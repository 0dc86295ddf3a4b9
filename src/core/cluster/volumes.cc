#include "core/cluster/volumes.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "common/limits.h"
#include "core/kernel/lookups.h"
#include "core/kernel/validate.h"
#include "core/money/money.h"

namespace allot {
namespace {

// Names go on command lines (`--volume NAME:/data`) and in directory names on nodes.
bool plain_name(const std::string& name) { return is_plain_name(name, limits::kMaxVolumeName); }

// Where a volume may not appear inside an instance: the directories its system and Allot's
// notice live in, where a mount would hide or replace them.
constexpr std::string_view kSystemDirs[] = {"/bin", "/dev",  "/etc", "/lib", "/lib64", "/proc",
                                            "/run", "/sbin", "/sys", "/usr", "/boot"};

bool inside(std::string_view path, std::string_view dir) {
  return path == dir ||
         (path.starts_with(dir) && path.size() > dir.size() && path[dir.size()] == '/');
}

Status check_mount_path(const std::string& path) {
  auto wrong = [&path](std::string_view why) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("volume path '{}' {}", path.size() <= 256 ? path : "…", why));
  };
  if (path.size() < 2 || path.front() != '/' || path.size() > limits::kMaxVolumePath) {
    return wrong(
        fmt::format("must be an absolute path of 2 to {} bytes, not /", limits::kMaxVolumePath));
  }
  if (path.back() == '/' || path.find("//") != std::string::npos) {
    return wrong("must be normalised: no '//' and no trailing '/'");
  }
  size_t start = 1;
  while (start <= path.size()) {
    const size_t end = std::min(path.find('/', start), path.size());
    const std::string_view part(path.data() + start, end - start);
    if (part == "." || part == "..") return wrong("must not hold '.' or '..'");
    start = end + 1;
  }
  for (unsigned char c : path) {
    if (c < 0x20 || c == 0x7f || c == ':' || c == ',') {
      return wrong("must not hold control characters, ':' or ','");
    }
  }
  for (std::string_view dir : kSystemDirs) {
    if (inside(path, dir)) return wrong(fmt::format("must not be inside {}", dir));
  }
  return {};
}

}  // namespace

Result<Rows> apply(const State& state, const CreateVolume& command, TimeMs now_ms,
                   const Placing& /*placing*/) {
  const Volume& v = command.volume;
  if (auto ok = check_id("id", v.id, "vol"); !ok) return std::unexpected(ok.error());
  if (state.tenant(v.tenant_id) == nullptr)
    return std::unexpected(not_found("tenant", v.tenant_id));
  const Project* project = state.project(v.project_id);
  if (project == nullptr || project->deleted_at_ms != 0 || project->tenant_id != v.tenant_id) {
    return std::unexpected(not_found("project", v.project_id));
  }
  if (!plain_name(v.name)) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("a volume's name is 1 to {} lowercase letters, digits, '-', '_' or "
                            "'.', starting with a letter or digit",
                            limits::kMaxVolumeName));
  }
  if (!plain_name(v.region)) {
    return fail(ErrorCode::kInvalidArgument, "region must be a region's name");
  }
  if (v.backend != kVolumeLocal && v.backend != kVolumeNfs) {
    return fail(ErrorCode::kInvalidArgument, "backend must be local or nfs");
  }
  if (v.size_gb < 1 || v.size_gb > limits::kMaxVolumeGb) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("size must be 1 to {} GB", limits::kMaxVolumeGb));
  }
  if (state.volume(v.id) != nullptr) {
    return fail(ErrorCode::kAlreadyExists, "volume " + v.id + " exists");
  }
  if (state.volume_named(v.tenant_id, v.name) != nullptr) {
    return fail(ErrorCode::kAlreadyExists, fmt::format("a volume named '{}' exists", v.name));
  }
  size_t live = 0;
  for (auto it = state.volume_by_name.lower_bound({v.tenant_id, ""});
       it != state.volume_by_name.end() && it->first.first == v.tenant_id; ++it) {
    ++live;
  }
  // Storage is charged from the start: a tenant whose money is used up makes no more of it.
  if (auto why = funds_block(Draft(state), v.tenant_id, now_ms)) {
    return fail(ErrorCode::kInsufficientFunds, *why);
  }
  if (live >= limits::kMaxVolumesPerTenant) {
    return fail(ErrorCode::kLimitExceeded,
                fmt::format("a tenant holds at most {} volumes", limits::kMaxVolumesPerTenant));
  }
  Volume row = v;
  row.node_id.clear();
  row.created_at_ms = now_ms;
  row.deleted_at_ms = 0;
  row.billed_micros = 0;
  row.billed_to_ms = now_ms;
  row.postings = 0;
  row.settled = false;
  return Rows{std::move(row)};
}

Result<Rows> apply(const State& state, const DeleteVolume& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  auto gone = deleted_copy(state.volume(c.id), "volume", c.id, now_ms);
  if (!gone) return std::unexpected(gone.error());
  if (const auto users = instances_mounting(state, c.id); !users.empty()) {
    return fail(ErrorCode::kConflict,
                fmt::format("volume {} is mounted by {}, which has not ended: stop it first",
                            gone->name, users.front()->id));
  }
  return Rows{std::move(*gone)};
}

void put(State& state, const Volume& volume) {
  // A deleted volume's name may be a live one's since: only its own entry is taken out.
  if (auto named = state.volume_by_name.find({volume.tenant_id, volume.name});
      named != state.volume_by_name.end() && named->second == volume.id) {
    state.volume_by_name.erase(named);
  }
  if (volume.deleted_at_ms == 0) state.volume_by_name[{volume.tenant_id, volume.name}] = volume.id;
  auto& unsettled = state.unsettled_volumes[volume.tenant_id];
  if (volume.settled) {
    unsettled.erase(volume.id);
  } else {
    unsettled.insert(volume.id);
  }
  if (unsettled.empty()) state.unsettled_volumes.erase(volume.tenant_id);
  state.volumes[volume.id] = volume;
}

std::vector<const Instance*> instances_mounting(const State& state, const std::string& volume_id) {
  std::vector<const Instance*> out;
  const auto users = state.mounts_by_volume.find(volume_id);
  if (users == state.mounts_by_volume.end()) return out;
  for (const std::string& id : users->second) {
    if (const Instance* instance = state.instance(id)) out.push_back(instance);
  }
  return out;
}

Status check_volume_mounts(const State& state, const std::string& tenant_id,
                           const InstanceSpec& spec) {
  if (spec.volumes.empty()) return {};
  if (spec.volumes.size() > limits::kMaxVolumeMounts) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("an instance mounts at most {} volumes", limits::kMaxVolumeMounts));
  }
  std::set<std::string> ids;
  std::set<std::string> paths;
  std::string region;
  std::string node;
  for (const VolumeMount& mount : spec.volumes) {
    const Volume* volume = state.volume(mount.volume_id);
    if (volume == nullptr || volume->deleted_at_ms != 0 || volume->tenant_id != tenant_id) {
      return std::unexpected(
          not_found("volume", mount.name.empty() ? mount.volume_id : mount.name));
    }
    if (auto ok = check_mount_path(mount.path); !ok) return ok;
    if (!ids.insert(volume->id).second) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("volume {} is mounted twice", volume->name));
    }
    for (const std::string& other : paths) {
      if (inside(mount.path, other) || inside(other, mount.path)) {
        return fail(ErrorCode::kInvalidArgument,
                    fmt::format("volume paths {} and {} overlap", other, mount.path));
      }
    }
    paths.insert(mount.path);
    if (!region.empty() && volume->region != region) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("volumes in regions {} and {}: an instance runs in one region",
                              region, volume->region));
    }
    region = volume->region;
    if (!region_allowed(spec, volume->region) ||
        (!spec.region.empty() && spec.region != volume->region)) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("volume {} is in region {}, where the instance may not run",
                              volume->name, volume->region));
    }
    if (volume->shared()) continue;
    if (spec.nodes > 1) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("volume {} is local to one node; a gang's members run on several "
                              "(use an nfs volume)",
                              volume->name));
    }
    if (!volume->node_id.empty()) {
      if (!node.empty() && node != volume->node_id) {
        return fail(ErrorCode::kInvalidArgument,
                    "the instance's local volumes are on different nodes");
      }
      node = volume->node_id;
    }
    if (mount.read_only) continue;
    for (const Instance* other : instances_mounting(state, volume->id)) {
      const bool writes = std::ranges::any_of(other->spec.volumes, [&](const VolumeMount& m) {
        return m.volume_id == volume->id && !m.read_only;
      });
      if (writes) {
        return fail(ErrorCode::kConflict,
                    fmt::format("volume {} is mounted to write by {}; a local volume has one "
                                "writer at a time (mount it :ro, or stop {})",
                                volume->name, other->id, other->id));
      }
    }
  }
  return {};
}

std::optional<std::string> volume_node(const Draft& draft, const Instance& instance) {
  for (const VolumeMount& mount : instance.spec.volumes) {
    const Volume* volume = draft.volume(mount.volume_id);
    if (volume == nullptr || volume->shared()) continue;
    if (!volume->node_id.empty()) return volume->node_id;
  }
  return std::nullopt;
}

void bind_volumes(Draft& draft, const Instance& instance) {
  for (const VolumeMount& mount : instance.spec.volumes) {
    const Volume* volume = draft.volume(mount.volume_id);
    if (volume == nullptr || volume->shared() || !volume->node_id.empty()) continue;
    draft.edit_volume(mount.volume_id).node_id = instance.node_id;
  }
}

}  // namespace allot
