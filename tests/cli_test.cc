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

  Daemon daemon_;
};

TEST_F(CliTest, AnOperatorSetsUpATenantWhoseKeyWorksOnlyThere) {
  const std::string op = daemon_.admin_key();
  const std::string tenant = allot_json({"tenants", "create", "acme"}, op).value("id", "");
  const std::string other = allot_json({"tenants", "create", "globex"}, op).value("id", "");
  const std::string project =
      allot_json({"projects", "create", "vision", "--tenant", tenant}, op).value("id", "");
  const std::string user = allot_json({"users", "create", "--name", "Ann", "--email", "ann@acme",
                                       "--role", "tenant-admin", "--tenant", tenant},
                                      op)
                               .value("id", "");
  const std::string key =
      allot_json({"keys", "create", "laptop", "--user", user}, op).value("secret", "");
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
