#include "common/random.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <span>

#include <fmt/format.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

namespace allot {
namespace {

// Fills `buffer` from the system's random source. A failing source leaves no safe way to make
// keys: stop rather than guess.
void random_bytes(std::span<unsigned char> buffer) {
  if (RAND_bytes(buffer.data(), static_cast<int>(buffer.size())) != 1) std::abort();
}

std::string random_hex(size_t bytes) {
  std::array<unsigned char, 32> buffer{};
  if (bytes > buffer.size()) std::abort();
  random_bytes(std::span(buffer).first(bytes));
  std::string out;
  out.reserve(bytes * 2);
  for (size_t i = 0; i < bytes; ++i) out += fmt::format("{:02x}", buffer[i]);
  return out;
}

constexpr int kCountBits = 23;
constexpr TimeMs kIdEpochMs = 1'577'836'800'000;  // 2020-01-01T00:00:00Z

}  // namespace

std::string RandomIdSource::new_id(std::string_view prefix) {
  std::array<unsigned char, 4> noise{};
  random_bytes(noise);
  uint32_t start = 0;
  for (unsigned char byte : noise) start = (start << 8) | byte;
  start &= (uint32_t{1} << (kCountBits - 1)) - 1;
  const auto since = static_cast<uint64_t>(std::max<TimeMs>(clock_.now_ms() - kIdEpochMs, 0));
  const uint64_t fresh = (since << kCountBits) | start;
  uint64_t value = 0;
  {
    std::lock_guard lock(mutex_);
    value = std::max(fresh, last_ + 1);
    last_ = value;
  }
  return fmt::format("{}_{:016x}", prefix, value);
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
