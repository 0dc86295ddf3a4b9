// The CLI end to end against a real allotd: the README's walk-through, output modes and the exit
// codes scripts rely on.
#include <gtest/gtest.h>
#include <fstream>

#include <nlohmann/json.hpp>

#include "support/daemon.h"

namespace allot::testing {
namespace {

using nlohmann::json;

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(daemon_.start()); }

  RunResult allot(const std::vector<std::string>& args, const std::string& key) {
    return run_program(bin_dir() + "/src/cli/allot", args,
                       {"ALLOT_SERVER=" + daemon_.url(), "ALLOT_KEY=" + key, "HOME=/nonexistent"});
  }

  // Runs a command with -o json, expects success and returns the parsed output.
  json allot_json(std::vector<std::string> args, const std::string& key) {
    args.insert(args.begin(), {"-o", "json"});
    const RunResult result = allot(args, key);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return json::parse(result.out, nullptr, false);
  }

  // A key of a new tenant admin of `tenant`, made by the operator.
  std::string tenant_admin_key(const std::string& tenant) {
    const std::string op = daemon_.admin_key();
    const std::string user = allot_json({"users", "create", "--name", "Ann", "--email", "ann@acme",
                                         "--role", "tenant-admin", "--tenant", tenant},
                                        op)
                                 .value("id", "");
    return allot_json({"keys", "create", "laptop", "--user", user}, op).value("secret", "");
  }

  Daemon daemon_;
};

TEST_F(CliTest, AnOperatorSetsUpATenantWhoseKeyWorksOnlyThere) {
  const std::string op = daemon_.admin_key();
  const std::string tenant = allot_json({"tenants", "create", "acme"}, op).value("id", "");
  const std::string other = allot_json({"tenants", "create", "globex"}, op).value("id", "");
  const std::string project =
      allot_json({"projects", "create", "vision", "--tenant", tenant}, op).value("id", "");
  const std::string key = tenant_admin_key(tenant);
  ASSERT_FALSE(key.empty());

  const json me = allot_json({"whoami"}, key);
  EXPECT_EQ(me["tenant"]["id"], tenant);
  EXPECT_EQ(me["user"]["role"], "tenant-admin");
  const json tenants = allot_json({"tenants", "list"}, key);
  ASSERT_EQ(tenants.size(), 1u);
  EXPECT_EQ(tenants[0]["id"], tenant);
  const json projects = allot_json({"projects", "list"}, key);
  ASSERT_EQ(projects.size(), 1u);
  EXPECT_EQ(projects[0]["id"], project);

  EXPECT_EQ(allot({"tenants", "get", other}, key).exit_code, 4);
  EXPECT_EQ(allot({"projects", "create", "x", "--tenant", other}, key).exit_code, 4);
  EXPECT_EQ(allot({"tenants", "create", "mine"}, key).exit_code, 3);
}

TEST_F(CliTest, TablesAreAlignedWithAHeader) {
  const std::string op = daemon_.admin_key();
  ASSERT_EQ(allot({"tenants", "create", "a-much-longer-name"}, op).exit_code, 0);
  const RunResult result = allot({"tenants", "list"}, op);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::vector<std::string> lines;
  for (size_t start = 0, end; (end = result.out.find('\n', start)) != std::string::npos;
       start = end + 1) {
    lines.push_back(result.out.substr(start, end - start));
  }
  ASSERT_EQ(lines.size(), 3u) << result.out;
  EXPECT_TRUE(lines[0].starts_with("ID")) << lines[0];
  const size_t name_column = lines[0].find("NAME");
  ASSERT_NE(name_column, std::string::npos);
  for (size_t i = 1; i < lines.size(); ++i) EXPECT_NE(lines[i][name_column], ' ') << lines[i];
}

TEST_F(CliTest, ExitCodesTellScriptsWhatHappened) {
  const std::string op = daemon_.admin_key();
  EXPECT_EQ(allot({"whoami"}, op).exit_code, 0);
  EXPECT_EQ(allot({"whoami"}, "allot_0000000000000000000000000000000000000000").exit_code, 3);
  EXPECT_EQ(allot({"tenants", "get", "ten_ffffffffffffffff"}, op).exit_code, 4);
  EXPECT_EQ(allot({"tenants", "get", "bad"}, op).exit_code, 5);
  ASSERT_EQ(allot({"tenants", "create", "dup"}, op).exit_code, 0);
  const RunResult duplicate = allot({"tenants", "create", "dup"}, op);
  EXPECT_EQ(duplicate.exit_code, 5);
  EXPECT_NE(duplicate.err.find("already_exists"), std::string::npos) << duplicate.err;
  EXPECT_EQ(allot({"tenants", "frobnicate"}, op).exit_code, 2);
  EXPECT_EQ(allot({"-o", "yaml", "whoami"}, op).exit_code, 2);
  const RunResult unreachable =
      run_program(bin_dir() + "/src/cli/allot", {"--server", "http://127.0.0.1:1", "whoami"},
                  {"ALLOT_KEY=" + op});
  EXPECT_EQ(unreachable.exit_code, 6);
}

TEST_F(CliTest, TheOperatorSetsQuotasReservationsAndWeights) {
  const std::string op = daemon_.admin_key();
  const std::string tenant = allot_json({"tenants", "create", "acme"}, op).value("id", "");
  const json quota =
      allot_json({"quotas", "set", "--tenant", tenant, "--model", "H100", "--gpus", "16"}, op);
  EXPECT_EQ(quota["gpu_milli"], 16000);
  EXPECT_EQ(quota["gpu_model"], "H100");
  const json quotas = allot_json({"quotas", "list", "--tenant", tenant}, op);
  ASSERT_EQ(quotas.size(), 1u);
  EXPECT_EQ(quotas[0]["used_milli"], 0);
  // The table shows the limit in GPUs, as it was set, not in the JSON's milli-GPUs.
  const std::string table = allot({"quotas", "list", "--tenant", tenant}, op).out;
  EXPECT_NE(table.find("GPUS"), std::string::npos) << table;
  EXPECT_NE(table.find("H100   16    0"), std::string::npos) << table;
  EXPECT_EQ(
      allot({"quotas", "set", "--tenant", tenant, "--model", "Z80", "--gpus", "1"}, op).exit_code,
      5);
  EXPECT_EQ(allot_json({"tenants", "set", tenant, "--weight", "3"}, op)["weight"], 3);
  EXPECT_EQ(allot({"tenants", "set", tenant, "--weight", "0"}, op).exit_code, 5);
  // No H100s have joined, so a reservation of them does not fit; a bad time is bad input.
  const RunResult no_gpus =
      allot({"reservations", "create", "--tenant", tenant, "--model", "H100-80GB", "--gpus", "8",
             "--from", "2030-01-01T00:00:00Z", "--until", "2030-01-02T00:00:00Z"},
            op);
  EXPECT_EQ(no_gpus.exit_code, 5) << no_gpus.out << no_gpus.err;
  EXPECT_NE(no_gpus.err.find("already reserved"), std::string::npos) << no_gpus.err;
  EXPECT_EQ(allot({"reservations", "create", "--tenant", tenant, "--model", "H100-80GB", "--gpus",
                   "8", "--from", "soon", "--until", "2030-01-02T00:00:00Z"},
                  op)
                .exit_code,
            5);
  EXPECT_EQ(allot_json({"reservations", "list"}, op).size(), 0u);
  const std::string id = quota["id"];
  EXPECT_FALSE(allot_json({"quotas", "delete", id}, op)["deleted_at"].is_null());
  EXPECT_EQ(allot_json({"quotas", "list", "--all"}, op).size(), 1u);
  EXPECT_EQ(allot_json({"quotas", "list"}, op).size(), 0u);
  const json price = allot_json(
      {"prices", "set", "--model", "H100-80GB", "--region", "eu", "--gpu-hour", "2.50"}, op);
  EXPECT_EQ(price["gpu_hour"], "2.500000");
  EXPECT_EQ(allot_json({"prices", "list", "--region", "eu"}, op).size(), 1u);
  EXPECT_EQ(
      allot({"prices", "set", "--model", "H100-80GB", "--region", "eu", "--gpu-hour", "x"}, op)
          .exit_code,
      5);
}

TEST_F(CliTest, TheOperatorTopsUpAPrepaidTenantWhichReadsItsBalance) {
  const std::string op = daemon_.admin_key();
  const std::string tenant = allot_json({"tenants", "create", "acme"}, op).value("id", "");
  EXPECT_EQ(allot_json({"tenants", "set", tenant, "--billing", "prepaid"}, op)["billing"],
            "prepaid");
  EXPECT_EQ(allot_json({"topup", tenant, "100", "--id", "inv-77"}, op)["cash"], "100.000000");
  EXPECT_EQ(allot_json({"topup", tenant, "100", "--id", "inv-77"}, op)["cash"], "100.000000");
  EXPECT_EQ(allot_json({"topup", tenant, "5", "--credit", "--expires", "2099-01-01T00:00:00Z"},
                       op)["credits"],
            "5.000000");
  const std::string key = tenant_admin_key(tenant);
  const json own = allot_json({"balance"}, key);
  EXPECT_EQ(own["cash"], "100.000000");
  EXPECT_EQ(own["available"], "105.000000");
  EXPECT_EQ(allot_json({"balance", "--ledger"}, key).size(), 2u);
  EXPECT_EQ(allot({"topup", tenant, "-1"}, op).exit_code, 5);
  EXPECT_EQ(allot({"topup", tenant, "1"}, key).exit_code, 3);
  // An empty id is refused, not taken as none (which would top up again at each retry).
  EXPECT_EQ(allot({"topup", tenant, "1", "--id", ""}, op).exit_code, 5);
  EXPECT_EQ(allot_json({"balance"}, key)["cash"], "100.000000");
}

TEST_F(CliTest, ATenantAdminSetsListsAndDeletesBudgets) {
  const std::string op = daemon_.admin_key();
  const std::string tenant = allot_json({"tenants", "create", "acme"}, op).value("id", "");
  const std::string project =
      allot_json({"projects", "create", "vision", "--tenant", tenant}, op).value("id", "");
  const std::string key = tenant_admin_key(tenant);
  const json budget = allot_json(
      {"budget", "set", "--amount", "250.50", "--project", project, "--thresholds", "25,75",
       "--enforcement", "block_new", "--webhook-url", "http://192.0.2.10:9/hook"},
      key);
  EXPECT_EQ(budget["tenant_id"], tenant);
  EXPECT_EQ(budget["amount"], "250.500000");
  EXPECT_EQ(budget["thresholds_pct"], json({25, 75}));
  EXPECT_EQ(budget["spend"], "0.000000");
  EXPECT_TRUE(budget.value("webhook_secret", "").starts_with("whsec_"));
  const json listed = allot_json({"budget", "list"}, key);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0]["enforcement"], "block_new");
  const RunResult table = allot({"budget", "list"}, key);
  EXPECT_NE(table.out.find("250.500000"), std::string::npos) << table.out;
  EXPECT_EQ(allot({"budget", "set", "--amount", "0"}, key).exit_code, 5);
  EXPECT_EQ(allot({"budget", "set", "--amount", "5", "--thresholds", "90,10"}, key).exit_code, 5);
  const std::string id = budget["id"];
  EXPECT_FALSE(allot_json({"budget", "delete", id}, key)["deleted_at"].is_null());
  EXPECT_EQ(allot_json({"budget", "list"}, key).size(), 0u);
  EXPECT_EQ(allot_json({"budget", "list", "--all"}, key).size(), 1u);
  EXPECT_EQ(allot_json({"events"}, key).size(), 0u);
}

TEST_F(CliTest, SettingsComeFromAConfigFileWhenNotGiven) {
  TempDir dir;
  const auto path = dir.path() / "config.toml";
  std::ofstream(path) << "server = \"" << daemon_.url() << "\"\nkey = \"" << daemon_.admin_key()
                      << "\"\n";
  const RunResult result =
      run_program(bin_dir() + "/src/cli/allot", {"--config", path.string(), "-o", "json", "whoami"},
                  {"ALLOT_SERVER=", "ALLOT_KEY="});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(json::parse(result.out, nullptr, false)["user"]["role"], "operator-admin");
}

}  // namespace
}  // namespace allot::testing
