// The latency table: round-trip times the operator measured (or was told) from where clients sit
// to each region, for ranking regions by latency (core/admission/quote.h).
#pragma once

#include <cstdint>
#include <string>

#include "common/clock.h"

namespace allot {

// The round trip from a client location (a free name such as "eu-users", or a region's name) to
// a region. A deleted entry stays in the store as a tombstone so that a restart does not bring it
// back; the state keeps only live entries.
struct Latency {
  std::string from;
  std::string region;
  int64_t rtt_ms = 0;
  TimeMs updated_at_ms = 0;
  TimeMs deleted_at_ms = 0;  // 0: live.

  bool operator==(const Latency&) const = default;
  // Unique per (from, region); '\n' cannot occur in a name, so the key is unambiguous.
  std::string key() const { return from + "\n" + region; }
};

}  // namespace allot
