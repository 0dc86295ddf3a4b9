// allot pools: create, list, show, set and delete through the CLI, and its errors.
#include <algorithm>

#include "support/cli_fixture.h"

namespace allot::testing {
namespace {

using PoolCliTest = OperatorCliTest;

TEST_F(PoolCliTest, PoolsAreMadeListedChangedAndDeleted) {
  const auto made =
      allot_json({"pools", "create", "burst", "--model", "H100-80GB", "--provider", "command",
                  "--create-command", "./make-node", "--delete-command", "./drop-node", "--max",
                  "3", "--gpus", "4", "--idle-timeout", "5m", "--boot-timeout", "300"});
  const std::string id = made.value("id", "");
  ASSERT_FALSE(id.empty()) << made.dump();
  EXPECT_EQ(made["gpus_per_node"], 4);
  // Durations take one syntax everywhere: 5m, 300s and 300 are the same.
  EXPECT_EQ(made["idle_timeout_s"], 300);
  EXPECT_EQ(made["boot_timeout_s"], 300);
  EXPECT_EQ(made["live_nodes"], 0);
  const auto listed = allot_json({"pools", "list"});
  ASSERT_EQ(listed.size(), 1U) << listed.dump();
  EXPECT_EQ(listed[0]["name"], "burst");
  const RunResult table = allot({"pools", "list"});
  EXPECT_NE(table.out.find("burst"), std::string::npos) << table.out;
  // The list says how many nodes each pool has, as show does.
  EXPECT_NE(table.out.find("NODES"), std::string::npos) << table.out;
  EXPECT_EQ(listed[0]["live_nodes"], 0);
  EXPECT_EQ(allot_json({"pools", "set", id, "--min", "1", "--max", "5"})["min_nodes"], 1);
  EXPECT_EQ(allot_json({"pools", "set", id, "--cooldown", "2h"})["cooldown_s"], 7'200);
  // A bad duration names its flag and the forms it takes, not what came after it.
  const RunResult bad = allot({"pools", "set", id, "--cooldown", "10x"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--cooldown"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("takes a duration such as 90s, 10m"), std::string::npos) << bad.err;
  // Minimum above maximum: refused with the stable code, and nothing changes.
  const RunResult refused = allot({"pools", "set", id, "--min", "9"});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("invalid_argument"), std::string::npos) << refused.err;
  EXPECT_EQ(allot_json({"pools", "show", id})["min_nodes"], 1);
  // A create prints the one line a person needs; -o json has the rest.
  const RunResult second = allot(
      {"pools", "create", "spare", "--model", "H100-80GB", "--provider", "static", "--max", "1"});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_TRUE(second.out.starts_with("created spare (pol_")) << second.out;
  EXPECT_EQ(std::count(second.out.begin(), second.out.end(), '\n'), 1) << second.out;
  const RunResult unknown =
      allot({"pools", "create", "x", "--model", "H100-80GB", "--provider", "cloud9", "--max", "1"});
  EXPECT_NE(unknown.err.find("unknown provider cloud9"), std::string::npos) << unknown.err;
  EXPECT_TRUE(allot_json({"pools", "delete", id})["deleted_at"].is_string());
  EXPECT_EQ(allot_json({"pools", "list"}).size(), 1U);
}

}  // namespace
}  // namespace allot::testing
