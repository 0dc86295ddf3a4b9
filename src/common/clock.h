// Time comes from outside the core. The daemon uses SystemClock; tests and the simulator use
// ManualClock, so that nothing depends on when it runs.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace allot {

// Milliseconds since the Unix epoch, UTC.
using TimeMs = int64_t;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimeMs now_ms() const = 0;
};

class SystemClock final : public Clock {
 public:
  TimeMs now_ms() const override;
};

// The system clock moved by an offset that may be set at any time: a replica keeps the database's
// time with it (daemon/replica.h), so that replicas whose own clocks disagree stamp alike.
class OffsetClock final : public Clock {
 public:
  TimeMs now_ms() const override { return system_.now_ms() + offset_ms_.load(); }
  void set_offset_ms(TimeMs offset_ms) { offset_ms_ = offset_ms; }
  TimeMs offset_ms() const { return offset_ms_.load(); }

 private:
  SystemClock system_;
  std::atomic<TimeMs> offset_ms_{0};
};

// A clock that moves only when told. Safe to read from several threads.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(TimeMs start_ms) : now_ms_(start_ms) {}
  TimeMs now_ms() const override { return now_ms_.load(); }
  void advance_ms(TimeMs delta_ms) { now_ms_ += delta_ms; }
  void set_ms(TimeMs at_ms) { now_ms_ = at_ms; }

 private:
  std::atomic<TimeMs> now_ms_;
};

// RFC 3339 text in UTC with milliseconds, e.g. "2026-11-30T23:43:38.123Z".
std::string format_time(TimeMs at_ms);
// Reads RFC 3339 text in UTC ("2026-12-01T10:00:00Z", seconds' fraction optional, "Z" or
// "+00:00"); nullopt for anything else.
std::optional<TimeMs> parse_time(std::string_view text);

// Calendar months in UTC, as billing counts them.
// The start of the month holding `at_ms`.
TimeMs month_start(TimeMs at_ms);
// The start of the month after the one holding `at_ms`.
TimeMs next_month_start(TimeMs at_ms);
// "2026-12" for any moment of December 2026.
std::string format_month(TimeMs at_ms);
// The start of a month written "YYYY-MM"; nullopt for anything else.
std::optional<TimeMs> parse_month(std::string_view text);

}  // namespace allot
