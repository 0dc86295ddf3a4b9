// The regions' part of the state: the latencies between places and regions.
#pragma once

#include <map>
#include <string>

#include "core/model/latency.h"

namespace allot {

struct RegionsSlice {
  // Live latency entries by Latency::key(): from, then region.
  std::map<std::string, Latency> latencies;

  const Latency* latency(const std::string& from, const std::string& region) const;
};

}  // namespace allot
