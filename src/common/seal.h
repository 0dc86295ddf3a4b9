// Secrets at rest: AES-256-GCM with a key that only allotd holds (a file of its own, 0600), so that
// a copy of the database alone reveals no tenant's registry password. Each sealed value is bound
// to a context (its owner), so that moving it to another row in the database does not open it.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "common/error.h"

namespace allot {

class Sealer {
 public:
  static constexpr size_t kKeyBytes = 32;

  // Reads the key at `path`, or makes one (random, mode 0600) when there is no file. kUnavailable
  // when it cannot be read or made; kInvalidArgument when the file is not a key (wrong size, or
  // readable by others).
  [[nodiscard]] static Result<Sealer> open_key_file(const std::string& path);
  explicit Sealer(const std::array<unsigned char, kKeyBytes>& key) : key_(key) {}

  // base64 of nonce, ciphertext and tag.
  [[nodiscard]] Result<std::string> seal(std::string_view plaintext,
                                         std::string_view context) const;
  // kInternal when the value was not sealed by this key for this context, or was altered.
  [[nodiscard]] Result<std::string> open(std::string_view sealed, std::string_view context) const;

 private:
  std::array<unsigned char, kKeyBytes> key_;
};

}  // namespace allot
