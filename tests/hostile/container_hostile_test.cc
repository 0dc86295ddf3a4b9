// A hostile tenant's container against the node and the tenants beside it: host uids of its
// own (root in an image is nobody on the node, and per-user limits are its own), no IPv6 around
// the walls, no user namespaces of its own, limits it did not ask for, and no life beyond its
// agent's absence.
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "container_fixture.h"

namespace allot::testing {
namespace {

using nlohmann::json;

// The host uid a container's uid 0 maps to: the second field of /proc/self/uid_map's first line.
std::string host_uid_of_root(const std::string& uid_map) {
  std::istringstream fields(uid_map);
  std::string inside;
  std::string outside;
  fields >> inside >> outside;
  return outside;
}

TEST_F(ContainerTest, AHostileContainerHasHostUidsOfItsOwnNoIpv6NoUserNamespacesAndLimits) {
  const Tenant b = make_tenant("bravo");
  const std::string probe =
      "cat /proc/self/uid_map; echo id=$(id -u); "
      "echo ipv6=$(ip -6 addr | grep -c inet6); "
      "unshare -U -r true 2>/dev/null && echo userns=made || echo userns=refused; "
      "echo memory=$(cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || "
      "cat /sys/fs/cgroup/memory.max); sleep 10";  // Both running at once: no range to share.
  const json body = {{"gpus", 1}, {"image", kRootZerosImage}, {"command", {"sh", "-c", probe}}};
  const std::string a_id = launch(body);
  const std::string b_id = launch_as(b, body);
  ASSERT_TRUE(instance_reaches(a_id, "succeeded")) << instance(a_id).dump() << logs(a_id);
  // B's instance, as the operator sees it.
  const std::string b_path = "/v1/instances/" + b_id;
  ASSERT_TRUE(eventually([&] { return operator_call("GET", b_path, 200)["state"] == "succeeded"; }))
      << operator_call("GET", b_path, 200).dump();
  const std::string b_logs = operator_call("GET", b_path + "/logs", 200).value("data", "");
  const auto a = fields(logs(a_id));
  const auto b_seen = fields(b_logs);
  // USER 00 is root: it runs as nobody, and nobody of a range of the node's uids of its own.
  EXPECT_EQ(a.at("id"), "65534") << logs(a_id);
  const std::string a_root = host_uid_of_root(logs(a_id));
  const std::string b_root = host_uid_of_root(b_logs);
  EXPECT_NE(a_root, "0") << logs(a_id);
  EXPECT_NE(b_root, "0") << b_logs;
  EXPECT_NE(a_root, b_root) << "two tenants' containers share host uids";
  // No IPv6 address to reach the node by, and no user namespace to be root in.
  EXPECT_EQ(a.at("ipv6"), "0") << logs(a_id);
  EXPECT_EQ(a.at("userns"), "refused") << logs(a_id);
  EXPECT_EQ(b_seen.at("userns"), "refused") << b_logs;
  // It named no memory limit and has one all the same: its GPU's share of the node's.
  ASSERT_FALSE(a.at("memory").empty());
  EXPECT_NE(a.at("memory"), "max");
  EXPECT_LT(std::stoull(a.at("memory")), 1ULL << 62) << logs(a_id);
}

TEST_F(ContainerTest, AVolumeTakesNoMoreOfTheNodesDiskThanItsSize) {
  call("POST", "/v1/volumes", {{"name", "small"}, {"size_gb", 1}}, 201);
  // 1.2 GB into a 1 GB volume: the write fails inside, and the volume is still usable.
  const std::string id = launch(
      {{"gpus", 1},
       {"image", kImage},
       {"volumes", {{{"volume", "small"}, {"path", "/v"}}}},
       {"command",
        {"sh", "-c",
         "dd if=/dev/zero of=/v/big bs=1M count=1200 2>&1 | grep -o 'No space left on device'; "
         "rm /v/big; "
         "echo kept > /v/f && cat /v/f"}}});
  ASSERT_TRUE(instance_reaches(id, "succeeded")) << logs(id) << instance(id).dump();
  EXPECT_NE(logs(id).find("No space left on device"), std::string::npos) << logs(id);
  EXPECT_NE(logs(id).find("kept"), std::string::npos) << logs(id);
  // On the node, the volume is its own file system: what it holds is not the node's root disk's.
  std::ifstream mounts("/proc/self/mounts");
  bool own = false;
  for (std::string device, point, rest; mounts >> device >> point && std::getline(mounts, rest);) {
    own |= point.starts_with(dir_.path().string()) && device.starts_with("/dev/loop");
  }
  EXPECT_TRUE(own) << "no loop-mounted volume under the agents' directories";
}

// What the node's disk holds of an instance's output: the blocks of its log files.
int64_t log_blocks_on_disk(const std::filesystem::path& dir, const std::string& id) {
  int64_t bytes = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir, ec)) {
    const std::string path = entry.path().string();
    struct stat info{};
    if (path.find(id) != std::string::npos && entry.is_regular_file(ec) &&
        ::stat(path.c_str(), &info) == 0) {
      bytes += static_cast<int64_t>(info.st_blocks) * 512;
    }
  }
  return bytes;
}

TEST_F(ContainerTest, AFloodOfOutputIsBoundedOnTheNodeAndInTheStoreAndWhatWasDroppedIsSaid) {
  constexpr int64_t kWritten = 48'000'000;
  const std::string id =
      launch({{"gpus", 1},
              {"image", kImage},
              {"interactive", true},
              {"command",
               {"sh", "-c",
                fmt::format("head -c {} /dev/zero | tr '\\0' a; echo; echo last-line; sleep 3000",
                            kWritten)}}});
  ASSERT_TRUE(instance_reaches(id, "running"));
  json read;
  // The flood comes through podman at its own pace: up to a minute and a half in all.
  auto at_the_end = [&] {
    read = call("GET", "/v1/instances/" + id + "/logs?tail=1", nullptr, 200);
    return read.value("data", "") == "last-line\n";
  };
  ASSERT_TRUE(eventually(at_the_end) || eventually(at_the_end) || eventually(at_the_end))
      << read.dump().substr(0, 300);
  // Most of the flood was dropped on the node, and a reader from the start is told how much.
  int64_t dropped = 0;
  int64_t held = 0;
  for (int64_t offset = 0;;) {
    const json part =
        call("GET", fmt::format("/v1/instances/{}/logs?offset={}", id, offset), nullptr, 200);
    const auto data = part.value("data", "");
    if (data.empty()) break;
    dropped += part.value("dropped_bytes", int64_t{0});
    held += static_cast<int64_t>(data.size());
    offset = part.value("next_offset", offset);
  }
  EXPECT_GT(dropped, kWritten / 2);
  EXPECT_EQ(dropped + held, kWritten + 11);  // And "\nlast-line\n": every byte is one or other.
  // The node keeps a bounded part of it on its disk.
  const size_t i = agent_of(id);
  EXPECT_LT(log_blocks_on_disk(agents_[i].state_dir, id), 40'000'000);
}

class OrphanTest : public ContainerTest {
 protected:
  void SetUp() override {
    extra_agent_args_ = {"--orphan-timeout-s", "3"};
    ContainerTest::SetUp();
  }
};

TEST_F(OrphanTest, AContainerDoesNotOutliveItsKilledAgentByMoreThanTheOrphanTimeout) {
  // PID 1 of the workload ignores SIGTERM, as a careless or hostile image's may.
  const std::string id =
      launch({{"gpus", 1},
              {"image", kImage},
              {"interactive", true},
              {"command", {"sh", "-c", "trap '' TERM; while :; do sleep 1; done"}}});
  ASSERT_TRUE(instance_reaches(id, "running"));
  ASSERT_TRUE(eventually([&] { return !containers_of(id).empty(); }));
  kill_agent(agent_of(id));
  // 3 s of the agent's absence, SIGTERM, 10 s of grace, SIGKILL and the container's removal.
  EXPECT_TRUE(eventually([&] { return containers_of(id).empty(); })) << containers_of(id);
}

}  // namespace
}  // namespace allot::testing
