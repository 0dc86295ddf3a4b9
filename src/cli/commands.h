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

// GETs an answer that is not JSON (CSV, HTML) and prints it exactly as served.
Action show_text(std::function<std::string()> target);

// Lists `target()` (every page, up to `limit` items) as a table of `columns`, or as JSON.
Action show_list(std::function<std::string()> target, const int& limit,
                 const std::vector<Column>& columns);

// A query string from the options that are set, e.g. "?tenant_id=ten_...".
std::string query(std::initializer_list<std::pair<const char*, const std::string*>> params);

// quotas, reservations, prices.
void add_rules_commands(CLI::App& app, Action& action);

// invoices, usage.
void add_billing_commands(CLI::App& app, Action& action);
// budget, events.
void add_budget_commands(CLI::App& app, Action& action);
// topup, balance.
void add_money_commands(CLI::App& app, Action& action);
// finance: assets, sites, fixed costs, rental prices and the month's reports.
void add_finance_commands(CLI::App& app, Action& action);

// pools: node pools and their autoscaling.
void add_pool_commands(CLI::App& app, Action& action);

// projects idle set|show|clear: a project's idle-stop policy.
void add_project_idle_commands(CLI::App& projects, Action& action);
// An idle policy's body from "PCT:WINDOW[:notify]" (WINDOW in seconds, or with s, m, h or d);
// nullopt with `error` set when the text is not of that form.
std::optional<nlohmann::json> parse_idle_spec(const std::string& spec, std::string& error);

// Adds --limit to a listing command; 0 means every item.
CLI::Option* add_limit(CLI::App& command, int& limit);

}  // namespace allot::cli
