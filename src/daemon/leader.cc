#include "daemon/leader.h"

#include <chrono>
#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "daemon/bootstrap.h"
#include "daemon/data_dir.h"

namespace allot {
namespace {

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

ApiOptions api_options(const DaemonConfig& config, std::shared_ptr<const Sealer> sealer) {
  return ApiOptions{.stop_grace_ms = config.stop_grace_ms,
                    .preempt_grace_ms = config.preempt_grace_ms,
                    .default_image = config.default_image,
                    .templates = config.templates,
                    .sealer = std::move(sealer),
                    .long_poll_ms = std::max<int64_t>(1'000, config.heartbeat_timeout_ms / 2),
                    .heartbeat_interval_ms = config.heartbeat_interval_ms,
                    .web_dir = config.web_dir,
                    .webhook_allow = *AddressAllowList::parse(config.webhook_allow),
                    .max_volume_gb = config.max_volume_gb,
                    .nfs_regions = nfs_region_set(config),
                    .public_ports = config.public_ports,
                    .service_hold_ms = config.service_hold_ms,
                    .probe_interval_ms = config.service_probe_interval_ms,
                    .issuer = billing::Issuer{.legal_name = config.invoice_legal_name,
                                              .address = config.invoice_address,
                                              .tax_id = config.invoice_tax_id,
                                              .currency = *billing::find_currency(config.currency),
                                              .payment_terms_days = config.payment_terms_days}};
}

CoreOptions core_options(const DaemonConfig& config) {
  return CoreOptions{.heartbeat_timeout_ms = config.heartbeat_timeout_ms,
                     .rating_interval_ms = config.rating_interval_ms,
                     .runway_s = config.runway_s,
                     .heartbeat_interval_ms = config.heartbeat_interval_ms,
                     .max_active_per_tenant = config.max_active_instances_per_tenant,
                     .idle_min_window_s = config.idle_min_window_s,
                     .service_price_notice_ms = config.service_price_notice_s * 1000,
                     .spot_falls_back = config.spot_fallback == "on-demand",
                     .process_nodes_for_all = config.process_runtime_tenants == "all"};
}

}  // namespace

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

Leader::Leader(const DaemonConfig& config, Metrics& metrics, const Clock& clock,
               std::unique_ptr<sched::Policy> policy)
    : config_(config), metrics_(metrics), clock_(clock), scheduler_(std::move(policy)) {}

Result<std::unique_ptr<Leader>> Leader::open(const DaemonConfig& config, Metrics& metrics,
                                             const Clock& clock, std::optional<Fence> fence,
                                             const std::string& version) {
  std::vector<sched::AddedScore> added;
  if (config.scheduler_carbon_weight > 0) {
    added.push_back(
        {.plugin = "carbon", .weight = static_cast<double>(config.scheduler_carbon_weight)});
  }
  auto policy = sched::make_policy(config.scheduler_policy, added);
  if (!policy) return std::unexpected(policy.error());
  auto leader = std::make_unique<Leader>(config, metrics, clock, std::move(*policy));
  auto store = open_configured_store(config);
  if (!store) return std::unexpected(store.error());
  leader->store_ = std::move(*store);
  leader->store_->set_fence(fence);
  const auto load_start = std::chrono::steady_clock::now();
  auto rows = leader->store_->load();
  if (!rows) return std::unexpected(rows.error());
  const bool store_is_new = rows->empty();
  auto audit_seq = leader->store_->last_audit_seq();
  if (!audit_seq) return std::unexpected(audit_seq.error());
  leader->core_ = std::make_unique<Core>(core_options(config), &leader->timed_);
  Core& core = *leader->core_;
  core.restore(*rows);
  // The ledger is replayed from its journal and must sum to zero before anything is served.
  auto ledger = leader->store_->load_ledger();
  if (!ledger) {
    return fail(ErrorCode::kInternal,
                fmt::format("loading the ledger failed: {}", ledger.error().message));
  }
  if (auto ok = core.restore_ledger(std::move(*ledger)); !ok) {
    return fail(ErrorCode::kInternal, fmt::format("the ledger is broken: {}", ok.error().message));
  }
  const std::chrono::duration<double> loaded = std::chrono::steady_clock::now() - load_start;
  auto first_key =
      bootstrap(core, *leader->store_, leader->ids_, leader->clock_.now_ms(), config.admin_key);
  if (!first_key) return std::unexpected(first_key.error());
  leader->first_key_ = *first_key;
  if (auto ok = import_log_files(*leader->store_, std::filesystem::path(config.data_dir) / "logs");
      !ok) {
    return fail(ok.error().code, fmt::format("importing log files: {}", ok.error().message));
  }
  spdlog::info("msg=\"scheduler\" policy={} carbon_weight={}", leader->scheduler_.policy_name(),
               config.scheduler_carbon_weight);
  spdlog::info("msg=\"store open\" backend={} schema_version={} objects={} load_s={:.3f}",
               leader->store_->backend(), leader->store_->schema_version(), rows->size(),
               loaded.count());

  // Webhooks go out on their own thread with their own store connection, so that a slow
  // receiver never holds up the core.
  auto outbox = open_configured_store(config);
  if (!outbox) return std::unexpected(outbox.error());
  leader->outbox_ = std::move(*outbox);
  leader->outbox_->set_fence(std::move(fence));

  // Tenants' registry passwords are sealed with this key: a copy of the database without it
  // opens none of them. The data dir holds it whatever the store.
  auto sealer = open_secrets_key(config.data_dir, store_is_new, config.new_secrets_key);
  if (!sealer) {
    return fail(sealer.error().code, fmt::format("no secrets key: {}", sealer.error().message));
  }
  // The first tick must not count the time allotd was down against the nodes: their agents
  // could not report.
  core.resume(leader->clock_.now_ms());
  leader->service_ = std::make_unique<Service>(core, *leader->store_, leader->ids_, leader->clock_,
                                               *audit_seq, &metrics);
  leader->app_ =
      std::make_unique<App>(*leader->service_, version, metrics,
                            api_options(config, std::make_shared<const Sealer>(*sealer)));
  if (!config.web_dir.empty() &&
      !std::filesystem::is_regular_file(std::filesystem::path(config.web_dir) / "index.html")) {
    spdlog::warn("msg=\"no dashboard: index.html is missing\" web_dir=\"{}\"", config.web_dir);
  }
  return leader;
}

void Leader::start_timers(const std::string& url) {
  webhooks_ = std::make_unique<WebhookSender>(
      std::move(outbox_), clock_,
      WebhookOptions{.retry_base_ms = config_.webhook_retry_base_ms,
                     .retry_max_ms = config_.webhook_retry_max_ms,
                     .max_attempts = config_.webhook_max_attempts,
                     .allow = *AddressAllowList::parse(config_.webhook_allow)});
  // Timers are commands too: heartbeat deadlines, maximum run times, scheduling passes.
  ticker_ = std::thread([this] {
    while (!stopping_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      service_->submit(
          [](Context& ctx) {
            (void)ctx.apply(Tick{});
            return HttpResponse{};
          },
          [](const HttpResponse&) {});
    }
  });
  autoscaler_ = std::make_unique<Autoscaler>(
      *service_, providers_for(config_),
      AutoscalerOptions{.interval_ms = config_.autoscale_interval_ms,
                        .server_url = url,
                        .forecast = config_.forecast,
                        .forecast_lead_h = static_cast<int>(config_.forecast_lead_h),
                        .forecast_history_h = static_cast<int>(config_.forecast_history_h)});
  services_ = std::make_unique<ServiceController>(
      *service_, app_->traffic(),
      ServiceControllerOptions{.interval_ms = config_.service_interval_ms});
}

Leader::~Leader() {
  stopping_ = true;
  if (autoscaler_) autoscaler_->stop();
  if (services_) services_->stop();
  if (ticker_.joinable()) ticker_.join();
  if (webhooks_) webhooks_->stop();
  if (service_) service_->stop();
  // Gone before the App, whose service traffic they were told of: their destructors unhook
  // themselves from it.
  services_.reset();
  autoscaler_.reset();
  app_.reset();  // Its read threads answer what they hold while the service can still be read.
}

}  // namespace allot
