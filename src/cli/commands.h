// The CLI's commands. Each registers itself on the CLI11 app and, when chosen, sets the action
// that main runs once the connection settings are known.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

#include "cli/session.h"

namespace allot::cli {

using Action = std::function<int(Session&)>;

// whoami, version, tenants, projects, users, keys, audit.
void add_identity_commands(CLI::App& app, Action& action);

// nodes, node, join-tokens, run, ps, logs, stop, describe.
void add_cluster_commands(CLI::App& app, Action& action);

// Runs one request and shows its answer.
Action show_call(
    std::string method, std::function<std::string()> target,
    std::function<nlohmann::json()> body = [] { return nlohmann::json(nullptr); });

// Adds --limit to a listing command; 0 means every item.
CLI::Option* add_limit(CLI::App& command, int& limit);

}  // namespace allot::cli
