#include "common/clock.h"

#include <chrono>

#include <fmt/chrono.h>
#include <fmt/format.h>

namespace allot {

TimeMs SystemClock::now_ms() const {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string format_time(TimeMs at_ms) {
  using namespace std::chrono;
  const sys_time<milliseconds> at{milliseconds{at_ms}};
  const auto day = floor<days>(at);
  const year_month_day ymd{day};
  const hh_mm_ss hms{at - day};
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", static_cast<int>(ymd.year()),
                     static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                     hms.hours().count(), hms.minutes().count(), hms.seconds().count(),
                     hms.subseconds().count());
}

std::optional<TimeMs> parse_time(std::string_view text) {
  using namespace std::chrono;
  auto digits = [&](size_t at, size_t n) -> std::optional<int> {
    if (at + n > text.size()) return std::nullopt;
    int value = 0;
    for (size_t i = at; i < at + n; ++i) {
      if (text[i] < '0' || text[i] > '9') return std::nullopt;
      value = value * 10 + (text[i] - '0');
    }
    return value;
  };
  auto is = [&](size_t at, char c) { return at < text.size() && text[at] == c; };
  const auto y = digits(0, 4), mo = digits(5, 2), d = digits(8, 2);
  const auto h = digits(11, 2), mi = digits(14, 2), s = digits(17, 2);
  if (!y || !mo || !d || !h || !mi || !s || !is(4, '-') || !is(7, '-') ||
      !(is(10, 'T') || is(10, 't')) || !is(13, ':') || !is(16, ':')) {
    return std::nullopt;
  }
  size_t at = 19;
  int64_t ms = 0;
  if (is(at, '.')) {
    size_t n = 0;
    for (++at; at < text.size() && text[at] >= '0' && text[at] <= '9'; ++at, ++n) {
      if (n < 3) ms = ms * 10 + (text[at] - '0');
    }
    if (n == 0) return std::nullopt;
    for (; n < 3; ++n) ms *= 10;
  }
  const std::string_view zone = text.substr(at);
  if (zone != "Z" && zone != "z" && zone != "+00:00") return std::nullopt;
  const year_month_day ymd{year{*y}, month{static_cast<unsigned>(*mo)},
                           day{static_cast<unsigned>(*d)}};
  if (!ymd.ok() || *h > 23 || *mi > 59 || *s > 59) return std::nullopt;
  const auto at_time = sys_days{ymd} + hours{*h} + minutes{*mi} + seconds{*s};
  return duration_cast<milliseconds>(at_time.time_since_epoch()).count() + ms;
}

namespace {

std::chrono::year_month month_of(TimeMs at_ms) {
  using namespace std::chrono;
  const year_month_day ymd{floor<days>(sys_time<milliseconds>{milliseconds{at_ms}})};
  return ymd.year() / ymd.month();
}

TimeMs first_day_ms(std::chrono::year_month ym) {
  using namespace std::chrono;
  return duration_cast<milliseconds>(sys_days{ym / 1}.time_since_epoch()).count();
}

}  // namespace

TimeMs month_start(TimeMs at_ms) { return first_day_ms(month_of(at_ms)); }

TimeMs next_month_start(TimeMs at_ms) {
  return first_day_ms(month_of(at_ms) + std::chrono::months{1});
}

std::string format_month(TimeMs at_ms) {
  const auto ym = month_of(at_ms);
  return fmt::format("{:04}-{:02}", static_cast<int>(ym.year()), static_cast<unsigned>(ym.month()));
}

std::optional<TimeMs> parse_month(std::string_view text) {
  if (text.size() != 7 || text[4] != '-') return std::nullopt;
  auto parsed = parse_time(fmt::format("{}-01T00:00:00Z", text));
  if (!parsed || format_month(*parsed) != text) return std::nullopt;
  return parsed;
}

}  // namespace allot
