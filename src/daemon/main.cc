// allotd: wires the config, store, core, service, API and HTTP server together.
#include <sys/resource.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "api/app.h"
#include "api/http_server.h"
#include "common/signals.h"
#include "daemon/autoscaler.h"
#include "daemon/bootstrap.h"
#include "daemon/config.h"
#include "daemon/timed_scheduler.h"
#include "daemon/webhook.h"
#include "sched/core_scheduler.h"

#ifndef ALLOT_VERSION
#define ALLOT_VERSION "dev"
#endif

namespace allot {
namespace {

// Raises the descriptor limit to what the system allows and returns the HTTP server's settings,
// its connection cap kept below that limit: running out of descriptors would refuse agents too.
HttpServerOptions http_options(const DaemonConfig& config) {
  rlimit files{};
  int64_t descriptors = config.http_max_connections + limits::kReservedDescriptors;
  if (getrlimit(RLIMIT_NOFILE, &files) == 0) {
    const auto wanted = static_cast<rlim_t>(descriptors);
    files.rlim_cur = files.rlim_max == RLIM_INFINITY ? std::max(files.rlim_cur, wanted)
                                                     : std::max(files.rlim_cur, files.rlim_max);
    (void)setrlimit(RLIMIT_NOFILE, &files);
    if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY) {
      descriptors = std::min(descriptors, static_cast<int64_t>(files.rlim_cur));
    }
  }
  const int64_t cap = std::max<int64_t>(1, descriptors - limits::kReservedDescriptors);
  if (cap < config.http_max_connections) {
    spdlog::warn("msg=\"descriptor limit lowers the connection cap\" max_connections={}", cap);
  }
  return HttpServerOptions{.header_timeout_ms = config.http_header_timeout_ms,
                           .body_timeout_ms = config.http_body_timeout_ms,
                           .idle_timeout_ms = config.http_idle_timeout_ms,
                           .max_connections = std::min(cap, config.http_max_connections),
                           .max_connections_per_address = config.http_max_connections_per_address};
}

void setup_logging(const std::string& level) {
  auto logger = spdlog::stderr_logger_mt("allotd");
  logger->set_pattern("ts=%Y-%m-%dT%H:%M:%S.%eZ level=%l %v", spdlog::pattern_time_type::utc);
  logger->set_level(spdlog::level::from_str(level));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

Result<std::unique_ptr<Store>> open_configured_store(const DaemonConfig& config) {
  if (config.store == "postgres") return open_postgres_store(config.postgres_url);
  std::error_code ec;
  std::filesystem::create_directories(config.data_dir, ec);
  if (ec) {
    return fail(ErrorCode::kUnavailable,
                fmt::format("cannot create data dir {}: {}", config.data_dir, ec.message()));
  }
  return open_sqlite_store((std::filesystem::path(config.data_dir) / "allot.db").string());
}

// The allot-agent the local pool provider starts: the configured one, else the one installed
// beside allotd, else the one in the build tree's agent folder.
std::string local_agent_path(const DaemonConfig& config) {
  if (!config.local_agent_path.empty()) return config.local_agent_path;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
  for (const auto& candidate : {self / "allot-agent", self / ".." / "agent" / "allot-agent"}) {
    if (std::filesystem::exists(candidate, ec)) return candidate.lexically_normal().string();
  }
  return "allot-agent";
}

Providers providers_for(const DaemonConfig& config) {
  return Providers{{"command", std::make_shared<CommandProvider>(config.pool_command_timeout_ms)},
                   {"local", std::make_shared<LocalProvider>(
                                 local_agent_path(config),
                                 (std::filesystem::path(config.data_dir) / "pools").string())}};
}

int run(const DaemonConfig& config, const sigset_t& stop_signals) {
  setup_logging(config.log_level);
  std::vector<sched::AddedScore> added;
  if (config.scheduler_carbon_weight > 0) {
    added.push_back(
        {.plugin = "carbon", .weight = static_cast<double>(config.scheduler_carbon_weight)});
  }
  auto policy = sched::make_policy(config.scheduler_policy, added);
  if (!policy) {
    spdlog::critical("msg=\"bad scheduler policy\" error=\"{}\"", policy.error().message);
    return 2;
  }
  auto store = open_configured_store(config);
  if (!store) {
    spdlog::critical("msg=\"cannot open the store\" error=\"{}\"", store.error().message);
    return 1;
  }
  auto rows = (*store)->load();
  auto audit_seq = (*store)->last_audit_seq();
  if (!rows || !audit_seq) {
    spdlog::critical("msg=\"cannot load state\" error=\"{}\"",
                     rows ? audit_seq.error().message : rows.error().message);
    return 1;
  }
  sched::PolicyScheduler scheduler(std::move(*policy));
  Metrics metrics;
  TimedScheduler timed(scheduler, metrics);
  Core core(CoreOptions{.heartbeat_timeout_ms = config.heartbeat_timeout_ms,
                        .rating_interval_ms = config.rating_interval_ms,
                        .runway_s = config.runway_s,
                        .heartbeat_interval_ms = config.heartbeat_interval_ms,
                        .max_active_per_tenant = config.max_active_instances_per_tenant,
                        .idle_min_window_s = config.idle_min_window_s,
                        .spot_falls_back = config.spot_fallback == "on-demand",
                        .process_nodes_for_all = config.process_runtime_tenants == "all"},
            &timed);
  core.restore(*rows);
  // The ledger is replayed from its journal and must sum to zero before anything is served.
  auto ledger = (*store)->load_ledger();
  if (!ledger) {
    spdlog::critical("msg=\"loading the ledger failed\" error=\"{}\"", ledger.error().message);
    return 1;
  }
  if (auto ok = core.restore_ledger(std::move(*ledger)); !ok) {
    spdlog::critical("msg=\"the ledger is broken\" error=\"{}\"", ok.error().message);
    return 1;
  }
  SystemClock clock;
  RandomIdSource ids(clock);
  auto first_key = bootstrap(core, **store, ids, clock.now_ms(), config.admin_key);
  if (!first_key) {
    spdlog::critical("msg=\"bootstrap failed\" error=\"{}\"", first_key.error().message);
    return 1;
  }
  spdlog::info("msg=\"scheduler\" policy={} carbon_weight={}", scheduler.policy_name(),
               config.scheduler_carbon_weight);
  spdlog::info("msg=\"store open\" backend={} schema_version={} objects={}", (*store)->backend(),
               (*store)->schema_version(), rows->size());

  // Webhooks go out on their own thread with their own store connection, so that a slow
  // receiver never holds up the core.
  auto outbox = open_configured_store(config);
  if (!outbox) {
    spdlog::critical("msg=\"cannot open the store\" error=\"{}\"", outbox.error().message);
    return 1;
  }
  // Checked when the settings were read.
  const AddressAllowList webhook_allow = *AddressAllowList::parse(config.webhook_allow);
  WebhookSender webhooks(std::move(*outbox), clock,
                         WebhookOptions{.retry_base_ms = config.webhook_retry_base_ms,
                                        .retry_max_ms = config.webhook_retry_max_ms,
                                        .max_attempts = config.webhook_max_attempts,
                                        .allow = webhook_allow});

  // The first tick must not count the time allotd was down against the nodes: their agents
  // could not report.
  core.resume(clock.now_ms());
  Service service(core, **store, ids, clock, *audit_seq, &metrics);
  LogStore logs(std::filesystem::path(config.data_dir) / "logs");
  // Tenants' registry passwords are sealed with this key: a copy of the database without it
  // opens none of them.
  // The data dir holds it whatever the store (PostgreSQL keeps nothing else there).
  std::error_code made;
  std::filesystem::create_directories(config.data_dir, made);
  auto sealer =
      Sealer::open_key_file((std::filesystem::path(config.data_dir) / "secrets.key").string());
  if (!sealer) {
    spdlog::critical("msg=\"no secrets key\" error=\"{}\"", sealer.error().message);
    return 1;
  }
  App app(service, ALLOT_VERSION, logs, metrics,
          ApiOptions{.stop_grace_ms = config.stop_grace_ms,
                     .preempt_grace_ms = config.preempt_grace_ms,
                     .default_image = config.default_image,
                     .templates = config.templates,
                     .sealer = std::make_shared<const Sealer>(*sealer),
                     .long_poll_ms = std::max<int64_t>(1'000, config.heartbeat_timeout_ms / 2),
                     .heartbeat_interval_ms = config.heartbeat_interval_ms,
                     .web_dir = config.web_dir,
                     .webhook_allow = webhook_allow,
                     .max_volume_gb = config.max_volume_gb,
                     .nfs_regions = nfs_region_set(config),
                     .public_ports = config.public_ports,
                     .issuer = billing::Issuer{.legal_name = config.invoice_legal_name,
                                               .address = config.invoice_address,
                                               .tax_id = config.invoice_tax_id,
                                               .currency = *billing::find_currency(config.currency),
                                               .payment_terms_days = config.payment_terms_days}});
  if (!config.web_dir.empty() &&
      !std::filesystem::is_regular_file(std::filesystem::path(config.web_dir) / "index.html")) {
    spdlog::warn("msg=\"no dashboard: index.html is missing\" web_dir=\"{}\"", config.web_dir);
  }
  auto server = HttpServer::bind(
      config.listen_host, config.listen_port,
      [&app](HttpRequest request, Responder respond) {
        app.handle(std::move(request), std::move(respond));
      },
      http_options(config));
  if (!server) {
    spdlog::critical("msg=\"cannot listen\" error=\"{}\"", server.error().message);
    return 1;
  }
  const std::string url = fmt::format("http://{}:{}", config.listen_host, (*server)->port());
  if (*first_key) {
    // Shown once: only its hash is kept.
    std::fprintf(stdout, "operator admin key (shown once): %s\n", (*first_key)->c_str());
  }
  std::fprintf(stdout, "allotd %s listening on %s\n", ALLOT_VERSION, url.c_str());
  std::fflush(stdout);
  if (!config.port_file.empty()) {
    const std::string temp = config.port_file + ".tmp";
    std::ofstream(temp) << (*server)->port() << "\n";
    std::filesystem::rename(temp, config.port_file);
  }

  // SIGTERM and SIGINT are blocked in every thread and taken by this one, which asks the server to
  // finish what is in flight.
  // Timers are commands too: heartbeat deadlines, maximum run times, scheduling passes.
  std::atomic<bool> stopping{false};
  std::thread ticker([&service, &stopping] {
    while (!stopping) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      service.submit(
          [](Context& ctx) {
            (void)ctx.apply(Tick{});
            return HttpResponse{};
          },
          [](const HttpResponse&) {});
    }
  });
  Autoscaler autoscaler(
      service, providers_for(config),
      AutoscalerOptions{.interval_ms = config.autoscale_interval_ms,
                        .server_url = url,
                        .forecast = config.forecast,
                        .forecast_lead_h = static_cast<int>(config.forecast_lead_h),
                        .forecast_history_h = static_cast<int>(config.forecast_history_h)});
  std::thread signals([&server, &service, &stopping, &stop_signals] {
    const int signal = wait_for_stop_signal(stop_signals);
    spdlog::info("msg=\"stopping\" signal={}", signal);
    stopping = true;
    service.release_parked();
    (*server)->stop();
  });
  (*server)->run();
  signals.join();
  autoscaler.stop();
  ticker.join();
  webhooks.stop();
  service.stop();
  spdlog::info("msg=\"stopped\"");
  return 0;
}

}  // namespace
}  // namespace allot

int main(int argc, char** argv) {
  const sigset_t stop_signals = allot::block_stop_signals();

  const std::vector<std::string> args(argv, argv + argc);
  bool help = false;
  auto config = allot::load_daemon_config(args, std::getenv, help);
  if (!config) {
    std::fprintf(help ? stdout : stderr, "%s\n", config.error().message.c_str());
    return help ? 0 : 2;
  }
  return allot::run(*config, stop_signals);
}
