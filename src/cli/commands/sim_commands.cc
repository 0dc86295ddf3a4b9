#include "cli/commands.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "sim/forecast_report.h"
#include "sim/replay.h"
#include "sim/resample.h"
#include "sim/scenario.h"
#include "sim/trace.h"

namespace allot::sim {
namespace {

struct ReplayFlags {
  std::string nodes_path;
  std::string pods_path;
  std::string policy{sched::kDefaultPolicy};
  std::string seeds = "42-51";
  double tune = 1.3;
};

int usage(const Error& error) {
  std::cerr << "error: " << error.message << "\n";
  return cli::kUsage;
}

// "pod_list_gpushare40.csv" -> "gpushare40": the label the paper's tables use.
std::string trace_label(const std::string& pods_path) {
  std::string stem = std::filesystem::path(pods_path).stem().string();
  constexpr std::string_view kPrefix = "pod_list_";
  if (stem.starts_with(kPrefix)) stem.erase(0, kPrefix.size());
  return stem;
}

int run_replay(const ReplayFlags& flags, const std::string& output) {
  const auto start = std::chrono::steady_clock::now();
  const Result<SeedRange> seeds = parse_seeds(flags.seeds);
  if (!seeds) return usage(seeds.error());
  Result<std::unique_ptr<sched::Policy>> policy = sched::make_policy(flags.policy);
  if (!policy) return usage(policy.error());
  const Result<std::vector<sched::NodeView>> nodes = read_nodes(flags.nodes_path);
  if (!nodes) return usage(nodes.error());
  const Result<std::vector<sched::Request>> pods = read_pods(flags.pods_path, models_of(*nodes));
  if (!pods) return usage(pods.error());
  Result<Report> report = replay(**policy, *nodes, *pods, *seeds, flags.tune);
  if (!report) return usage(report.error());
  report->policy = flags.policy;
  report->trace = trace_label(flags.pods_path);
  report->seeds = flags.seeds;
  report->wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (output == "json") {
    std::cout << to_json(*report).dump() << "\n";
  } else {
    std::cout << to_table(*report);
  }
  return cli::kOk;
}

// The operator's P&L per month: a line per node, then the totals.
void print_pnl(const nlohmann::json& pnl) {
  for (const auto& month : pnl) {
    std::cout << "P&L " << month.at("month").get<std::string>() << "\n";
    if (month.contains("error")) {
      std::cout << "  error: " << month.at("error").get<std::string>() << "\n";
      continue;
    }
    for (const auto& n : month.at("nodes")) {
      std::cout << fmt::format(
          "  {:<12} revenue {:>14} costs {:>14} margin {:>14}  {} kWh  {} kg "
          "CO2e  utilisation {}\n",
          n.at("node").get<std::string>(), n.at("revenue").get<std::string>(),
          n.at("costs").get<std::string>(), n.at("margin").get<std::string>(),
          n.at("energy_kwh").get<std::string>(), n.at("carbon_kg").get<std::string>(),
          n.at("utilisation").get<std::string>());
    }
    const auto& t = month.at("totals");
    std::cout << fmt::format("  total        revenue {:>14} credits {} net {} costs {} margin {}\n",
                             t.at("revenue").get<std::string>(), t.at("credits").get<std::string>(),
                             t.at("net_revenue").get<std::string>(),
                             t.at("costs").get<std::string>(), t.at("margin").get<std::string>());
  }
}

void print_seeds(const nlohmann::json& report) {
  for (const auto& w : report.at("workloads")) {
    std::cout << fmt::format("workload seed {} ({} jobs)\n", w.at("seed").get<uint64_t>(),
                             w.at("jobs").get<int64_t>());
  }
}

std::string wait_text(const nlohmann::json& w) {
  return fmt::format("{} started, {} never; mean {} s, p50 {} s, p95 {} s, max {} s",
                     w.at("started").get<int64_t>(), w.at("never_started").get<int64_t>(),
                     w.at("mean_s").get<double>(), w.at("p50_s").get<int64_t>(),
                     w.at("p95_s").get<int64_t>(), w.at("max_s").get<int64_t>());
}

// Per pool what the autoscaler did and how its GPUs were used, then the queue wait of all work.
void print_pools(const nlohmann::json& report) {
  for (const auto& p : report.at("pools")) {
    std::cout << fmt::format(
        "pool {} ({}): launched {}, retired {}, boot failures {}, node-hours {:.3f}, GPU-hours "
        "available {:.3f}, allocated {:.3f}, idle {:.3f}\n  queue wait: {}\n",
        p.at("name").get<std::string>(), p.at("model").get<std::string>(),
        p.at("launched").get<int64_t>(), p.at("retired").get<int64_t>(),
        p.at("boot_failures").get<int64_t>(), p.at("node_hours").get<double>(),
        p.at("gpu_hours_available").get<double>(), p.at("gpu_hours_allocated").get<double>(),
        p.at("gpu_idle_hours").get<double>(), wait_text(p.at("queue_wait")));
  }
  std::cout << "queue wait: " << wait_text(report.at("queue_wait")) << "\n";
}

// The two runs side by side: per pool its GPU idle hours and queue wait, then all work's.
void print_comparison(const nlohmann::json& both) {
  const auto& a = both.at("without_forecast");
  const auto& b = both.at("with_forecast");
  print_seeds(a);
  std::cout << fmt::format("{:<34} {:>18} {:>18}\n", "", "without forecast", "with forecast");
  const auto row = [](const std::string& what, const nlohmann::json& x, const nlohmann::json& y) {
    std::cout << fmt::format("{:<34} {:>18} {:>18}\n", what, x.dump(), y.dump());
  };
  const auto waits = [&](const std::string& who, const nlohmann::json& x, const nlohmann::json& y) {
    for (const char* key : {"mean_s", "p50_s", "p95_s", "max_s", "never_started"}) {
      row(fmt::format("{} queue wait {}", who, key), x.at(key), y.at(key));
    }
  };
  for (size_t i = 0; i < a.at("pools").size(); ++i) {
    const auto& p = a.at("pools")[i];
    const auto& q = b.at("pools")[i];
    const std::string name = "pool " + p.at("name").get<std::string>();
    for (const char* key : {"launched", "retired", "boot_failures", "node_hours",
                            "gpu_hours_available", "gpu_hours_allocated", "gpu_idle_hours"}) {
      row(fmt::format("{} {}", name, key), p.at(key), q.at(key));
    }
    waits(name, p.at("queue_wait"), q.at("queue_wait"));
  }
  waits("all", a.at("queue_wait"), b.at("queue_wait"));
}

void print_report(const nlohmann::json& report) {
  print_seeds(report);
  for (const auto& tenant : report.at("tenants")) {
    std::cout << tenant.at("name").get<std::string>() << " ("
              << tenant.at("billing").get<std::string>() << "): balance "
              << tenant.at("balance").get<std::string>() << "\n";
    for (const auto& invoice : tenant.at("invoices")) {
      std::cout << "  " << invoice.at("month").get<std::string>() << "  total "
                << invoice.at("total").get<std::string>() << "\n";
    }
  }
  std::cout << "ledger sum " << report.at("ledger").at("sum").get<std::string>() << "\n";
  print_pnl(report.at("pnl"));
  if (!report.at("pools").empty()) print_pools(report);
}

// Runs a scenario and prints its report: JSON with -o json, else a summary per tenant and pool.
// Compared, it runs twice, without and with the forecast, and prints both.
int run_scenario_file(const std::string& path, const std::string& output, bool compare) {
  std::ifstream in(path);
  if (!in) return usage(Error{ErrorCode::kNotFound, "cannot read " + path});
  const nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded()) return usage(Error{ErrorCode::kInvalidArgument, path + ": not JSON"});
  auto scenario = parse_scenario(doc);
  if (!scenario) return usage(Error{scenario.error().code, path + ": " + scenario.error().message});
  compare = compare || scenario->forecast.compare;
  auto report = compare ? compare_forecast(*scenario) : run_scenario(*scenario);
  if (!report) return usage(report.error());
  if (output == "json") {
    std::cout << report->dump(2) << "\n";
  } else if (compare) {
    print_comparison(*report);
  } else {
    print_report(*report);
  }
  return cli::kOk;
}

struct ResampleFlags {
  std::string nodes_path;
  std::string pods_path;
  uint64_t seed = 1;
  Mix mix;
};

int run_resample(const ResampleFlags& flags) {
  const Result<std::vector<sched::NodeView>> nodes = read_nodes(flags.nodes_path);
  if (!nodes) return usage(nodes.error());
  const Result<std::vector<sched::Request>> pods = read_pods(flags.pods_path, models_of(*nodes));
  if (!pods) return usage(pods.error());
  const Result<std::vector<sched::Request>> out = resample(*pods, flags.mix, flags.seed);
  if (!out) return usage(out.error());
  std::cout << pods_csv(*out);
  return cli::kOk;
}

struct ForecastFlags {
  std::string trace_path;
  int holdout_days = 7;
  bool json = false;
};

int run_forecast(const ForecastFlags& flags, const std::string& output) {
  const Result<std::vector<TimedPod>> pods = read_timed_pods(flags.trace_path);
  if (!pods) return usage(pods.error());
  Result<ForecastReport> report = forecast_trace(*pods, flags.holdout_days);
  if (!report) return usage(report.error());
  report->trace = trace_label(flags.trace_path);
  if (flags.json || output == "json") {
    std::cout << to_json(*report).dump(2) << "\n";
  } else {
    std::cout << to_table(*report);
  }
  return cli::kOk;
}

}  // namespace
}  // namespace allot::sim

namespace allot::cli {
namespace {

// The top-level -o as the action runs (it is parsed after the subcommand is chosen).
std::string output_mode(const CLI::Option* output) {
  return output != nullptr && output->count() > 0 ? output->as<std::string>() : "table";
}

}  // namespace

void add_sim_commands(CLI::App& app, allot::cli::Action& action) {
  CLI::App* sim = app.add_subcommand("sim", "offline experiments on trace data (no server)");
  sim->require_subcommand(1);
  CLI::App* replay = sim->add_subcommand(
      "replay", "fill the cluster with a trace's pods (the FGD paper's experiment)");
  auto flags = std::make_shared<sim::ReplayFlags>();
  replay->add_option("--nodes", flags->nodes_path, "node list CSV (sn,cpu_milli,...)")->required();
  replay->add_option("--pods", flags->pods_path, "pod list CSV (name,cpu_milli,...)")->required();
  replay->add_option("--policy", flags->policy, "placement policy")->capture_default_str();
  replay->add_option("--seeds", flags->seeds, "N or A-B")->capture_default_str();
  replay->add_option("--tune", flags->tune, "workload GPU milli as a multiple of capacity")
      ->capture_default_str();
  // -o belongs to the top-level app (every command takes it); read it when the action runs.
  const CLI::Option* output = app.get_option_no_throw("--output");
  CLI::App* resample = sim->add_subcommand(
      "resample", "print a resample of a pod list with another mix of work, as a pod list CSV");
  auto resample_flags = std::make_shared<sim::ResampleFlags>();
  resample->add_option("--nodes", resample_flags->nodes_path, "node list CSV (checks gpu_spec)")
      ->required();
  resample->add_option("--pods", resample_flags->pods_path, "pod list CSV to draw from")
      ->required();
  resample->add_option("--seed", resample_flags->seed, "random seed")->capture_default_str();
  const auto pct = [&](const char* flag, std::optional<double>& target, const char* what) {
    resample->add_option_function<double>(flag, [&target](double value) { target = value; }, what);
  };
  pct("--share", resample_flags->mix.share_pct,
      "% of GPU pods that share a GPU (default: as given)");
  pct("--multi", resample_flags->mix.multi_pct,
      "% of GPU pods with several GPUs (default: as given)");
  pct("--constrained", resample_flags->mix.constrained_pct,
      "% of GPU pods that name GPU models (default: as given)");
  resample
      ->add_option("--cpu-scale", resample_flags->mix.cpu_scale,
                   "every pod's CPU request times this, for CPU-bound mixes")
      ->capture_default_str();
  resample->callback([resample_flags, &action] {
    action = [resample_flags](cli::Session&) { return sim::run_resample(*resample_flags); };
  });
  CLI::App* run = sim->add_subcommand(
      "run", "run a billing scenario on virtual time and print balances and invoices");
  auto scenario_path = std::make_shared<std::string>();
  auto compare = std::make_shared<bool>(false);
  run->add_option("scenario", *scenario_path, "scenario JSON (docs/sim.md)")->required();
  run->add_flag("--compare-forecast", *compare,
                "run twice, without and with the pools' forecast, and print both");
  run->callback([scenario_path, compare, output, &action] {
    action = [scenario_path, compare, output](cli::Session&) {
      return sim::run_scenario_file(*scenario_path, output_mode(output), *compare);
    };
  });
  CLI::App* forecast = sim->add_subcommand(
      "forecast",
      "score the hourly demand forecast per GPU model against the naive one on a trace");
  auto forecast_flags = std::make_shared<sim::ForecastFlags>();
  forecast->add_option("--trace", forecast_flags->trace_path, "pod list CSV with creation_time")
      ->required();
  forecast->add_option("--holdout-days", forecast_flags->holdout_days, "last days held back")
      ->capture_default_str();
  forecast->add_flag("--json", forecast_flags->json, "print JSON (as -o json does)");
  forecast->callback([forecast_flags, output, &action] {
    action = [forecast_flags, output](cli::Session&) {
      return sim::run_forecast(*forecast_flags, output_mode(output));
    };
  });
  add_chaos_command(*sim, output, action);
  CLI::App* policies = sim->add_subcommand("policies", "the placement policies --policy takes");
  policies->callback([&action] {
    action = [](cli::Session&) {
      for (std::string_view name : sched::policy_names()) std::cout << name << "\n";
      return cli::kOk;
    };
  });
  replay->callback([flags, output, &action] {
    action = [flags, output](cli::Session&) {
      return sim::run_replay(*flags, output_mode(output));
    };
  });
}

}  // namespace allot::cli
