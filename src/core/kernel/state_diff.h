// Whether two states hold the same objects: what a reload from the store must give back.
#pragma once

#include <optional>
#include <string>

#include "core/kernel/state.h"

namespace allot::kernel {

// The first difference between `a` and `b` ("instances: ins_... differs"), or nullopt when they
// hold the same objects, ledger, indexes and counters. What is not stored
// (State::resumed_at_ms, process_nodes_for_all) is not compared.
std::optional<std::string> first_difference(const State& a, const State& b);

}  // namespace allot::kernel
