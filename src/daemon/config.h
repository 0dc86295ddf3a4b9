// allotd's settings, from defaults, then a TOML file, then ALLOT_* environment variables, then
// command-line flags: each later source overrides the earlier ones.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "api/launch.h"
#include "common/error.h"
#include "common/limits.h"

namespace allot {

struct DaemonConfig {
  std::string listen_host = "127.0.0.1";
  uint16_t listen_port = 8080;
  std::string data_dir = "allot-data";  // SQLite's file lives here.
  std::string store = "sqlite";         // "sqlite" or "postgres".
  std::string postgres_url;             // libpq URL, for store = "postgres".
  // High availability (PostgreSQL only): where clients reach this replica, e.g.
  // "http://10.0.0.5:8080". Set, allotd runs as one of several replicas of one database and
  // leads only while it holds the lease, of `lease_ms`. Empty: a single process, as on SQLite.
  std::string advertise_url;
  int64_t lease_ms = 10'000;
  std::string log_level = "info";          // trace, debug, info, warn, error.
  std::string port_file;                   // If set, the bound port is written here once listening.
  std::string scheduler_policy = "allot";  // A name from the scheduling framework's registry.
  std::string admin_key;                   // Only from ALLOT_ADMIN_KEY: the first operator key.
  int64_t heartbeat_interval_ms = 2'000;   // Agents report this often.
  int64_t heartbeat_timeout_ms = 30'000;   // A node silent this long is lost.
  int64_t stop_grace_ms = 10'000;          // SIGTERM to SIGKILL when an instance is stopped.
  int64_t preempt_grace_ms = 10'000;       // The same for preempted spot work.
  // Webhook deliveries: the first retry's wait (doubling after each failure), the longest wait,
  // and the attempts after which a delivery is given up.
  int64_t rating_interval_ms = 60'000;  // Usage is posted to the ledger this often.
  int64_t runway_s = 3'600;  // A bounded tenant's work holds this much of its charge ahead.
  int64_t webhook_retry_base_ms = 1'000;
  int64_t webhook_retry_max_ms = 300'000;
  int64_t webhook_max_attempts = 10;
  // Internal addresses (loopback, link-local, private: common/address_policy.h) that tenants'
  // webhooks may reach nonetheless, as CIDR ranges separated by commas, e.g. "10.20.0.0/16";
  // empty: none.
  std::string webhook_allow;
  // Above 0, the carbon score plugin joins the scheduling policy with this weight; 0 leaves it
  // out.
  int64_t scheduler_carbon_weight = 0;
  // Node pools: how often the autoscaler decides, how long a pool's create or delete command may
  // run, and the allot-agent the local provider starts (empty: the one beside allotd).
  int64_t autoscale_interval_ms = 5'000;
  int64_t pool_command_timeout_ms = 120'000;
  std::string local_agent_path;
  // Services: how often the controller decides and each running replica is probed, and how long
  // a request may wait for a replica (a service at zero starting one).
  int64_t service_interval_ms = 1'000;
  int64_t service_probe_interval_ms = 1'000;
  int64_t service_hold_ms = 60'000;
  // Instances one tenant may have queued or running at once (1 .. a million).
  int64_t max_active_instances_per_tenant = limits::kDefaultMaxActiveInstancesPerTenant;
  // Idle stop: the shortest window a new policy may have (1 s .. a week).
  int64_t idle_min_window_s = 60;
  // A shared service's price rise reaches its callers this long after they are told (1 s .. 90
  // days; a day by default).
  int64_t service_price_notice_s = 86'400;
  // Pre-scaling: each hour the pools of a GPU model grow ahead of the demand the forecast
  // expects within `forecast_lead_h` hours, from up to `forecast_history_h` hours of history
  // (at least 48 are needed before it acts). Off with `forecast = false`.
  bool forecast = true;
  int64_t forecast_lead_h = 2;
  int64_t forecast_history_h = 336;
  // Volumes: the largest a tenant may create, in GB, and the regions whose nodes all mount an NFS
  // export for nfs volumes, separated by commas (empty: none; every volume is local).
  int64_t max_volume_gb = 10'000;
  std::string nfs_regions;
  // Whether tenants may publish a port that anyone reaches without a key (`public`).
  bool public_ports = true;
  // A store that holds data is opened only with the secrets.key it was sealed with; this flag
  // (--new-secrets-key, never from a file) makes a new key when that one is lost for good: the
  // tenants' registry passwords sealed with it must then be entered again.
  bool new_secrets_key = false;
  // The built dashboard (web/dist) that is served at `/`; empty: no dashboard.
  std::string web_dir;
  // HTTP: the time a client has to send a request's header and its body, how long an idle
  // kept-alive connection stays open, and the connections open at once, in all and from one
  // address (see limits.h for the reasons of the defaults).
  int64_t http_header_timeout_ms = limits::kDefaultHeaderTimeoutMs;
  int64_t http_body_timeout_ms = limits::kDefaultBodyTimeoutMs;
  int64_t http_idle_timeout_ms = limits::kDefaultIdleTimeoutMs;
  int64_t http_max_connections = limits::kDefaultMaxConnections;
  int64_t http_max_connections_per_address = limits::kDefaultMaxConnectionsPerAddress;
  // Invoices: who issues them (printed on each), the deployment's currency (an ISO 4217 code;
  // the ledger's micro-units are micro-units of it) and the days from issue to due.
  std::string invoice_legal_name;
  std::string invoice_address;  // Lines separated by "\n".
  std::string invoice_tax_id;
  std::string currency = "USD";
  int64_t payment_terms_days = 30;
  // Spot work where no spot price is set: "none" (it is not placed there, since it would go
  // uncharged) or "on-demand" (it runs and is charged the on-demand price until a spot price is
  // in force).
  std::string spot_fallback = "none";
  // The image of launches that name none (instances on container nodes need one).
  std::string default_image;
  // Who may run on nodes of the process runtime, where work is not isolated from the host:
  // "operator" (the operator's own tenant only) or "all".
  std::string process_runtime_tenants = "operator";
  // Launch templates, from the file's [templates.NAME] tables only (daemon/templates_config.h).
  LaunchTemplates templates;
};

using GetEnv = std::function<const char*(const char*)>;

// Reads the settings; argv[0] is the program name. Fails with kInvalidArgument naming the file,
// variable or flag at fault. `help` is set when --help was asked for (the text is in the error).
[[nodiscard]] Result<DaemonConfig> load_daemon_config(const std::vector<std::string>& args,
                                                      const GetEnv& getenv, bool& help);

// The regions of `nfs_regions`, which are separated by commas or spaces.
std::set<std::string> nfs_region_set(const DaemonConfig& config);

}  // namespace allot
