// What `allot sim run` prints: per tenant its balance and monthly invoices, per instance its end
// and charge, and the ledger's sum over all accounts.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "core/kernel/state.h"

namespace allot::sim {

struct ScenarioIds {
  std::map<std::string, std::string> tenants;    // scenario name -> id
  std::map<std::string, std::string> instances;  // scenario id -> id
  std::map<std::string, Error> refused;          // scenario id -> why it was not accepted
};

// The report at `end_ms`, with invoices for every calendar month from start_ms's to end_ms's.
nlohmann::json report(const State& state, const ScenarioIds& ids, TimeMs start_ms, TimeMs end_ms);

}  // namespace allot::sim
