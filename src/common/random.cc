#include "common/random.h"

#include <array>
#include <cstdlib>

#include <fmt/format.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

namespace allot {
namespace {

std::string random_hex(size_t bytes) {
  std::array<unsigned char, 32> buffer{};
  // A failing system random source leaves no safe way to make keys: stop rather than guess.
  if (bytes > buffer.size() || RAND_bytes(buffer.data(), static_cast<int>(bytes)) != 1) {
    std::abort();
  }
  std::string out;
  out.reserve(bytes * 2);
  for (size_t i = 0; i < bytes; ++i) out += fmt::format("{:02x}", buffer[i]);
  return out;
}

}  // namespace

std::string RandomIdSource::new_id(std::string_view prefix) {
  return fmt::format("{}_{}", prefix, random_hex(8));
}

std::string RandomIdSource::new_secret() { return "allot_" + random_hex(20); }

std::string SequentialIdSource::new_id(std::string_view prefix) {
  return fmt::format("{}_{:016x}", prefix, next_++);
}

std::string SequentialIdSource::new_secret() { return fmt::format("allot_{:040x}", next_++); }

bool is_valid_id(std::string_view id, std::string_view prefix) {
  if (id.size() != prefix.size() + 17 || !id.starts_with(prefix) || id[prefix.size()] != '_') {
    return false;
  }
  for (char c : id.substr(prefix.size() + 1)) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string sha256_hex(std::string_view text) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_Digest(text.data(), text.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1) {
    std::abort();
  }
  std::string out;
  out.reserve(size_t{length} * 2);
  for (unsigned int i = 0; i < length; ++i) out += fmt::format("{:02x}", digest[i]);
  return out;
}

}  // namespace allot
