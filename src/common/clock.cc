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

}  // namespace allot
