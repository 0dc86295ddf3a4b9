// Typed values read from the text of request fields and written back into answers: money, exact
// decimals for ratios that are not money (a PUE, an interest rate, a power in kW, a what-if
// factor), times and months; and CSV answers. Nothing here goes through floating point, so
// "0.065" is exactly 65,000 ppm.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "api/http.h"
#include "api/request.h"
#include "common/clock.h"
#include "common/error.h"

namespace allot {

// Parses `text` ("1.3", "0.065", "2") as an integer scaled by 10^decimals: with decimals 3,
// "1.3" is 1,300. Refuses (kInvalidArgument, naming `field`) text that is not a plain decimal,
// more digits after the point than `decimals`, and a negative number unless `allow_negative`;
// kOverflow when the value leaves int64.
[[nodiscard]] Result<int64_t> parse_scaled(std::string_view field, std::string_view text,
                                           int decimals, bool allow_negative = false);

// Writes a scaled integer back with exactly `decimals` digits after the point: 1,300 with 3 is
// "1.300".
std::string format_scaled(int64_t value, int decimals);

// A non-negative quotient rounded half up; for showing derived quantities (kWh from mJ).
int64_t divide_rounded(int64_t value, int64_t divisor);

// Money as micro-units from a decimal string (common/money.h), the error naming the field.
[[nodiscard]] Result<int64_t> read_money(std::string_view field, std::string_view text);
// Micro-units as the decimal string answers carry: "12.500000".
std::string money_text(int64_t micros);

// RFC 3339 UTC time, and a month "YYYY-MM" (its first moment), the errors naming the field (and
// giving `example` of a time).
[[nodiscard]] Result<TimeMs> read_time(std::string_view field, std::string_view text,
                                       std::string_view example = "2026-12-01T09:00:00Z");
[[nodiscard]] Result<TimeMs> read_month(std::string_view field, std::string_view text);

// Refuses any query parameter not in `allowed` (kUnknownField).
[[nodiscard]] Status allow_query(const Target& target,
                                 std::initializer_list<std::string_view> allowed);

// One CSV record (fields quoted as invoices quote them) with its CRLF line end.
std::string csv_line(const std::vector<std::string>& fields);
HttpResponse csv_reply(std::string body);

}  // namespace allot
