// An operator's mistakes that would lose data without a word: a second allotd on the same data
// dir, a lost secrets key beside a store, a heartbeat timeout that loses healthy nodes. Each stops
// allotd at its start with a message that says what to do. And a secret the operator gave is not
// printed where logs keep it.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/daemon.h"

namespace allot::testing {
namespace {

std::string allotd() { return bin_dir() + "/src/daemon/allotd"; }

TEST(DaemonHostileTest, ASecondAllotdOnTheSameDataDirStopsAtItsStartAndTheFirstWritesOn) {
  Daemon first;
  ASSERT_TRUE(first.start());
  const RunResult second =
      run_program(allotd(), {"--listen", "127.0.0.1:0", "--data-dir", first.data_dir().string()},
                  {}, std::chrono::seconds(30));
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_NE((second.out + second.err).find("another allotd (pid " + std::to_string(first.pid())),
            std::string::npos)
      << second.out << second.err;
  const ClientResponse made =
      first.request("POST", "/v1/tenants", R"({"name":"still-writing"})", first.admin_key());
  EXPECT_EQ(made.status, 201) << made.body;
}

TEST(DaemonHostileTest, AStoreWhoseSecretsKeyIsLostDoesNotStartWithANewOneUnlessTold) {
  Daemon daemon;
  ASSERT_TRUE(daemon.start());
  EXPECT_EQ(daemon.stop(), 0);
  const std::filesystem::path key = daemon.data_dir() / "secrets.key";
  ASSERT_TRUE(std::filesystem::exists(key));
  std::filesystem::remove(key);
  const std::vector<std::string> args = {"--listen", "127.0.0.1:0", "--data-dir",
                                         daemon.data_dir().string()};
  const RunResult refused = run_program(allotd(), args, {}, std::chrono::seconds(30));
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE((refused.out + refused.err).find("secrets.key is missing"), std::string::npos)
      << refused.out << refused.err;
  EXPECT_FALSE(std::filesystem::exists(key)) << "a new key was made without a word";
  // Told, it makes a new key and serves.
  daemon.set_extra_args({"--new-secrets-key"});
  ASSERT_TRUE(daemon.start());
  EXPECT_TRUE(std::filesystem::exists(key));
}

TEST(DaemonHostileTest, AHeartbeatTimeoutUnderTwoIntervalsStopsAllotdAtItsStart) {
  const RunResult refused =
      run_program(allotd(), {"--listen", "127.0.0.1:0", "--heartbeat-timeout-ms", "1"}, {},
                  std::chrono::seconds(30));
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE((refused.out + refused.err).find("at least twice"), std::string::npos);
}

TEST(DaemonHostileTest, AnAdminKeyGivenInTheEnvironmentIsNeverPrinted) {
  const std::string key = "allot_given000000000000000000000000000000";
  Daemon daemon;
  ASSERT_TRUE(daemon.start({"ALLOT_ADMIN_KEY=" + key}));
  EXPECT_EQ(daemon.output().find(key), std::string::npos) << daemon.output();
  EXPECT_EQ(daemon.output().find("shown once"), std::string::npos) << daemon.output();
  EXPECT_NE(daemon.output().find("with the key given in ALLOT_ADMIN_KEY"), std::string::npos)
      << daemon.output();
  EXPECT_EQ(daemon.request("GET", "/v1/whoami", "", key).status, 200);
}

}  // namespace
}  // namespace allot::testing
