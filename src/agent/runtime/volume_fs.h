// A local volume's size, enforced: on a multi-tenant node each local volume is a file system of
// its own, ext4 in a sparse file of the volume's size, loop-mounted at the volume's directory. A
// write past the size fails inside the container with ENOSPC and takes nothing of the node's
// disk beyond the volume's own size.
#pragma once

#include <cstdint>
#include <string>

#include "common/error.h"

namespace allot::agent {

// Mounts `dir`'s file system from `dir`.ext4, made first (sparse, `size_gb` decimal gigabytes)
// when missing; nothing when `dir` is a mount point already, or when it holds data written
// before sizes were enforced (a mount would hide it). kUnavailable, saying why, when a
// step fails (no loop devices, no mkfs.ext4, not root): the volume is then not used unbounded.
[[nodiscard]] Status mount_volume_fs(const std::string& dir, int64_t size_gb);

}  // namespace allot::agent
