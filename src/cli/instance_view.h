// How `allot run` and `allot ps` show instances to people: what was launched and where it runs,
// and the work in flight, newest first, with tenant and node names rather than ids.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "cli/session.h"

namespace allot::cli {

// Adds the short columns that tables show: gpu_summary ("2", "250m") and command_line.
nlohmann::json summarise_instances(nlohmann::json items);

// After `allot run`: its id, state, and the node it runs on or why it waits; in JSON mode the
// whole record the server answered.
void show_launched(Session& session, const nlohmann::json& instance);

struct PsOptions {
  std::string state;  // Only this state; empty: every active state (or, with `all`, every one).
  bool all = false;   // Ended instances too.
  int limit = 0;      // The newest N; 0: all.
};

// `allot ps`: newest first.
int list_instances(Session& session, const PsOptions& options);

}  // namespace allot::cli
