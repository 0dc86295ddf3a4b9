#include "daemon/config.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <deque>
#include <optional>

#include <fmt/format.h>
#include <toml++/toml.h>
#include <CLI/CLI.hpp>
#include <boost/algorithm/string/case_conv.hpp>

#include "common/address_policy.h"
#include "common/image_ref.h"
#include "common/limits.h"
#include "core/kernel/validate.h"
#include "daemon/templates_config.h"
#include "reports/currency.h"

namespace allot {
namespace {

Status set_listen(DaemonConfig& config, std::string_view text, std::string_view source) {
  const size_t colon = text.rfind(':');
  unsigned port = 0;
  const char* end = text.data() + text.size();
  if (colon == std::string_view::npos ||
      std::from_chars(text.data() + colon + 1, end, port).ptr != end || port > 65535 ||
      colon == 0) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("{}: listen must be HOST:PORT, not '{}'", source, text));
  }
  config.listen_host = std::string(text.substr(0, colon));
  config.listen_port = static_cast<uint16_t>(port);
  return {};
}

// "http://HOST:PORT", a port from 1 to 65535 and nothing after it.
bool is_http_base_url(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  if (!url.starts_with(kScheme)) return false;
  url.remove_prefix(kScheme.size());
  const size_t colon = url.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || url.find('/') != std::string_view::npos) {
    return false;
  }
  const std::string_view digits = url.substr(colon + 1);
  if (digits.empty() || digits.size() > 5 ||
      !std::ranges::all_of(digits, [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  const int port = std::stoi(std::string(digits));
  return port > 0 && port <= 65535;
}

Status check(const DaemonConfig& config) {
  for (const std::string& region : nfs_region_set(config)) {
    if (!is_plain_name(region, limits::kMaxVolumeName)) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("nfs_regions: '{}' is not a region's name", region));
    }
  }
  if (config.store != "sqlite" && config.store != "postgres") {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("store must be sqlite or postgres, not '{}'", config.store));
  }
  if (config.store == "postgres" && config.postgres_url.empty()) {
    return fail(ErrorCode::kInvalidArgument, "store = postgres needs postgres_url");
  }
  if (!config.advertise_url.empty()) {
    if (config.store != "postgres") {
      return fail(ErrorCode::kInvalidArgument,
                  "advertise_url makes replicas of one PostgreSQL database: it needs store = "
                  "postgres (SQLite runs a single allotd)");
    }
    if (config.listen_port == 0) {
      return fail(ErrorCode::kInvalidArgument,
                  "a replica listens on a fixed port (its advertise_url names it), not port 0");
    }
    if (!is_http_base_url(config.advertise_url)) {
      return fail(
          ErrorCode::kInvalidArgument,
          fmt::format("advertise_url must be http://HOST:PORT, not '{}'", config.advertise_url));
    }
  }
  // A node is lost after missing at least one report: a timeout of one interval or less would
  // lose healthy nodes between their reports. (Halving the timeout, not doubling the interval,
  // which may overflow: both are at least 1.)
  if (config.heartbeat_timeout_ms / 2 < config.heartbeat_interval_ms) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("heartbeat_timeout_ms ({}) must be at least twice "
                            "heartbeat_interval_ms ({})",
                            config.heartbeat_timeout_ms, config.heartbeat_interval_ms));
  }
  if (config.lease_ms < 1'000 || config.lease_ms > 600'000) {
    return fail(ErrorCode::kInvalidArgument, "lease_ms must be 1000 to 600000");
  }
  if (config.forecast_lead_h > limits::kMaxForecastLeadH) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("forecast_lead_h must be at most {}", limits::kMaxForecastLeadH));
  }
  if (config.forecast_history_h < 48 || config.forecast_history_h > limits::kMaxForecastHistoryH) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("forecast_history_h must be 48 to {}", limits::kMaxForecastHistoryH));
  }
  if (!billing::find_currency(config.currency)) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("currency must be an ISO 4217 code in capitals such as USD, EUR or "
                            "JPY, not '{}'",
                            config.currency));
  }
  if (config.spot_fallback != "none" && config.spot_fallback != "on-demand") {
    return fail(
        ErrorCode::kInvalidArgument,
        fmt::format("spot_fallback must be none or on-demand, not '{}'", config.spot_fallback));
  }
  if (config.process_runtime_tenants != "operator" && config.process_runtime_tenants != "all") {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("process_runtime_tenants must be operator or all, not '{}'",
                            config.process_runtime_tenants));
  }
  if (!config.default_image.empty()) {
    if (auto image = parse_image_ref(config.default_image); !image) {
      return fail(ErrorCode::kInvalidArgument, "default_image: " + image.error().message);
    }
  }
  if (config.payment_terms_days > limits::kMaxPaymentTermsDays) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("payment_terms_days must be at most {}", limits::kMaxPaymentTermsDays));
  }
  if (config.max_active_instances_per_tenant > limits::kMaxActiveInstancesPerTenant) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("max_active_instances_per_tenant must be at most {}",
                            limits::kMaxActiveInstancesPerTenant));
  }
  if (config.service_price_notice_s > int64_t{90} * 86'400) {
    return fail(ErrorCode::kInvalidArgument, "service_price_notice_s must be at most 90 days");
  }
  if (config.idle_min_window_s > limits::kMaxIdleWindowS) {
    return fail(
        ErrorCode::kInvalidArgument,
        fmt::format("idle_min_window_s must be at most {} (a week)", limits::kMaxIdleWindowS));
  }
  if (auto allow = AddressAllowList::parse(config.webhook_allow); !allow) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("webhook_allow: {}", allow.error().message));
  }
  for (std::string_view level : {"trace", "debug", "info", "warn", "error"}) {
    if (config.log_level == level) return {};
  }
  return fail(ErrorCode::kInvalidArgument,
              fmt::format("log_level must be trace, debug, info, warn or error, not '{}'",
                          config.log_level));
}

// The HTTP server's settings, each also a flag of the same name in dashes.
struct FlagHelp {
  const char* name;
  const char* help;
};
constexpr std::array<FlagHelp, 5> kHttpSettings = {{
    {"http_header_timeout_ms", "time a client has to send a request's header (default 10000)"},
    {"http_body_timeout_ms", "time a client has to send a request's body (default 30000)"},
    {"http_idle_timeout_ms", "an idle kept-alive connection is closed after this (default 60000)"},
    {"http_max_connections", "HTTP connections open at once (default 10000)"},
    {"http_max_connections_per_address", "HTTP connections one address may hold (default 256)"},
}};

// A whole-number setting and the least it may be: durations and counts are positive, while a
// weight may be 0 (the plugin is off). Listed in the order the environment is read.
struct WholeSetting {
  const char* name;
  int64_t DaemonConfig::* field;
  int64_t least = 1;
};
constexpr std::array<WholeSetting, 28> kWholeSettings = {{
    {"lease_ms", &DaemonConfig::lease_ms},
    {"heartbeat_interval_ms", &DaemonConfig::heartbeat_interval_ms},
    {"heartbeat_timeout_ms", &DaemonConfig::heartbeat_timeout_ms},
    {"stop_grace_ms", &DaemonConfig::stop_grace_ms},
    {"preempt_grace_ms", &DaemonConfig::preempt_grace_ms},
    {"rating_interval_ms", &DaemonConfig::rating_interval_ms},
    {"runway_s", &DaemonConfig::runway_s},
    {"webhook_retry_base_ms", &DaemonConfig::webhook_retry_base_ms},
    {"webhook_retry_max_ms", &DaemonConfig::webhook_retry_max_ms},
    {"webhook_max_attempts", &DaemonConfig::webhook_max_attempts},
    {"scheduler_carbon_weight", &DaemonConfig::scheduler_carbon_weight, 0},
    {"autoscale_interval_ms", &DaemonConfig::autoscale_interval_ms},
    {"service_interval_ms", &DaemonConfig::service_interval_ms},
    {"service_probe_interval_ms", &DaemonConfig::service_probe_interval_ms},
    {"service_hold_ms", &DaemonConfig::service_hold_ms},
    {"pool_command_timeout_ms", &DaemonConfig::pool_command_timeout_ms},
    {"idle_min_window_s", &DaemonConfig::idle_min_window_s},
    {"service_price_notice_s", &DaemonConfig::service_price_notice_s},
    {"max_active_instances_per_tenant", &DaemonConfig::max_active_instances_per_tenant},
    {"forecast_lead_h", &DaemonConfig::forecast_lead_h},
    {"forecast_history_h", &DaemonConfig::forecast_history_h},
    {"http_header_timeout_ms", &DaemonConfig::http_header_timeout_ms},
    {"http_body_timeout_ms", &DaemonConfig::http_body_timeout_ms},
    {"http_idle_timeout_ms", &DaemonConfig::http_idle_timeout_ms},
    {"http_max_connections", &DaemonConfig::http_max_connections},
    {"http_max_connections_per_address", &DaemonConfig::http_max_connections_per_address},
    {"payment_terms_days", &DaemonConfig::payment_terms_days, 0},  // 0: due on issue.
    {"max_volume_gb", &DaemonConfig::max_volume_gb},
}};

const WholeSetting* whole_setting(std::string_view name) {
  const auto it = std::ranges::find(kWholeSettings, name, &WholeSetting::name);
  return it == kWholeSettings.end() ? nullptr : &*it;
}

std::string whole_wanted(int64_t least) {
  return least > 0 ? "a positive whole number" : "a whole number, 0 or more";
}

// The settings that are free text, each read from the file and from ALLOT_ and its name in
// capitals (the store, log level, currency code and spot fallback are checked after).
struct TextSetting {
  const char* name;
  std::string DaemonConfig::* field;
};
constexpr std::array<TextSetting, 17> kTextSettings = {{
    {"advertise_url", &DaemonConfig::advertise_url},
    {"data_dir", &DaemonConfig::data_dir},
    {"store", &DaemonConfig::store},
    {"postgres_url", &DaemonConfig::postgres_url},
    {"log_level", &DaemonConfig::log_level},
    {"scheduler_policy", &DaemonConfig::scheduler_policy},
    {"local_agent_path", &DaemonConfig::local_agent_path},
    {"web_dir", &DaemonConfig::web_dir},
    {"webhook_allow", &DaemonConfig::webhook_allow},
    {"invoice_legal_name", &DaemonConfig::invoice_legal_name},
    {"invoice_address", &DaemonConfig::invoice_address},
    {"invoice_tax_id", &DaemonConfig::invoice_tax_id},
    {"currency", &DaemonConfig::currency},
    {"spot_fallback", &DaemonConfig::spot_fallback},
    {"default_image", &DaemonConfig::default_image},
    {"process_runtime_tenants", &DaemonConfig::process_runtime_tenants},
    {"nfs_regions", &DaemonConfig::nfs_regions},
}};

// The settings that are true or false, read like the others.
struct BoolSetting {
  const char* name;
  bool DaemonConfig::* field;
};
constexpr std::array<BoolSetting, 2> kBoolSettings = {{
    {"forecast", &DaemonConfig::forecast},
    {"public_ports", &DaemonConfig::public_ports},
}};

const BoolSetting* bool_setting(std::string_view name) {
  const auto it = std::ranges::find(kBoolSettings, name, &BoolSetting::name);
  return it == kBoolSettings.end() ? nullptr : &*it;
}

// ALLOT_ and a setting's name in capitals.
std::string env_name(std::string_view name) {
  return "ALLOT_" + boost::algorithm::to_upper_copy(std::string(name));
}

Status apply_file(DaemonConfig& config, const std::string& path) {
  toml::table table;
  try {
    table = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("{}:{}: {}", path, e.source().begin.line, e.description()));
  }
  for (const auto& [key, node] : table) {
    const std::string name(key.str());
    if (const WholeSetting* setting = whole_setting(name); setting != nullptr) {
      const auto number = node.value<int64_t>();
      if (!number || *number < setting->least) {
        return fail(ErrorCode::kInvalidArgument,
                    fmt::format("{}: '{}' must be {}", path, name, whole_wanted(setting->least)));
      }
      config.*setting->field = *number;
      continue;
    }
    if (const auto* setting = bool_setting(name)) {
      const auto flag = node.value<bool>();
      if (!flag) {
        return fail(ErrorCode::kInvalidArgument,
                    fmt::format("{}: '{}' must be true or false", path, name));
      }
      config.*setting->field = *flag;
      continue;
    }
    if (name == "templates") {
      auto templates = read_templates(node, path);
      if (!templates) return std::unexpected(templates.error());
      config.templates = std::move(*templates);
      continue;
    }
    const auto text = node.value<std::string>();
    if (!text) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("{}: '{}' must be a string", path, name));
    }
    const auto setting = std::ranges::find(kTextSettings, name, &TextSetting::name);
    if (name == "listen") {
      if (auto ok = set_listen(config, *text, path); !ok) return ok;
    } else if (setting != kTextSettings.end()) {
      config.*setting->field = *text;
    } else {
      return fail(ErrorCode::kInvalidArgument, fmt::format("{}: unknown setting '{}'", path, name));
    }
  }
  return {};
}

Status apply_env(DaemonConfig& config, const GetEnv& getenv) {
  auto read = [&](const std::string& variable, std::string& field) {
    if (const char* value = getenv(variable.c_str()); value != nullptr && *value != '\0') {
      field = value;
    }
  };
  if (const char* listen = getenv("ALLOT_LISTEN"); listen != nullptr && *listen != '\0') {
    if (auto ok = set_listen(config, listen, "ALLOT_LISTEN"); !ok) return ok;
  }
  for (const TextSetting& setting : kTextSettings) {
    read(env_name(setting.name), config.*setting.field);
  }
  read("ALLOT_ADMIN_KEY", config.admin_key);
  for (const BoolSetting& setting : kBoolSettings) {
    const std::string variable = env_name(setting.name);
    const char* value = getenv(variable.c_str());
    if (value == nullptr || *value == '\0') continue;
    const std::string_view text = value;
    if (text != "true" && text != "false") {
      return fail(ErrorCode::kInvalidArgument, variable + " must be true or false");
    }
    config.*setting.field = text == "true";
  }
  for (const WholeSetting& setting : kWholeSettings) {
    const std::string variable = env_name(setting.name);
    const char* value = getenv(variable.c_str());
    if (value == nullptr || *value == '\0') continue;
    int64_t number = 0;
    const char* end = value + std::strlen(value);
    if (std::from_chars(value, end, number).ptr != end || number < setting.least) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("{} must be {}", variable, whole_wanted(setting.least)));
    }
    config.*setting.field = number;
  }
  return {};
}

}  // namespace

Result<DaemonConfig> load_daemon_config(const std::vector<std::string>& args, const GetEnv& getenv,
                                        bool& help) {
  help = false;
  CLI::App cli{"allotd: the Allot controller"};
  std::string config_path;
  // Flags override the file and the environment, so each is held until both are read. Deques
  // keep the values where CLI11 was told they are as more flags are added.
  std::deque<std::pair<std::string DaemonConfig::*, std::optional<std::string>>> text_flags;
  std::deque<std::pair<int64_t DaemonConfig::*, std::optional<int64_t>>> whole_flags;
  const auto text_flag = [&](const std::string& flag, std::string DaemonConfig::* field,
                             const std::string& description) {
    cli.add_option(flag, text_flags.emplace_back(field, std::nullopt).second, description);
  };
  const auto whole_flag = [&](const std::string& flag, int64_t DaemonConfig::* field,
                              const std::string& description,
                              const CLI::Validator& least = CLI::PositiveNumber) {
    cli.add_option(flag, whole_flags.emplace_back(field, std::nullopt).second, description)
        ->check(least);
  };
  std::optional<std::string> listen;
  cli.add_option("-c,--config", config_path, "TOML file of settings")->check(CLI::ExistingFile);
  cli.add_option("--listen", listen, "HOST:PORT to serve on (port 0: any free port)");
  text_flag("--data-dir", &DaemonConfig::data_dir, "directory for the SQLite database");
  text_flag("--store", &DaemonConfig::store, "sqlite (default) or postgres");
  text_flag("--postgres-url", &DaemonConfig::postgres_url,
            "libpq connection URL or key=value string (several hosts for a standby's promotion)");
  text_flag("--advertise-url", &DaemonConfig::advertise_url,
            "run as one of several replicas (PostgreSQL): the URL clients reach this one at");
  whole_flag("--lease-ms", &DaemonConfig::lease_ms, "the leader's lease among replicas");
  text_flag("--log-level", &DaemonConfig::log_level, "trace, debug, info, warn or error");
  text_flag("--port-file", &DaemonConfig::port_file, "write the bound port to this file");
  text_flag("--scheduler-policy", &DaemonConfig::scheduler_policy,
            "placement policy (default allot)");
  whole_flag("--scheduler-carbon-weight", &DaemonConfig::scheduler_carbon_weight,
             "weight of the carbon score plugin (default 0: off)", CLI::NonNegativeNumber);
  whole_flag("--heartbeat-interval-ms", &DaemonConfig::heartbeat_interval_ms,
             "how often agents report");
  whole_flag("--heartbeat-timeout-ms", &DaemonConfig::heartbeat_timeout_ms,
             "silence after which a node is lost");
  whole_flag("--stop-grace-ms", &DaemonConfig::stop_grace_ms,
             "SIGTERM to SIGKILL for stopped instances");
  whole_flag("--preempt-grace-ms", &DaemonConfig::preempt_grace_ms,
             "SIGTERM to SIGKILL for preempted spot work (its stop notice's deadline)");
  whole_flag("--rating-interval-ms", &DaemonConfig::rating_interval_ms,
             "how often running work's usage is posted");
  whole_flag("--runway-s", &DaemonConfig::runway_s,
             "seconds of charge a bounded tenant's work holds ahead");
  whole_flag("--webhook-retry-base-ms", &DaemonConfig::webhook_retry_base_ms,
             "first wait before a webhook retry");
  whole_flag("--webhook-retry-max-ms", &DaemonConfig::webhook_retry_max_ms,
             "longest wait between webhook attempts");
  whole_flag("--webhook-max-attempts", &DaemonConfig::webhook_max_attempts,
             "attempts before a webhook is given up");
  text_flag("--webhook-allow", &DaemonConfig::webhook_allow,
            "internal CIDR ranges tenants' webhooks may reach, e.g. 10.20.0.0/16");
  whole_flag("--autoscale-interval-ms", &DaemonConfig::autoscale_interval_ms,
             "how often the autoscaler decides");
  whole_flag("--service-interval-ms", &DaemonConfig::service_interval_ms,
             "how often the service controller decides");
  whole_flag("--service-probe-interval-ms", &DaemonConfig::service_probe_interval_ms,
             "how often each running service replica's readiness is probed");
  whole_flag("--service-hold-ms", &DaemonConfig::service_hold_ms,
             "how long a request to a service waits for a replica to be ready");
  whole_flag("--pool-command-timeout-ms", &DaemonConfig::pool_command_timeout_ms,
             "how long a pool's create or delete command may run");
  text_flag("--local-agent-path", &DaemonConfig::local_agent_path,
            "allot-agent for the local pool provider");
  whole_flag("--service-price-notice-s", &DaemonConfig::service_price_notice_s,
             "how long after its callers are told a shared service's price rise reaches them "
             "(default 86400)");
  whole_flag("--idle-min-window-s", &DaemonConfig::idle_min_window_s,
             "the shortest idle-stop window a policy may have (default 60)");
  whole_flag("--max-active-instances-per-tenant", &DaemonConfig::max_active_instances_per_tenant,
             "instances one tenant may have queued or running at once (default 10000)");
  text_flag("--web-dir", &DaemonConfig::web_dir, "the built dashboard to serve at / (web/dist)");
  text_flag("--currency", &DaemonConfig::currency,
            "the deployment's currency, ISO 4217 (default USD)");
  text_flag("--spot-fallback", &DaemonConfig::spot_fallback,
            "spot work where no spot price is set: none (not placed) or on-demand");
  text_flag("--default-image", &DaemonConfig::default_image,
            "the image of launches that name none");
  whole_flag("--max-volume-gb", &DaemonConfig::max_volume_gb,
             "the largest volume a tenant may create, in GB (default 10000)");
  text_flag("--nfs-regions", &DaemonConfig::nfs_regions,
            "regions whose nodes mount an NFS export for nfs volumes, e.g. eu,us");
  text_flag("--process-runtime-tenants", &DaemonConfig::process_runtime_tenants,
            "who may run on process-runtime nodes: operator (default) or all");
  std::optional<bool> forecast;
  cli.add_option("--forecast", forecast, "pre-scale pools from the demand forecast (default true)");
  std::optional<bool> public_ports;
  cli.add_option("--public-ports", public_ports,
                 "whether tenants may publish ports reachable without a key (default true)");
  bool new_secrets_key = false;
  cli.add_flag("--new-secrets-key", new_secrets_key,
               "make a new secrets.key when it is missing beside a store that holds data (the "
               "registry passwords sealed with the lost one must be entered again)");
  whole_flag("--forecast-lead-h", &DaemonConfig::forecast_lead_h,
             "hours ahead the pools are grown for (default 2)");
  whole_flag("--forecast-history-h", &DaemonConfig::forecast_history_h,
             "hours of demand history used (default 336)");
  for (const FlagHelp& setting : kHttpSettings) {
    std::string flag = "--" + std::string(setting.name);
    std::replace(flag.begin(), flag.end(), '_', '-');
    whole_flag(flag, whole_setting(setting.name)->field, setting.help);
  }
  std::vector<const char*> argv;
  argv.reserve(args.size());
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  try {
    cli.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::CallForHelp&) {
    help = true;
    return fail(ErrorCode::kInvalidArgument, cli.help());
  } catch (const CLI::ParseError& e) {
    return fail(ErrorCode::kInvalidArgument, e.what());
  }
  DaemonConfig config;
  if (!config_path.empty()) {
    if (auto ok = apply_file(config, config_path); !ok) return std::unexpected(ok.error());
  }
  if (auto ok = apply_env(config, getenv); !ok) return std::unexpected(ok.error());
  if (listen) {
    if (auto ok = set_listen(config, *listen, "--listen"); !ok) {
      return std::unexpected(ok.error());
    }
  }
  for (const auto& [field, value] : text_flags) {
    if (value) config.*field = *value;
  }
  for (const auto& [field, value] : whole_flags) {
    if (value) config.*field = *value;
  }
  if (forecast) config.forecast = *forecast;
  if (public_ports) config.public_ports = *public_ports;
  config.new_secrets_key = new_secrets_key;
  if (auto ok = check(config); !ok) return std::unexpected(ok.error());
  return config;
}

std::set<std::string> nfs_region_set(const DaemonConfig& config) {
  std::set<std::string> out;
  std::string region;
  for (const char c : config.nfs_regions + ",") {
    if (c == ',' || c == ' ') {
      if (!region.empty()) out.insert(region);
      region.clear();
    } else {
      region += c;
    }
  }
  return out;
}

}  // namespace allot
