#include "daemon/config.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstring>
#include <optional>

#include <fmt/format.h>
#include <toml++/toml.h>
#include <CLI/CLI.hpp>

#include "common/address_policy.h"
#include "common/image_ref.h"
#include "common/limits.h"
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

Status check(const DaemonConfig& config) {
  if (config.store != "sqlite" && config.store != "postgres") {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("store must be sqlite or postgres, not '{}'", config.store));
  }
  if (config.store == "postgres" && config.postgres_url.empty()) {
    return fail(ErrorCode::kInvalidArgument, "store = postgres needs postgres_url");
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

// The settings that are positive whole numbers (durations and counts), by name, or null.
int64_t* duration_field(DaemonConfig& config, std::string_view name) {
  if (name == "heartbeat_interval_ms") return &config.heartbeat_interval_ms;
  if (name == "heartbeat_timeout_ms") return &config.heartbeat_timeout_ms;
  if (name == "stop_grace_ms") return &config.stop_grace_ms;
  if (name == "rating_interval_ms") return &config.rating_interval_ms;
  if (name == "runway_s") return &config.runway_s;
  if (name == "webhook_retry_base_ms") return &config.webhook_retry_base_ms;
  if (name == "webhook_retry_max_ms") return &config.webhook_retry_max_ms;
  if (name == "webhook_max_attempts") return &config.webhook_max_attempts;
  if (name == "autoscale_interval_ms") return &config.autoscale_interval_ms;
  if (name == "pool_command_timeout_ms") return &config.pool_command_timeout_ms;
  if (name == "idle_min_window_s") return &config.idle_min_window_s;
  if (name == "forecast_lead_h") return &config.forecast_lead_h;
  if (name == "forecast_history_h") return &config.forecast_history_h;
  if (name == "http_header_timeout_ms") return &config.http_header_timeout_ms;
  if (name == "http_body_timeout_ms") return &config.http_body_timeout_ms;
  if (name == "http_idle_timeout_ms") return &config.http_idle_timeout_ms;
  if (name == "http_max_connections") return &config.http_max_connections;
  if (name == "http_max_connections_per_address") return &config.http_max_connections_per_address;
  return nullptr;
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
// weight may be 0 (the plugin is off).
struct WholeSetting {
  int64_t* field = nullptr;
  int64_t least = 1;
};

WholeSetting whole_setting(DaemonConfig& config, std::string_view name) {
  if (name == "scheduler_carbon_weight") return {&config.scheduler_carbon_weight, 0};
  // 0: due on issue.
  if (name == "payment_terms_days") return {&config.payment_terms_days, 0};
  return {duration_field(config, name), 1};
}

std::string whole_wanted(int64_t least) {
  return least > 0 ? "a positive whole number" : "a whole number, 0 or more";
}

// The invoice settings that are free text (and the currency code and spot fallback, checked
// after), by name.
std::string* text_setting(DaemonConfig& config, std::string_view name) {
  if (name == "invoice_legal_name") return &config.invoice_legal_name;
  if (name == "invoice_address") return &config.invoice_address;
  if (name == "invoice_tax_id") return &config.invoice_tax_id;
  if (name == "currency") return &config.currency;
  if (name == "spot_fallback") return &config.spot_fallback;
  if (name == "default_image") return &config.default_image;
  if (name == "process_runtime_tenants") return &config.process_runtime_tenants;
  return nullptr;
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
    if (const WholeSetting setting = whole_setting(config, name); setting.field != nullptr) {
      const auto number = node.value<int64_t>();
      if (!number || *number < setting.least) {
        return fail(ErrorCode::kInvalidArgument,
                    fmt::format("{}: '{}' must be {}", path, name, whole_wanted(setting.least)));
      }
      *setting.field = *number;
      continue;
    }
    if (name == "forecast") {
      const auto flag = node.value<bool>();
      if (!flag) {
        return fail(ErrorCode::kInvalidArgument,
                    fmt::format("{}: 'forecast' must be true or false", path));
      }
      config.forecast = *flag;
      continue;
    }
    const auto text = node.value<std::string>();
    if (!text) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("{}: '{}' must be a string", path, name));
    }
    if (name == "listen") {
      if (auto ok = set_listen(config, *text, path); !ok) return ok;
    } else if (name == "data_dir") {
      config.data_dir = *text;
    } else if (name == "store") {
      config.store = *text;
    } else if (name == "postgres_url") {
      config.postgres_url = *text;
    } else if (name == "log_level") {
      config.log_level = *text;
    } else if (name == "scheduler_policy") {
      config.scheduler_policy = *text;
    } else if (name == "local_agent_path") {
      config.local_agent_path = *text;
    } else if (name == "web_dir") {
      config.web_dir = *text;
    } else if (name == "webhook_allow") {
      config.webhook_allow = *text;
    } else if (std::string* field = text_setting(config, name); field != nullptr) {
      *field = *text;
    } else {
      return fail(ErrorCode::kInvalidArgument, fmt::format("{}: unknown setting '{}'", path, name));
    }
  }
  return {};
}

Status apply_env(DaemonConfig& config, const GetEnv& getenv) {
  auto read = [&](const char* name, std::string& field) {
    if (const char* value = getenv(name); value != nullptr && *value != '\0') field = value;
  };
  if (const char* listen = getenv("ALLOT_LISTEN"); listen != nullptr && *listen != '\0') {
    if (auto ok = set_listen(config, listen, "ALLOT_LISTEN"); !ok) return ok;
  }
  read("ALLOT_DATA_DIR", config.data_dir);
  read("ALLOT_STORE", config.store);
  read("ALLOT_POSTGRES_URL", config.postgres_url);
  read("ALLOT_LOG_LEVEL", config.log_level);
  read("ALLOT_SCHEDULER_POLICY", config.scheduler_policy);
  read("ALLOT_ADMIN_KEY", config.admin_key);
  read("ALLOT_LOCAL_AGENT_PATH", config.local_agent_path);
  read("ALLOT_WEB_DIR", config.web_dir);
  read("ALLOT_WEBHOOK_ALLOW", config.webhook_allow);
  read("ALLOT_INVOICE_LEGAL_NAME", config.invoice_legal_name);
  read("ALLOT_INVOICE_ADDRESS", config.invoice_address);
  read("ALLOT_INVOICE_TAX_ID", config.invoice_tax_id);
  read("ALLOT_CURRENCY", config.currency);
  read("ALLOT_SPOT_FALLBACK", config.spot_fallback);
  read("ALLOT_DEFAULT_IMAGE", config.default_image);
  read("ALLOT_PROCESS_RUNTIME_TENANTS", config.process_runtime_tenants);
  if (const char* value = getenv("ALLOT_FORECAST"); value != nullptr && *value != '\0') {
    const std::string_view text = value;
    if (text != "true" && text != "false") {
      return fail(ErrorCode::kInvalidArgument, "ALLOT_FORECAST must be true or false");
    }
    config.forecast = text == "true";
  }
  for (const char* name : {"heartbeat_interval_ms",
                           "heartbeat_timeout_ms",
                           "stop_grace_ms",
                           "rating_interval_ms",
                           "runway_s",
                           "webhook_retry_base_ms",
                           "webhook_retry_max_ms",
                           "webhook_max_attempts",
                           "scheduler_carbon_weight",
                           "autoscale_interval_ms",
                           "pool_command_timeout_ms",
                           "idle_min_window_s",
                           "forecast_lead_h",
                           "forecast_history_h",
                           "http_header_timeout_ms",
                           "http_body_timeout_ms",
                           "http_idle_timeout_ms",
                           "http_max_connections",
                           "http_max_connections_per_address",
                           "payment_terms_days"}) {
    std::string variable = "ALLOT_" + std::string(name);
    std::transform(variable.begin(), variable.end(), variable.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    const char* value = getenv(variable.c_str());
    if (value == nullptr || *value == '\0') continue;
    const WholeSetting setting = whole_setting(config, name);
    int64_t number = 0;
    const char* end = value + std::strlen(value);
    if (std::from_chars(value, end, number).ptr != end || number < setting.least) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("{} must be {}", variable, whole_wanted(setting.least)));
    }
    *setting.field = number;
  }
  return {};
}

}  // namespace

Result<DaemonConfig> load_daemon_config(const std::vector<std::string>& args, const GetEnv& getenv,
                                        bool& help) {
  help = false;
  CLI::App cli{"allotd: the Allot controller"};
  std::string config_path;
  std::optional<std::string> listen, data_dir, store, postgres_url, log_level, port_file, policy;
  cli.add_option("-c,--config", config_path, "TOML file of settings")->check(CLI::ExistingFile);
  cli.add_option("--listen", listen, "HOST:PORT to serve on (port 0: any free port)");
  cli.add_option("--data-dir", data_dir, "directory for the SQLite database");
  cli.add_option("--store", store, "sqlite (default) or postgres");
  cli.add_option("--postgres-url", postgres_url, "libpq connection URL");
  cli.add_option("--log-level", log_level, "trace, debug, info, warn or error");
  cli.add_option("--port-file", port_file, "write the bound port to this file");
  cli.add_option("--scheduler-policy", policy, "placement policy (default allot)");
  std::optional<int64_t> carbon_weight;
  cli.add_option("--scheduler-carbon-weight", carbon_weight,
                 "weight of the carbon score plugin (default 0: off)")
      ->check(CLI::NonNegativeNumber);
  std::optional<int64_t> interval, timeout, grace;
  cli.add_option("--heartbeat-interval-ms", interval, "how often agents report")
      ->check(CLI::PositiveNumber);
  cli.add_option("--heartbeat-timeout-ms", timeout, "silence after which a node is lost")
      ->check(CLI::PositiveNumber);
  cli.add_option("--stop-grace-ms", grace, "SIGTERM to SIGKILL for stopped instances")
      ->check(CLI::PositiveNumber);
  std::optional<int64_t> retry_base, retry_max, max_attempts, rating, runway;
  cli.add_option("--rating-interval-ms", rating, "how often running work's usage is posted")
      ->check(CLI::PositiveNumber);
  cli.add_option("--runway-s", runway, "seconds of charge a bounded tenant's work holds ahead")
      ->check(CLI::PositiveNumber);
  cli.add_option("--webhook-retry-base-ms", retry_base, "first wait before a webhook retry")
      ->check(CLI::PositiveNumber);
  cli.add_option("--webhook-retry-max-ms", retry_max, "longest wait between webhook attempts")
      ->check(CLI::PositiveNumber);
  cli.add_option("--webhook-max-attempts", max_attempts, "attempts before a webhook is given up")
      ->check(CLI::PositiveNumber);
  std::optional<std::string> webhook_allow;
  cli.add_option("--webhook-allow", webhook_allow,
                 "internal CIDR ranges tenants' webhooks may reach, e.g. 10.20.0.0/16");
  std::optional<int64_t> autoscale, pool_timeout;
  std::optional<std::string> agent_path;
  cli.add_option("--autoscale-interval-ms", autoscale, "how often the autoscaler decides")
      ->check(CLI::PositiveNumber);
  cli.add_option("--pool-command-timeout-ms", pool_timeout,
                 "how long a pool's create or delete command may run")
      ->check(CLI::PositiveNumber);
  cli.add_option("--local-agent-path", agent_path, "allot-agent for the local pool provider");
  std::optional<int64_t> idle_min_window;
  cli.add_option("--idle-min-window-s", idle_min_window,
                 "the shortest idle-stop window a policy may have (default 60)")
      ->check(CLI::PositiveNumber);
  std::optional<std::string> web_dir;
  cli.add_option("--web-dir", web_dir, "the built dashboard to serve at / (web/dist)");
  std::optional<std::string> currency;
  cli.add_option("--currency", currency, "the deployment's currency, ISO 4217 (default USD)");
  std::optional<std::string> spot_fallback;
  cli.add_option("--spot-fallback", spot_fallback,
                 "spot work where no spot price is set: none (not placed) or on-demand");
  std::optional<std::string> default_image, process_tenants;
  cli.add_option("--default-image", default_image, "the image of launches that name none");
  cli.add_option("--process-runtime-tenants", process_tenants,
                 "who may run on process-runtime nodes: operator (default) or all");
  std::optional<bool> forecast;
  cli.add_option("--forecast", forecast, "pre-scale pools from the demand forecast (default true)");
  std::optional<int64_t> lead, history;
  cli.add_option("--forecast-lead-h", lead, "hours ahead the pools are grown for (default 2)")
      ->check(CLI::PositiveNumber);
  cli.add_option("--forecast-history-h", history, "hours of demand history used (default 336)")
      ->check(CLI::PositiveNumber);
  std::array<std::optional<int64_t>, kHttpSettings.size()> http_flags;
  for (size_t i = 0; i < kHttpSettings.size(); ++i) {
    std::string flag = "--" + std::string(kHttpSettings[i].name);
    std::replace(flag.begin(), flag.end(), '_', '-');
    cli.add_option(flag, http_flags[i], kHttpSettings[i].help)->check(CLI::PositiveNumber);
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
  if (data_dir) config.data_dir = *data_dir;
  if (store) config.store = *store;
  if (postgres_url) config.postgres_url = *postgres_url;
  if (log_level) config.log_level = *log_level;
  if (port_file) config.port_file = *port_file;
  if (policy) config.scheduler_policy = *policy;
  if (carbon_weight) config.scheduler_carbon_weight = *carbon_weight;
  if (interval) config.heartbeat_interval_ms = *interval;
  if (timeout) config.heartbeat_timeout_ms = *timeout;
  if (grace) config.stop_grace_ms = *grace;
  if (rating) config.rating_interval_ms = *rating;
  if (runway) config.runway_s = *runway;
  if (retry_base) config.webhook_retry_base_ms = *retry_base;
  if (retry_max) config.webhook_retry_max_ms = *retry_max;
  if (max_attempts) config.webhook_max_attempts = *max_attempts;
  if (webhook_allow) config.webhook_allow = *webhook_allow;
  if (autoscale) config.autoscale_interval_ms = *autoscale;
  if (pool_timeout) config.pool_command_timeout_ms = *pool_timeout;
  if (agent_path) config.local_agent_path = *agent_path;
  if (idle_min_window) config.idle_min_window_s = *idle_min_window;
  if (web_dir) config.web_dir = *web_dir;
  if (currency) config.currency = *currency;
  if (spot_fallback) config.spot_fallback = *spot_fallback;
  if (default_image) config.default_image = *default_image;
  if (process_tenants) config.process_runtime_tenants = *process_tenants;
  if (forecast) config.forecast = *forecast;
  if (lead) config.forecast_lead_h = *lead;
  if (history) config.forecast_history_h = *history;
  for (size_t i = 0; i < kHttpSettings.size(); ++i) {
    if (http_flags[i]) *duration_field(config, kHttpSettings[i].name) = *http_flags[i];
  }
  if (auto ok = check(config); !ok) return std::unexpected(ok.error());
  return config;
}

}  // namespace allot
