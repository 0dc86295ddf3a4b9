#include "api/fields.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "common/money.h"
#include "reports/invoice_render.h"

namespace allot {
namespace {

Error bad_decimal(std::string_view field, std::string_view text, int decimals) {
  return Error{ErrorCode::kInvalidArgument,
               fmt::format("'{}' must be a decimal number with at most {} decimals, like \"1.5\"; "
                           "not \"{}\"",
                           field, decimals, text)};
}

// A plain decimal number: an optional minus, digits, and optionally a point and more digits.
bool is_number(std::string_view text) {
  if (text.starts_with('-')) text.remove_prefix(1);
  const size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view frac = dot == std::string_view::npos ? "0" : text.substr(dot + 1);
  auto digits = [](std::string_view part) {
    return !part.empty() && std::ranges::all_of(part, [](char c) { return c >= '0' && c <= '9'; });
  };
  return digits(whole) && digits(frac);
}

// A time parsed by `parse`, or kInvalidArgument saying the field must be `form`.
template <typename Parse>
Result<TimeMs> read_parsed_time(std::string_view field, std::string_view text, Parse parse,
                                std::string_view form) {
  auto at = parse(text);
  if (!at) return fail(ErrorCode::kInvalidArgument, fmt::format("'{}' must be {}", field, form));
  return *at;
}

}  // namespace

Result<int64_t> parse_scaled(std::string_view field, std::string_view text, int decimals,
                             bool allow_negative) {
  std::string_view rest = text;
  const bool negative = !rest.empty() && rest.front() == '-';
  if (negative) {
    if (!allow_negative) {
      return fail(ErrorCode::kInvalidArgument, fmt::format("'{}' must not be negative", field));
    }
    rest.remove_prefix(1);
  }
  const size_t dot = rest.find('.');
  const std::string_view whole = rest.substr(0, dot);
  const std::string_view frac =
      dot == std::string_view::npos ? std::string_view{} : rest.substr(dot + 1);
  if (whole.empty() || (dot != std::string_view::npos && frac.empty())) {
    return std::unexpected(bad_decimal(field, text, decimals));
  }
  if (std::cmp_greater(frac.size(), decimals)) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("'{}' takes at most {} decimals; not \"{}\"", field, decimals, text));
  }
  // The digits of the whole part, then exactly `decimals` digits of the fraction (padded with 0).
  std::string digits(whole);
  digits += frac;
  digits.append(static_cast<size_t>(decimals) - frac.size(), '0');
  int64_t value = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') return std::unexpected(bad_decimal(field, text, decimals));
    if (__builtin_mul_overflow(value, 10, &value) ||
        __builtin_add_overflow(value, c - '0', &value)) {
      return fail(ErrorCode::kOverflow, fmt::format("'{}' is too large: \"{}\"", field, text));
    }
  }
  return negative ? -value : value;
}

std::string format_scaled(int64_t value, int decimals) {
  // The magnitude in unsigned arithmetic, so that the most negative value formats too.
  const bool negative = value < 0;
  const uint64_t magnitude =
      negative ? uint64_t{0} - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  uint64_t unit = 1;
  for (int i = 0; i < decimals; ++i) unit *= 10;
  std::string out = fmt::format("{}{}", negative ? "-" : "", magnitude / unit);
  if (decimals > 0) out += fmt::format(".{:0{}}", magnitude % unit, decimals);
  return out;
}

int64_t divide_rounded(int64_t value, int64_t divisor) {
  return (value / divisor) + ((value % divisor) * 2 >= divisor ? 1 : 0);
}

Result<int64_t> read_money(std::string_view field, std::string_view text) {
  auto money = Money::parse(text);
  if (!money) {
    return fail(money.error().code, fmt::format("'{}' must be a decimal amount like \"2.50\": {}",
                                                field, money.error().message));
  }
  return money->micros();
}

std::string money_text(int64_t micros) { return Money::from_micros(micros).to_string(); }

Result<TimeMs> read_time(std::string_view field, std::string_view text, std::string_view example) {
  return read_parsed_time(field, text, parse_time,
                          fmt::format("RFC 3339 time in UTC, e.g. {}", example));
}

Result<TimeMs> read_month(std::string_view field, std::string_view text) {
  return read_parsed_time(field, text, parse_month, "a month written YYYY-MM, e.g. 2026-11");
}

Status allow_query(const Target& target, std::initializer_list<std::string_view> allowed) {
  for (const auto& [name, value] : target.query) {
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      return fail(ErrorCode::kUnknownField, fmt::format("unknown query parameter '{}'", name));
    }
  }
  return {};
}

std::string csv_line(const std::vector<std::string>& fields) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ',';
    // Numbers go as they are: the formula guard of text would turn a loss of "-5" into text.
    out += is_number(fields[i]) ? fields[i] : billing::csv_field(fields[i]);
  }
  return out + "\r\n";
}

HttpResponse csv_reply(std::string body) {
  return HttpResponse{
      .status = 200, .body = std::move(body), .content_type = "text/csv; charset=utf-8"};
}

}  // namespace allot
