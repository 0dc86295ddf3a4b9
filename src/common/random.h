// Ids and secrets come from outside the core (the daemon draws them from the operating system's
// random source); the core only checks their form.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "common/clock.h"

namespace allot {

class IdSource {
 public:
  virtual ~IdSource() = default;
  // A new id: the prefix, an underscore and 16 lowercase hex digits, e.g. "ten_0f3a9c1b2d4e5f60".
  virtual std::string new_id(std::string_view prefix) = 0;
  // A new API key: "allot_" and 40 lowercase hex digits (160 bits of secret).
  virtual std::string new_secret() = 0;
};

// Secrets come from OpenSSL's CSPRNG. Ids sort by the time they were drawn, so that the store's
// indexes on them grow at one end instead of taking each insert on a random page (which, past a
// few thousand rows, dirties a page per row): 41 bits of milliseconds since 2020-01-01 UTC, then
// 23 bits that start at a random point in the millisecond's lower half and count up. One source
// never repeats an id, even when its clock steps back; two sources (or a restart) repeat one only
// if their draws meet in the same millisecond at the same random start, and the core refuses a
// taken id. Ids are names, not secrets: every read checks its caller's right to the object.
class RandomIdSource final : public IdSource {
 public:
  explicit RandomIdSource(const Clock& clock) : clock_(clock) {}
  std::string new_id(std::string_view prefix) override;
  std::string new_secret() override;

 private:
  const Clock& clock_;
  std::mutex mutex_;
  uint64_t last_ = 0;
};

// Counts up from 1: deterministic ids for tests and the simulator.
class SequentialIdSource final : public IdSource {
 public:
  std::string new_id(std::string_view prefix) override;
  std::string new_secret() override;

 private:
  unsigned long long next_ = 1;
};

// True when `id` is `prefix` + "_" + 16 lowercase hex digits.
bool is_valid_id(std::string_view id, std::string_view prefix);

// Lowercase hex SHA-256 of `text`.
std::string sha256_hex(std::string_view text);

}  // namespace allot
