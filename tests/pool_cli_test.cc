// allot pools: create, list, show, set and delete through the CLI, and its errors.
#include "support/cli_fixture.h"

namespace allot::testing {
namespace {

using PoolCliTest = OperatorCliTest;

TEST_F(PoolCliTest, PoolsAreMadeListedChangedAndDeleted) {
  const auto made =
      allot_json({"pools", "create", "burst", "--model", "H100-80GB", "--provider", "command",
                  "--create-command", "./make-node", "--delete-command", "./drop-node", "--max",
                  "3", "--gpus", "4", "--idle-timeout", "300"});
  const std::string id = made.value("id", "");
  ASSERT_FALSE(id.empty()) << made.dump();
  EXPECT_EQ(made["gpus_per_node"], 4);
  EXPECT_EQ(made["idle_timeout_s"], 300);
  EXPECT_EQ(made["live_nodes"], 0);
  const auto listed = allot_json({"pools", "list"});
  ASSERT_EQ(listed.size(), 1U) << listed.dump();
  EXPECT_EQ(listed[0]["name"], "burst");
  const RunResult table = allot({"pools", "list"});
  EXPECT_NE(table.out.find("burst"), std::string::npos) << table.out;
  EXPECT_EQ(allot_json({"pools", "set", id, "--min", "1", "--max", "5"})["min_nodes"], 1);
  // Minimum above maximum: refused with the stable code, and nothing changes.
  const RunResult refused = allot({"pools", "set", id, "--min", "9"});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("invalid_argument"), std::string::npos) << refused.err;
  EXPECT_EQ(allot_json({"pools", "show", id})["min_nodes"], 1);
  const RunResult unknown =
      allot({"pools", "create", "x", "--model", "H100-80GB", "--provider", "cloud9", "--max", "1"});
  EXPECT_NE(unknown.err.find("unknown provider cloud9"), std::string::npos) << unknown.err;
  EXPECT_TRUE(allot_json({"pools", "delete", id})["deleted_at"].is_string());
  EXPECT_TRUE(allot_json({"pools", "list"}).empty());
}

}  // namespace
}  // namespace allot::testing
