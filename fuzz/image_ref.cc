// Image references as tenants write them (common/image_ref.h), over any bytes. Properties: nothing
// crashes or throws; a reference that parses is at most 512 bytes, names a registry and a
// repository, has a tag or a digest, and its full form (when within the limit) parses to itself.
#include <cstdint>
#include <string>

#include "check.h"
#include "common/image_ref.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using allot::fuzz::require;
  const std::string_view text = allot::fuzz::bytes_of(data, size);
  auto ref = allot::parse_image_ref(text);
  if (!ref) return 0;
  require(text.size() <= 512, "a reference is at most 512 bytes");
  require(!ref->registry.empty() && !ref->repository.empty(), "a registry and a repository");
  require(!ref->tag.empty() || !ref->digest.empty(), "a tag or a digest");
  // The full form adds what the reference left implicit, and may pass the limit by that much.
  const std::string full = ref->full();
  if (full.size() > 512) return 0;
  auto again = allot::parse_image_ref(full);
  require(again.has_value(), "a reference's full form parses");
  require(again->full() == full, "a reference's full form stands for itself");
  return 0;
}
