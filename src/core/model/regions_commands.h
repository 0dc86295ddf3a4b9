// The regions domain's commands: the latency table.
// Each domain lists its commands and the rows they write; the core's Command and Row are the
// concatenation of these lists (core/kernel/command.h, core/kernel/row.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/type_list.h"
#include "core/model/latency.h"

namespace allot {

// The latency table (core/regions/regions.cc): sets the round trip from `from` to `region`,
// replacing the one there is.
struct SetLatency {
  std::string from;
  std::string region;
  int64_t rtt_ms = 0;
};

struct DeleteLatency {
  std::string from;
  std::string region;
};

using RegionsCommands = TypeList<SetLatency, DeleteLatency>;
using RegionsRows = TypeList<Latency>;

}  // namespace allot
