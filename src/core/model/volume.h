// Volumes: a tenant's storage that outlives its instances (datasets, checkpoints), of a size it
// chose, in one region, on one of the operator's backends. A `local` volume is a directory on one
// node, the node where the first instance that mounts it is placed; an `nfs` volume is a directory
// of the region's NFS export, which every node of the region mounts.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/clock.h"

namespace allot {

inline constexpr std::string_view kVolumeLocal = "local";
inline constexpr std::string_view kVolumeNfs = "nfs";

struct Volume {
  std::string id;  // "vol_" + 16 hex
  std::string tenant_id;
  std::string project_id;
  std::string name;  // Unique among the tenant's live volumes.
  std::string region;
  std::string backend;  // kVolumeLocal or kVolumeNfs.
  int64_t size_gb = 0;  // Provisioned, in decimal gigabytes: what storage is to be billed by.
  // A local volume's node, from the first placement of an instance that mounts it; empty before
  // that and for nfs volumes.
  std::string node_id;
  TimeMs created_at_ms = 0;
  TimeMs deleted_at_ms = 0;  // 0: live. A deleted volume stays in the state, for billing.
  // Storage billing, as an instance's usage is billed: the part of its charge (from creation to
  // deletion, at its region's storage price) that the ledger has posted, the last posting, how
  // many postings there were, and whether it is deleted and posted in full.
  int64_t billed_micros = 0;
  TimeMs billed_to_ms = 0;
  int64_t postings = 0;
  bool settled = false;

  bool operator==(const Volume&) const = default;
  // Whether more than one instance may mount it to write at once.
  bool shared() const { return backend == kVolumeNfs; }
};

// Makes a volume. The command carries the row; the core checks it and stamps its time.
struct CreateVolume {
  Volume volume;
};

// Deletes a volume that no instance mounts.
struct DeleteVolume {
  std::string id;
};

}  // namespace allot
