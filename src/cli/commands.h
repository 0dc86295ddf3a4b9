// The CLI's commands. Each registers itself on the CLI11 app and, when chosen, sets the action
// that main runs once the connection settings are known.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands/common.h"

namespace allot::cli {

// Each domain's commands (cli/commands/<domain>.cc), registered by main one domain after another.
void add_identity_domain_commands(CLI::App& app, Action& action);
void add_cluster_domain_commands(CLI::App& app, Action& action);
void add_admission_domain_commands(CLI::App& app, Action& action);
void add_money_domain_commands(CLI::App& app, Action& action);
void add_books_domain_commands(CLI::App& app, Action& action);
void add_pools_domain_commands(CLI::App& app, Action& action);
void add_regions_domain_commands(CLI::App& app, Action& action);

// `allot sim`: offline experiments that drive the scheduler (src/sim) on trace data, with no
// server: `policies` (the registry's names), `replay` (the fill-the-cluster experiment of the FGD
// paper on the Alibaba openb trace, sim/replay.h), `resample` (a pod list with another mix of work,
// sim/resample.h), `forecast` (the demand forecast scored on a trace, sim/forecast_report.h),
// `scenario` and `chaos`. Bad input exits 2 with the file, line and field.
void add_sim_commands(CLI::App& app, Action& action);
// `allot sim chaos --seeds A-B [--steps N] [--fault-percent P] [--corrupt-gpu-at STEP]` under
// `sim`. Exits 0 with no violation, 8 with any (each named with its seed and step), 2 on bad
// flags. `output` is the top-level -o.
void add_chaos_command(CLI::App& sim, const CLI::Option* output, Action& action);

// whoami, version, tenants, projects, users, keys, audit.
void add_identity_commands(CLI::App& app, Action& action);

// nodes, node, join-tokens, run, ps, logs, stop, describe.
void add_cluster_commands(CLI::App& app, Action& action);

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

// registries: credentials for private image registries.
void add_registry_commands(CLI::App& app, Action& action);
// volumes: storage that outlives instances.
void add_volume_commands(CLI::App& app, Action& action);

// ports, port-forward: reaching an instance's ports through allotd.
void add_port_commands(CLI::App& app, Action& action);
// exec, shell: commands and shells in a running instance.
void add_exec_commands(CLI::App& app, Action& action);

// images: container nodes' images and pre-pulls.
void add_image_commands(CLI::App& app, Action& action);

// spot: spot price rules and the prices they set.
void add_spot_commands(CLI::App& app, Action& action);
// What a request asks for and where it may and would rather run: `allot run` and `allot quote`.
struct PlacementOptions {
  int gpus = 0, milli = 0;
  std::vector<std::string> gpu_types;
  std::string price_class, max_price, prefer, from, regions;
  bool spot = false;
};
// Adds --prefer, --from and --regions, and with `shape` also --gpus, --milli, --gpu-type (and
// --model for it, unless `model_alias` is false), --class, --spot and --max-price.
void add_placement_options(CLI::App& command, PlacementOptions& options, bool shape,
                           bool model_alias = true);
// The options that were given, as the API's fields.
void put_placement(const PlacementOptions& options, nlohmann::json& body);

// latency, regions, quote.
void add_region_commands(CLI::App& app, Action& action);
// projects idle set|show|clear: a project's idle-stop policy.
void add_project_idle_commands(CLI::App& projects, Action& action);
// An idle policy's body from "PCT:WINDOW[:notify]" (WINDOW in seconds, or with s, m, h or d);
// nullopt with `error` set when the text is not of that form.
std::optional<nlohmann::json> parse_idle_spec(const std::string& spec, std::string& error);
// "600", "600s", "10m", "2h" or "1d" in seconds; nullopt otherwise (the server checks the range).
std::optional<int64_t> window_seconds(std::string_view text);
// The transform of every flag that takes a duration: the text in window_seconds' forms becomes
// its seconds, anything else is refused naming the forms.
CLI::Validator duration_seconds();
// KEY=VALUE pairs into an object; false (with a message) on a malformed one.
bool pairs(const std::vector<std::string>& items, const char* flag, nlohmann::json& out);
// services: endpoints served over replicas that scale with traffic.
void add_service_commands(CLI::App& app, Action& action);

}  // namespace allot::cli
