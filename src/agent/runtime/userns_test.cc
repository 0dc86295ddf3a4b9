// The subordinate ids that give each container host uids of its own, and the seccomp profile that
// keeps containers from making user namespaces: what the agent writes at its start.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "agent/runtime/seccomp.h"
#include "agent/runtime/userns.h"
#include "support/temp_dir.h"

namespace allot::agent {
namespace {

using testing::read_file;

TEST(UserNamespaceTest, ContainersGetARangeOnceAndOthersAreKept) {
  testing::TempDir dir;
  const auto subuid = dir.path() / "subuid";
  const auto subgid = dir.path() / "subgid";
  std::ofstream(subuid) << "ann:100000:65536";  // No line break at its end.
  ASSERT_TRUE(ensure_container_id_ranges(subuid.string(), subgid.string()));
  ASSERT_TRUE(ensure_container_id_ranges(subuid.string(), subgid.string()));
  EXPECT_EQ(read_file(subuid), "ann:100000:65536\n" + std::string(kContainersIdRange) + "\n");
  EXPECT_EQ(read_file(subgid), std::string(kContainersIdRange) + "\n");
  EXPECT_FALSE(ensure_container_id_ranges((dir.path() / "no/such/file").string(), subgid.string()));
}

TEST(SeccompTest, CloneAndUnshareAreAllowedOnlyWithoutANewUserNamespace) {
  testing::TempDir dir;
  const auto base = dir.path() / "base.json";
  std::ofstream(base) << R"({"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
      {"names": ["read", "clone", "clone3", "unshare"], "action": "SCMP_ACT_ALLOW"}]})";
  // Into a directory the agent has not made yet, as at its first start.
  auto path = write_seccomp_profile((dir.path() / "workloads").string(), base.string());
  ASSERT_TRUE(path) << path.error().message;
  const nlohmann::json profile = nlohmann::json::parse(read_file(*path));
  const auto& rules = profile["syscalls"];
  EXPECT_EQ(rules[0]["names"], nlohmann::json::array({"read"}));
  int conditional = 0;
  for (const auto& rule : rules) {
    const std::string name = rule["names"][0];
    if (name == "clone3") {
      EXPECT_EQ(rule["action"], "SCMP_ACT_ERRNO");
    }
    if (name == "clone" || name == "unshare") {
      ++conditional;
      EXPECT_EQ(rule["args"][0]["value"], 0x10000000);  // CLONE_NEWUSER, which must be clear.
      EXPECT_EQ(rule["args"][0]["op"], "SCMP_CMP_MASKED_EQ");
    }
  }
  EXPECT_EQ(conditional, 2);
  // A profile of another form is not changed blind: the agent says so and does not start.
  std::ofstream(base) << R"({"defaultAction": "SCMP_ACT_ALLOW", "syscalls": []})";
  EXPECT_FALSE(write_seccomp_profile(dir.path().string(), base.string()));
  EXPECT_FALSE(write_seccomp_profile(dir.path().string(), (dir.path() / "absent").string()));
}

}  // namespace
}  // namespace allot::agent
