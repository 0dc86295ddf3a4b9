// OCI image references as tenants write them: [REGISTRY/]PATH[:TAG][@sha256:DIGEST]. Checked by
// allotd when a launch names an image, and again by the agent before it asks podman for it.
#pragma once

#include <string>
#include <string_view>

#include "common/error.h"

namespace allot {

struct ImageRef {
  std::string registry;    // "docker.io" when the reference names none.
  std::string repository;  // e.g. "library/busybox" or "team/trainer".
  std::string tag;         // Empty when only a digest is given; "latest" when neither is.
  std::string digest;      // "sha256:..." or empty.

  // The reference in full, as podman needs no short-name resolution for it:
  // "docker.io/library/busybox:latest" for "busybox".
  std::string full() const;
};

// kInvalidArgument with the rule that was broken: at most 512 bytes, lowercase path components
// of letters, digits and single '.', '_', '__' or '-' separators, a tag of up to 128 letters,
// digits, '_', '.' or '-' not starting with '.' or '-', a digest of 64 lowercase hex digits.
[[nodiscard]] Result<ImageRef> parse_image_ref(std::string_view text);

}  // namespace allot
