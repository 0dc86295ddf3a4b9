#include "daemon/config.h"

#include <fstream>
#include <map>
#include <utility>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/temp_dir.h"

namespace allot {
namespace {

Result<DaemonConfig> load(std::vector<std::string> args,
                          const std::map<std::string, std::string>& env = {}) {
  args.insert(args.begin(), "allotd");
  bool help = false;
  return load_daemon_config(
      args,
      [&env](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      help);
}

// Loads a settings file that holds `toml`, with `args` and `env` over it.
Result<DaemonConfig> load_toml(const std::string& toml, std::vector<std::string> args = {},
                               const std::map<std::string, std::string>& env = {}) {
  testing::TempDir dir;
  const auto file = dir.path() / "allot.toml";
  std::ofstream(file) << toml;
  args.insert(args.begin(), {"--config", file.string()});
  return load(std::move(args), env);
}

TEST(DaemonConfig, FlagsOverrideEnvironmentOverrideFile) {
  auto config = load_toml(
      "listen = \"0.0.0.0:9000\"\ndata_dir = \"/from/file\"\nlog_level = \"debug\"\n",
      {"--data-dir", "/from/flag"}, {{"ALLOT_DATA_DIR", "/from/env"}, {"ALLOT_LOG_LEVEL", "warn"}});
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->listen_host, "0.0.0.0");
  EXPECT_EQ(config->listen_port, 9000);
  EXPECT_EQ(config->data_dir, "/from/flag");
  EXPECT_EQ(config->log_level, "warn");
  EXPECT_EQ(config->store, "sqlite");
}

TEST(DaemonConfig, BadSettingsNameTheirSource) {
  auto unknown = load_toml("colour = \"red\"\n");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("unknown setting 'colour'"), std::string::npos);
  EXPECT_FALSE(load_toml("listen = [\n"));
  EXPECT_FALSE(load({"--listen", "nowhere"}));
  EXPECT_FALSE(load({"--listen", "127.0.0.1:70000"}));
  EXPECT_FALSE(load({"--store", "mysql"}));
  EXPECT_FALSE(load({"--store", "postgres"}));  // No URL.
  EXPECT_FALSE(load({"--log-level", "loud"}));
  EXPECT_FALSE(load({}, {{"ALLOT_LISTEN", "x"}}));
  EXPECT_FALSE(load({"--no-such-flag"}));
}

TEST(DaemonConfig, WebhookRetriesComeFromEachSource) {
  auto config =
      load_toml("webhook_retry_base_ms = 500\nwebhook_max_attempts = 3\n",
                {"--webhook-retry-max-ms", "9000"}, {{"ALLOT_WEBHOOK_MAX_ATTEMPTS", "4"}});
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->webhook_retry_base_ms, 500);
  EXPECT_EQ(config->webhook_retry_max_ms, 9000);
  EXPECT_EQ(config->webhook_max_attempts, 4);
  EXPECT_EQ(load({})->webhook_retry_base_ms, 1'000);
  EXPECT_FALSE(load({"--webhook-max-attempts", "0"}));
  EXPECT_FALSE(load({}, {{"ALLOT_WEBHOOK_RETRY_BASE_MS", "soon"}}));
}

TEST(DaemonConfig, TheWebhookAllowListComesFromEachSourceAndMustParse) {
  EXPECT_EQ(load({})->webhook_allow, "");
  const std::string toml = "webhook_allow = \"10.0.0.0/8\"\n";
  EXPECT_EQ(load_toml(toml)->webhook_allow, "10.0.0.0/8");
  EXPECT_EQ(load_toml(toml, {}, {{"ALLOT_WEBHOOK_ALLOW", "::1"}})->webhook_allow, "::1");
  EXPECT_EQ(load({"--webhook-allow", "127.0.0.0/8,::1"})->webhook_allow, "127.0.0.0/8,::1");
  auto bad = load({"--webhook-allow", "10.0.0.0/40"});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("webhook_allow"), std::string::npos);
}

TEST(DaemonConfig, PreemptedWorkHasAGraceOfItsOwn) {
  EXPECT_EQ(load({})->preempt_grace_ms, 10'000);
  EXPECT_EQ(load_toml("preempt_grace_ms = 120000\n")->preempt_grace_ms, 120'000);
  EXPECT_EQ(load({}, {{"ALLOT_PREEMPT_GRACE_MS", "30000"}})->preempt_grace_ms, 30'000);
  const auto flagged = load({"--preempt-grace-ms", "2000", "--stop-grace-ms", "500"});
  ASSERT_TRUE(flagged) << flagged.error().message;
  EXPECT_EQ(flagged->preempt_grace_ms, 2'000);
  EXPECT_EQ(flagged->stop_grace_ms, 500);
  const auto bad = load({"--preempt-grace-ms", "0"});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("preempt"), std::string::npos) << bad.error().message;
}

TEST(DaemonConfig, MoneyTimingComesFromEachSource) {
  auto config = load_toml("runway_s = 600\n", {"--rating-interval-ms", "5000"});
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->runway_s, 600);
  EXPECT_EQ(config->rating_interval_ms, 5'000);
  EXPECT_EQ(load({}, {{"ALLOT_RUNWAY_S", "120"}})->runway_s, 120);
  EXPECT_EQ(load({})->rating_interval_ms, 60'000);
  EXPECT_FALSE(load({}, {{"ALLOT_RUNWAY_S", "-1"}}));
  EXPECT_FALSE(load({"--rating-interval-ms", "0"}));
}

TEST(DaemonConfig, TheInvoiceIssuerAndCurrencyComeFromEachSource) {
  const std::string toml =
      "invoice_legal_name = \"Allot Compute GmbH\"\n"
      "invoice_address = \"Hauptstr. 1\\n10115 Berlin\"\n"
      "invoice_tax_id = \"DE123456789\"\ncurrency = \"EUR\"\n"
      "payment_terms_days = 14\n";
  auto config = load_toml(toml);
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->invoice_legal_name, "Allot Compute GmbH");
  EXPECT_EQ(config->invoice_address, "Hauptstr. 1\n10115 Berlin");
  EXPECT_EQ(config->invoice_tax_id, "DE123456789");
  EXPECT_EQ(config->currency, "EUR");
  EXPECT_EQ(config->payment_terms_days, 14);
  EXPECT_EQ(load_toml(toml, {"--currency", "JPY"})->currency, "JPY");
  EXPECT_EQ(load({}, {{"ALLOT_CURRENCY", "KWD"}, {"ALLOT_PAYMENT_TERMS_DAYS", "0"}})->currency,
            "KWD");
  EXPECT_EQ(load({})->currency, "USD");
  EXPECT_EQ(load({})->payment_terms_days, 30);
  // An unknown currency is refused at start, saying what is wanted.
  for (const char* bad : {"XYZ", "usd", "US", "EURO", "€"}) {
    auto refused = load({"--currency", bad});
    ASSERT_FALSE(refused) << bad;
    EXPECT_NE(refused.error().message.find("ISO 4217"), std::string::npos)
        << refused.error().message;
  }
  EXPECT_FALSE(load({}, {{"ALLOT_CURRENCY", "ABC"}}));
  EXPECT_FALSE(load({}, {{"ALLOT_PAYMENT_TERMS_DAYS", "366"}}));
  EXPECT_FALSE(load({}, {{"ALLOT_PAYMENT_TERMS_DAYS", "-1"}}));
}

TEST(DaemonConfig, SpotFallsBackToOnDemandOnlyWhenTheOperatorSaysSo) {
  EXPECT_EQ(load({})->spot_fallback, "none");
  EXPECT_EQ(load({"--spot-fallback", "on-demand"})->spot_fallback, "on-demand");
  EXPECT_EQ(load({}, {{"ALLOT_SPOT_FALLBACK", "on-demand"}})->spot_fallback, "on-demand");
  EXPECT_EQ(load_toml("spot_fallback = \"on-demand\"\n")->spot_fallback, "on-demand");
  for (const char* bad : {"ondemand", "On-Demand", "spot", "free"}) {
    auto refused = load({"--spot-fallback", bad});
    ASSERT_FALSE(refused) << bad;
    EXPECT_NE(refused.error().message.find("none or on-demand"), std::string::npos);
  }
}

TEST(DaemonConfig, ReplicasNeedPostgresAFixedPortAndAnAdvertisedUrl) {
  const std::vector<std::string> pg = {"--store", "postgres", "--postgres-url",
                                       "host=db", "--listen", "0.0.0.0:8080"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), pg.begin(), pg.end());
    return load(std::move(more));
  };
  EXPECT_EQ(load({})->advertise_url, "");
  EXPECT_EQ(load({})->lease_ms, 10'000);
  auto replica = with({"--advertise-url", "http://10.0.0.5:8080", "--lease-ms", "4000"});
  ASSERT_TRUE(replica) << replica.error().message;
  EXPECT_EQ(replica->advertise_url, "http://10.0.0.5:8080");
  EXPECT_EQ(replica->lease_ms, 4'000);
  EXPECT_EQ(load_toml("advertise_url = \"http://b:1\"\nstore = \"postgres\"\npostgres_url = "
                      "\"x\"\nlisten = \"127.0.0.1:9\"\n")
                ->advertise_url,
            "http://b:1");
  // SQLite is one process; a replica needs a port its URL can name; the URL must be one.
  auto sqlite = load({"--advertise-url", "http://10.0.0.5:8080"});
  ASSERT_FALSE(sqlite);
  EXPECT_NE(sqlite.error().message.find("store = postgres"), std::string::npos);
  auto any_port = load({"--store", "postgres", "--postgres-url", "x", "--listen", "0.0.0.0:0",
                        "--advertise-url", "http://10.0.0.5:8080"});
  ASSERT_FALSE(any_port);
  EXPECT_NE(any_port.error().message.find("fixed port"), std::string::npos);
  for (const char* bad : {"10.0.0.5:8080", "https://a:1", "http://a", "http://a:0",
                          "http://a:8080/path", "http://:8080"}) {
    auto refused = with({"--advertise-url", bad});
    ASSERT_FALSE(refused) << bad;
    EXPECT_NE(refused.error().message.find("http://HOST:PORT"), std::string::npos) << bad;
  }
  EXPECT_FALSE(with({"--advertise-url", "http://a:1", "--lease-ms", "999"}));
  EXPECT_FALSE(with({"--advertise-url", "http://a:1", "--lease-ms", "600001"}));
}

TEST(DaemonConfig, TheIdleWindowFloorIsAMinuteUnlessLoweredAndAtMostAWeek) {
  EXPECT_EQ(load({})->idle_min_window_s, 60);
  EXPECT_EQ(load({"--idle-min-window-s", "2"})->idle_min_window_s, 2);
  EXPECT_EQ(load({}, {{"ALLOT_IDLE_MIN_WINDOW_S", "30"}})->idle_min_window_s, 30);
  EXPECT_FALSE(load({"--idle-min-window-s", "0"}));
  EXPECT_FALSE(load({"--idle-min-window-s", "604801"}));
}

TEST(DaemonConfig, TheActiveInstancesATenantMayHaveAreTenThousandUnlessSetUpToAMillion) {
  EXPECT_EQ(load({})->max_active_instances_per_tenant, 10'000);
  EXPECT_EQ(load({"--max-active-instances-per-tenant", "100000"})->max_active_instances_per_tenant,
            100'000);
  EXPECT_EQ(
      load({}, {{"ALLOT_MAX_ACTIVE_INSTANCES_PER_TENANT", "5"}})->max_active_instances_per_tenant,
      5);
  EXPECT_EQ(
      load_toml("max_active_instances_per_tenant = 1000000\n")->max_active_instances_per_tenant,
      1'000'000);
  auto over = load({"--max-active-instances-per-tenant", "1000001"});
  ASSERT_FALSE(over);
  EXPECT_NE(over.error().message.find("at most 1000000"), std::string::npos)
      << over.error().message;
  EXPECT_FALSE(load({"--max-active-instances-per-tenant", "0"}));
  EXPECT_FALSE(load({"--max-active-instances-per-tenant", "many"}));
}

TEST(DaemonConfig, CarbonWeightIsOffByDefaultAndComesFromEachSource) {
  EXPECT_EQ(load({})->scheduler_carbon_weight, 0);
  const std::string toml = "scheduler_carbon_weight = 3\n";
  auto from_file = load_toml(toml);
  ASSERT_TRUE(from_file) << from_file.error().message;
  EXPECT_EQ(from_file->scheduler_carbon_weight, 3);
  EXPECT_EQ(load_toml(toml, {}, {{"ALLOT_SCHEDULER_CARBON_WEIGHT", "5"}})->scheduler_carbon_weight,
            5);
  EXPECT_EQ(load({"--scheduler-carbon-weight", "7"}, {{"ALLOT_SCHEDULER_CARBON_WEIGHT", "5"}})
                ->scheduler_carbon_weight,
            7);
  // 0 turns the plugin off again wherever it was turned on before.
  EXPECT_EQ(load_toml(toml, {"--scheduler-carbon-weight", "0"})->scheduler_carbon_weight, 0);
  EXPECT_EQ(load({}, {{"ALLOT_SCHEDULER_CARBON_WEIGHT", "0"}})->scheduler_carbon_weight, 0);
}

TEST(DaemonConfig, CarbonWeightMustBeAWholeNumberZeroOrMore) {
  auto negative = load_toml("scheduler_carbon_weight = -1\n");
  ASSERT_FALSE(negative);
  EXPECT_NE(negative.error().message.find("'scheduler_carbon_weight' must be a whole number, 0 or "
                                          "more"),
            std::string::npos)
      << negative.error().message;
  EXPECT_FALSE(load_toml("scheduler_carbon_weight = \"high\"\n"));
  auto env = load({}, {{"ALLOT_SCHEDULER_CARBON_WEIGHT", "-2"}});
  ASSERT_FALSE(env);
  EXPECT_EQ(env.error().message, "ALLOT_SCHEDULER_CARBON_WEIGHT must be a whole number, 0 or more");
  EXPECT_FALSE(load({"--scheduler-carbon-weight", "-1"}));
  EXPECT_FALSE(load({"--scheduler-carbon-weight", "lots"}));
  // The durations stay positive only.
  EXPECT_FALSE(load({}, {{"ALLOT_RUNWAY_S", "0"}}));
}

TEST(DaemonConfig, TheDefaultImageAndWhoMayUseProcessNodesComeFromEachSourceAndMustParse) {
  auto from_file =
      load_toml("default_image = \"ghcr.io/acme/base:1\"\nprocess_runtime_tenants = \"all\"\n");
  ASSERT_TRUE(from_file) << from_file.error().message;
  EXPECT_EQ(from_file->default_image, "ghcr.io/acme/base:1");
  EXPECT_EQ(from_file->process_runtime_tenants, "all");
  auto defaults = load({});
  ASSERT_TRUE(defaults);
  EXPECT_EQ(defaults->process_runtime_tenants, "operator");  // Walls first: tenants stay off.
  auto from_env = load({}, {{"ALLOT_DEFAULT_IMAGE", "busybox"}});
  ASSERT_TRUE(from_env);
  EXPECT_EQ(from_env->default_image, "busybox");

  auto malformed = load({"--default-image", "Not An/Image"});
  ASSERT_FALSE(malformed);
  EXPECT_NE(malformed.error().message.find("default_image"), std::string::npos);
  auto unknown = load({}, {{"ALLOT_PROCESS_RUNTIME_TENANTS", "everyone"}});
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("process_runtime_tenants"), std::string::npos);
}

TEST(DaemonConfig, LaunchTemplatesComeFromTheFilesTemplatesTables) {
  auto config = load_toml(
      "[templates.jupyter]\n"
      "description = \"JupyterLab on one GPU\"\n"
      "image = \"quay.io/jupyter/base-notebook:1\"\n"
      "command = [\"start-notebook.py\"]\n"
      "gpus = 1\n"
      "interactive = true\n"
      "env = { MODE = \"lab\" }\n"
      "[templates.pytorch]\n"
      "image = \"pytorch/pytorch:2\"\n"
      "gpu_milli = 500\n");
  ASSERT_TRUE(config) << config.error().message;
  ASSERT_EQ(config->templates.size(), 2U);
  const LaunchTemplate& jupyter = config->templates.at("jupyter");
  EXPECT_EQ(jupyter.description, "JupyterLab on one GPU");
  EXPECT_FALSE(jupyter.fields.contains("description"));
  EXPECT_EQ(jupyter.fields["command"], nlohmann::json({"start-notebook.py"}));
  EXPECT_EQ(jupyter.fields["env"]["MODE"], "lab");
  EXPECT_EQ(jupyter.fields["interactive"], true);
  EXPECT_EQ(config->templates.at("pytorch").fields["gpu_milli"], 500);
}

TEST(DaemonConfig, ABadTemplateStopsTheStartNamingTheFileAndTheTemplate) {
  const std::pair<const char*, const char*> cases[] = {
      {"[templates.bad]\ngpus = 9\n", "template 'bad': gpus must be 1 to 8"},
      {"[templates.bad]\ngpus = 1.5\n", "'templates.bad.gpus' must be"},
      {"[templates.bad]\nproject_id = \"prj_1\"\n", "'project_id' cannot be set"},
      {"[templates.bad]\ndescription = 3\n", "templates.bad.description must be a string"},
      {"[templates.bad]\nwhen = 2026-01-01\n", "'templates.bad.when' must be"},
      {"templates = 3\n", "one [templates.NAME] table each"},
      {"[templates]\nbad = 3\n", "templates.bad must be a table"},
  };
  for (const auto& [toml, says] : cases) {
    auto config = load_toml(toml);
    ASSERT_FALSE(config) << toml;
    EXPECT_EQ(config.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(config.error().message.find("allot.toml: "), std::string::npos)
        << config.error().message;
    EXPECT_NE(config.error().message.find(says), std::string::npos) << config.error().message;
  }
}

TEST(DaemonConfig, AHeartbeatTimeoutUnderTwoIntervalsIsRefused) {
  for (const char* timeout : {"1", "1999", "3999"}) {
    auto config = load({"--heartbeat-interval-ms", "2000", "--heartbeat-timeout-ms", timeout});
    ASSERT_FALSE(config) << timeout;
    EXPECT_NE(config.error().message.find("at least twice"), std::string::npos);
  }
  EXPECT_TRUE(load({"--heartbeat-interval-ms", "2000", "--heartbeat-timeout-ms", "4000"}));
  // The defaults pass, and so does a short interval under the default timeout.
  EXPECT_TRUE(load({}));
  EXPECT_FALSE(load({"--heartbeat-timeout-ms", "1"}));
  EXPECT_TRUE(load({"--heartbeat-interval-ms", "300", "--heartbeat-timeout-ms", "2000"}));
}

}  // namespace
}  // namespace allot
