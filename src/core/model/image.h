// Images on container nodes: what each node holds in its image store, and the operator's pre-pulls
// (an image pulled onto every node of a pool ahead of the work that needs it).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"

namespace allot {

// One image in a node's store, as the node's agent last reported it.
struct NodeImage {
  std::string id;                  // The image's id (a digest of its config), hex.
  std::vector<std::string> names;  // Its references; empty for an untagged one.
  int64_t size_bytes = 0;
  TimeMs created_at_ms = 0;

  bool operator==(const NodeImage&) const = default;
};

// The filesystem that holds a node's images.
struct ImageStoreUse {
  int64_t total_bytes = 0;
  int64_t free_bytes = 0;

  bool operator==(const ImageStoreUse&) const = default;
};

enum class PullState { kPending, kPulling, kDone, kFailed };

std::string_view pull_state_name(PullState state);
std::optional<PullState> parse_pull_state(std::string_view name);
bool is_final(PullState state);

// One node's part of a pre-pull.
struct PullTarget {
  std::string node_id;
  PullState state = PullState::kPending;
  std::string message;  // Why it failed, in the registry's words.
  TimeMs ended_at_ms = 0;

  bool operator==(const PullTarget&) const = default;
};

struct ImagePull {
  std::string id;  // "ipl_" + 16 hex
  std::string image;
  std::string pool;       // The pool label its nodes were chosen by; empty: every container node.
  std::string tenant_id;  // Whose registry credential the nodes pull with (the operator's).
  TimeMs created_at_ms = 0;
  std::vector<PullTarget> targets;

  bool operator==(const ImagePull&) const = default;
  bool finished() const;
};

// Pulls `image` onto every ready container node whose label "pool" is `pool` (every ready
// container node when it is empty).
struct RequestImagePull {
  std::string id;
  std::string image;
  std::string pool;
  std::string tenant_id;
};

// What an agent says of one pull it was handed.
struct PullReport {
  std::string pull_id;
  PullState state = PullState::kPulling;
  std::string message;
};

}  // namespace allot
