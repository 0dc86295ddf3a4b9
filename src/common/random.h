// Ids and secrets come from outside the core (the daemon draws them from the operating system's
// random source); the core only checks their form.
#pragma once

#include <string>
#include <string_view>

namespace allot {

class IdSource {
 public:
  virtual ~IdSource() = default;
  // A new id: the prefix, an underscore and 16 lowercase hex digits, e.g. "ten_0f3a9c1b2d4e5f60".
  virtual std::string new_id(std::string_view prefix) = 0;
  // A new API key: "allot_" and 40 lowercase hex digits (160 bits of secret).
  virtual std::string new_secret() = 0;
};

// Draws from OpenSSL's CSPRNG.
class RandomIdSource final : public IdSource {
 public:
  std::string new_id(std::string_view prefix) override;
  std::string new_secret() override;
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
