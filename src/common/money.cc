#include "common/money.h"

#include <fmt/format.h>

namespace allot {
namespace {

Error overflow(std::string_view what) {
  return Error{ErrorCode::kOverflow, fmt::format("amount overflows: {}", what)};
}

Error bad_amount(std::string_view text) {
  return Error{ErrorCode::kInvalidArgument,
               fmt::format("'{}' is not a decimal amount with at most 6 decimals", text)};
}

}  // namespace

Result<Money> Money::parse(std::string_view text) {
  std::string_view rest = text;
  bool negative = false;
  if (!rest.empty() && (rest.front() == '-' || rest.front() == '+')) {
    negative = rest.front() == '-';
    rest.remove_prefix(1);
  }
  const size_t dot = rest.find('.');
  std::string_view whole = rest.substr(0, dot);
  std::string_view frac = dot == std::string_view::npos ? std::string_view{} : rest.substr(dot + 1);
  if (whole.empty() || frac.size() > 6 || (dot != std::string_view::npos && frac.empty())) {
    return std::unexpected(bad_amount(text));
  }
  // Accumulate as a negative number so that the most negative int64 parses too.
  int64_t micros = 0;
  auto push_digit = [&](char c) -> bool {
    if (c < '0' || c > '9') return false;
    return !__builtin_mul_overflow(micros, 10, &micros) &&
           !__builtin_sub_overflow(micros, c - '0', &micros);
  };
  for (char c : whole) {
    if (c < '0' || c > '9') return std::unexpected(bad_amount(text));
    if (!push_digit(c)) return std::unexpected(overflow(text));
  }
  for (size_t i = 0; i < 6; ++i) {
    const char c = i < frac.size() ? frac[i] : '0';
    if (c < '0' || c > '9') return std::unexpected(bad_amount(text));
    if (!push_digit(c)) return std::unexpected(overflow(text));
  }
  if (!negative) {
    if (micros == INT64_MIN) return std::unexpected(overflow(text));
    micros = -micros;
  }
  return Money(micros);
}

std::string Money::to_string() const {
  // Work in unsigned so that INT64_MIN formats exactly.
  const bool negative = micros_ < 0;
  const uint64_t magnitude =
      negative ? uint64_t{0} - static_cast<uint64_t>(micros_) : static_cast<uint64_t>(micros_);
  return fmt::format("{}{}.{:06}", negative ? "-" : "", magnitude / kMicrosPerUnit,
                     magnitude % kMicrosPerUnit);
}

Result<Money> Money::plus(Money other) const {
  int64_t sum = 0;
  if (__builtin_add_overflow(micros_, other.micros_, &sum)) {
    return std::unexpected(overflow(to_string() + " + " + other.to_string()));
  }
  return Money(sum);
}

Result<Money> Money::minus(Money other) const {
  int64_t diff = 0;
  if (__builtin_sub_overflow(micros_, other.micros_, &diff)) {
    return std::unexpected(overflow(to_string() + " - " + other.to_string()));
  }
  return Money(diff);
}

Result<Money> Money::times(int64_t factor) const {
  int64_t product = 0;
  if (__builtin_mul_overflow(micros_, factor, &product)) {
    return std::unexpected(overflow(fmt::format("{} * {}", to_string(), factor)));
  }
  return Money(product);
}

}  // namespace allot
