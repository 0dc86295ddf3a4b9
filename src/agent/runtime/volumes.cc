#include "agent/runtime/volumes.h"

#include <sys/stat.h>
#include <sys/xattr.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <filesystem>

#include "agent/runtime/volume_fs.h"

namespace allot::agent {

namespace {

// An id as the controller makes them: "vol_" and 16 hex digits. Nothing else becomes a path.
bool volume_id_form(const std::string& id) {
  return id.size() == 20 && id.starts_with("vol_") &&
         std::all_of(id.begin() + 4, id.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// A default access list on a directory that gives everyone read, write and search: what is made
// in it is open to each instance that mounts it, though each runs under host uids of its own
// (userns.h). The kernel's form of it: a version, then (tag, permissions, id) entries.
void open_what_is_made_in(const std::string& dir) {
  constexpr uint32_t kVersion = 2;
  constexpr uint16_t kRwx = 7;
  constexpr uint32_t kNoId = UINT32_MAX;
  struct Entry {
    uint16_t tag;
    uint16_t perm;
    uint32_t id;
  };
  struct Acl {
    uint32_t version;
    std::array<Entry, 3> entries;
  };
  const Acl acl{.version = kVersion,
                .entries = {{{.tag = 0x01, .perm = kRwx, .id = kNoId},     // The owner.
                             {.tag = 0x04, .perm = kRwx, .id = kNoId},     // The owning group.
                             {.tag = 0x20, .perm = kRwx, .id = kNoId}}}};  // Everyone else.
  // A file system without access lists still works for one instance at a time.
  (void)::setxattr(dir.c_str(), "system.posix_acl_default", &acl, sizeof acl, 0);
}

// The root keeps out the node's other users; a volume's own directory is open to whichever user
// its workload's image runs as.
Status make_volume_dir(const std::string& root, const std::string& dir, bool own_root) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return fail(ErrorCode::kUnavailable, "cannot create " + dir + ": " + ec.message());
  if (own_root) ::chmod(root.c_str(), 0700);
  if (::chmod(dir.c_str(), 0777) != 0) {
    return fail(ErrorCode::kUnavailable, "cannot open " + dir + " to its workload");
  }
  open_what_is_made_in(dir);
  return {};
}

}  // namespace

std::string volume_variable(const std::string& name) {
  std::string out = "ALLOT_VOLUME_";
  for (const char c : name) {
    out += std::isalnum(static_cast<unsigned char>(c)) != 0
               ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
               : '_';
  }
  return out;
}

Result<std::vector<VolumeBind>> volume_binds(const nlohmann::json& items, const VolumeDirs& dirs,
                                             bool in_container,
                                             std::map<std::string, std::string>& env) {
  std::vector<VolumeBind> out;
  if (!items.is_array()) return out;
  for (const nlohmann::json& item : items) {
    const std::string id = item.value("volume_id", "");
    const std::string backend = item.value("backend", "");
    VolumeBind bind{.name = item.value("name", ""),
                    .path = item.value("path", ""),
                    .read_only = item.value("read_only", false)};
    if (!volume_id_form(id) || bind.path.empty() || bind.name.empty()) {
      return fail(ErrorCode::kInvalidArgument, "a malformed volume in the work item");
    }
    const bool nfs = backend == "nfs";
    if (nfs && dirs.nfs.empty()) {
      return fail(ErrorCode::kUnavailable,
                  "volume " + bind.name +
                      " is on NFS, and this node has no NFS directory (allot-agent --nfs-dir)");
    }
    const std::string& root = nfs ? dirs.nfs : dirs.local;
    bind.source = (std::filesystem::path(root) / id).string();
    if (Status made = make_volume_dir(root, bind.source, !nfs); !made) {
      return std::unexpected(made.error());
    }
    // Tenants' containers write local volumes up to their size and no further; the directory
    // is then the root of the volume's own file system, opened to its users as before.
    if (!nfs && in_container) {
      if (Status sized = mount_volume_fs(bind.source, item.value("size_gb", int64_t{0})); !sized) {
        return std::unexpected(sized.error());
      }
      if (Status opened = make_volume_dir(root, bind.source, true); !opened) {
        return std::unexpected(opened.error());
      }
    }
    env[volume_variable(bind.name)] = in_container ? bind.path : bind.source;
    out.push_back(std::move(bind));
  }
  return out;
}

}  // namespace allot::agent
