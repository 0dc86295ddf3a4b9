// Money as a whole number of micro-units (1e-6) of the deployment's currency. There is no floating
// point anywhere money is computed: arithmetic is checked and fails on overflow instead of
// wrapping.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/error.h"

namespace allot {

class Money {
 public:
  static constexpr int64_t kMicrosPerUnit = 1'000'000;

  constexpr Money() = default;
  static constexpr Money from_micros(int64_t micros) { return Money(micros); }

  // Parses "12", "12.5", "-0.000001", "12.345678". At most six decimals, no exponent, no spaces;
  // fails with kInvalidArgument on bad text and kOverflow when the amount leaves int64 micros.
  [[nodiscard]] static Result<Money> parse(std::string_view text);

  constexpr int64_t micros() const { return micros_; }

  // Exact decimal text with six decimals, e.g. "12.345678", "-0.500000".
  std::string to_string() const;

  [[nodiscard]] Result<Money> plus(Money other) const;
  [[nodiscard]] Result<Money> minus(Money other) const;
  [[nodiscard]] Result<Money> times(int64_t factor) const;

  constexpr auto operator<=>(const Money&) const = default;

 private:
  constexpr explicit Money(int64_t micros) : micros_(micros) {}
  int64_t micros_ = 0;
};

}  // namespace allot
