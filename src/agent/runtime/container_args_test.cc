// What the container runtime asks of podman, and what it reads back from podman and CDI specs,
// without running a container.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <gtest/gtest.h>

#include "agent/runtime/cdi.h"
#include "agent/runtime/container_runtime.h"
#include "agent/runtime/tenant_network.h"
#include "common/limits.h"

namespace allot::agent {
namespace {

bool has_pair(const std::vector<std::string>& args, const std::string& flag,
              const std::string& value) {
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == flag && args[i + 1] == value) return true;
  }
  return false;
}

TEST(ContainerArgsTest, AContainerIsConfinedAndGetsExactlyItsGpus) {
  const WorkloadSpec spec{.instance_id = "ins_00000000000000aa",
                          .argv = {"python", "train.py"},
                          .gpu_uuids = {"GPU-1", "GPU-2"},
                          .cpu_milli = 2500,
                          .memory_mib = 4096,
                          .image = "docker.io/library/python:3"};
  const ContainerOptions options{.cdi_kind = "nvidia.com/gpu", .owner = "abc", .pids_limit = 99};
  const auto args = container_run_args(spec, options, "allot-net", "/state/container.env",
                                       "/state/ins_00000000000000aa/notice");
  for (const auto& [flag, value] :
       {std::pair{"--cap-drop", "all"}, std::pair{"--security-opt", "no-new-privileges"},
        std::pair{"--network", "allot-net"}, std::pair{"--pids-limit", "99"},
        std::pair{"--cpus", "2.500"}, std::pair{"--memory", "4096m"},
        std::pair{"--device", "nvidia.com/gpu=GPU-1"},
        std::pair{"--device", "nvidia.com/gpu=GPU-2"},
        std::pair{"--label", "allot.instance=ins_00000000000000aa"},
        std::pair{"--env-file", "/state/container.env"}}) {
    EXPECT_TRUE(has_pair(args, flag, value)) << flag << " " << value;
  }
  EXPECT_NE(std::ranges::find(args, "--read-only"), args.end());
  // Nothing of the host but its own stop notice's directory, read-only: no privileged mode, host
  // network, other host paths or added capabilities.
  EXPECT_TRUE(has_pair(args, "--mount",
                       "type=bind,source=/state/ins_00000000000000aa/notice,destination=/run/"
                       "allot,ro=true"));
  EXPECT_EQ(std::ranges::count_if(
                args, [](const std::string& arg) { return arg.starts_with("type=bind"); }),
            1);
  for (const std::string& arg : args) {
    EXPECT_EQ(arg.find("privileged"), std::string::npos) << arg;
    EXPECT_EQ(arg.find("cap-add"), std::string::npos) << arg;
    EXPECT_NE(arg, "host");
    EXPECT_FALSE(arg.starts_with("--volume")) << arg;
  }
  // The image, then the command, last.
  ASSERT_GE(args.size(), 3u);
  EXPECT_EQ(args[args.size() - 3], "docker.io/library/python:3");
  EXPECT_EQ(args.back(), "train.py");
}

TEST(ContainerArgsTest, EachContainerHasItsOwnUidsAnInitNoIpv6AndNoUserNamespacesOfItsOwn) {
  const WorkloadSpec spec{.instance_id = "ins_00000000000000aa",
                          .argv = {"sleep", "1"},
                          .gpu_uuids = {"GPU-1"},
                          .image = "docker.io/library/busybox:1"};
  const ContainerOptions options{.seccomp_profile = "/state/seccomp.json"};
  const auto args = container_run_args(spec, options, "net", "/env", "/notice");
  for (const char* flag : {"--userns=auto", "--init"}) {
    EXPECT_NE(std::ranges::find(args, flag), args.end()) << flag;
  }
  EXPECT_TRUE(has_pair(args, "--sysctl", "net.ipv6.conf.all.disable_ipv6=1"));
  EXPECT_TRUE(has_pair(args, "--sysctl", "net.ipv6.conf.default.disable_ipv6=1"));
  EXPECT_TRUE(has_pair(args, "--security-opt", "seccomp=/state/seccomp.json"));
  EXPECT_TRUE(has_pair(args, "--label", "allot.gpus=GPU-1"));
}

TEST(ContainerArgsTest, AWorkloadThatNamesNoLimitsGetsItsGpusShareOfTheNodeNeverAllOfIt) {
  const ContainerOptions node{
      .node_cpu_milli = 64'000, .node_memory_mib = 1'024'000, .node_gpu_milli = 8'000};
  WorkloadSpec spec{.instance_id = "ins_00000000000000aa", .gpu_milli = 2'000};
  using Limits = std::pair<int64_t, int64_t>;
  EXPECT_EQ(container_limits(spec, node), Limits(16'000, 256'000));
  spec.gpu_milli = 250;  // A quarter of one GPU.
  EXPECT_EQ(container_limits(spec, node), Limits(2'000, 32'000));
  spec.cpu_milli = 500;  // What it asks for wins.
  spec.memory_mib = 100;
  EXPECT_EQ(container_limits(spec, node), Limits(500, 256));  // At least 256 MiB.
  // The flags always carry both.
  const auto args = container_run_args(WorkloadSpec{.gpu_milli = 1'000}, node, "n", "/e", "/n");
  EXPECT_TRUE(has_pair(args, "--cpus", "8.000"));
  EXPECT_TRUE(has_pair(args, "--memory", "128000m"));
  // A node that does not say what it has still gets limits, never unlimited.
  const auto bare = container_run_args(WorkloadSpec{}, ContainerOptions{}, "n", "/e", "/n");
  EXPECT_TRUE(has_pair(bare, "--cpus", "0.100"));
  EXPECT_TRUE(has_pair(bare, "--memory", "256m"));
}

TEST(ContainerArgsTest, APullsProgressFollowsPodmansAccountOfIt) {
  const auto path = std::filesystem::temp_directory_path() / "allot-pull-progress.log";
  EXPECT_EQ(pull_progress(path.string() + ".absent"), "pulling the image");
  std::ofstream(path) << "Trying to pull r.example/t/bb:1...\nGetting image source signatures\n"
                         "Copying blob sha256:52d4\nCopying blob sha256:77aa\n";
  EXPECT_EQ(pull_progress(path.string()), "pulling the image: copying layer 2");
  std::ofstream(path, std::ios::app) << "Copying config sha256:8c19\n";
  EXPECT_EQ(pull_progress(path.string()), "pulling the image: storing it on the node");
  std::filesystem::remove(path);
}

TEST(CdiSpecTest, TheNvidiaSpecIsReadFromItsYamlOrJsonAndNotFromAMention) {
  const CdiSpec yaml = read_cdi_spec(
      "---\ncdiVersion: 0.5.0\ncontainerEdits:\n  env:\n  - NVIDIA_VISIBLE_DEVICES=void\n"
      "devices:\n- containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia0\n"
      "  name: \"0\"\n- containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia0\n"
      "  name: GPU-8a3c\n- name: all\nkind: nvidia.com/gpu\n");
  EXPECT_EQ(yaml.kind, "nvidia.com/gpu");
  EXPECT_EQ(yaml.devices, (std::vector<std::string>{"0", "GPU-8a3c", "all"}));
  const CdiSpec json = read_cdi_spec(
      R"({"cdiVersion":"0.5.0","kind":"nvidia.com/gpu","devices":[{"name":"GPU-8a3c"}]})");
  EXPECT_EQ(json.kind, "nvidia.com/gpu");
  EXPECT_EQ(json.devices, std::vector<std::string>{"GPU-8a3c"});
  // A spec of another kind that mentions NVIDIA's does not count.
  const CdiSpec other = read_cdi_spec(
      "kind: vendor.example/fpga\n# see nvidia.com/gpu\ndevices:\n- name: GPU-8a3c\n");
  EXPECT_EQ(other.kind, "vendor.example/fpga");

  const auto dir = std::filesystem::temp_directory_path() / "allot-cdi-test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "other.yaml") << "kind: vendor.example/fpga\n# nvidia.com/gpu GPU-8a3c\n";
  EXPECT_FALSE(check_nvidia_cdi({"GPU-8a3c"}, {dir.string()}));
  std::ofstream(dir / "nvidia.json")
      << R"({"cdiVersion":"0.5.0","kind":"nvidia.com/gpu","devices":[{"name":"GPU-8a3c"}]})";
  EXPECT_TRUE(check_nvidia_cdi({"GPU-8a3c"}, {dir.string()}));
  const auto missing = check_nvidia_cdi({"GPU-8a3c", "GPU-ffff"}, {dir.string()});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("GPU-ffff"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(ContainerArgsTest, AnAgentSaysWhenTheHostsEphemeralPortsOverlapTheGangPorts) {
  const auto file =
      std::filesystem::temp_directory_path() / ("allot-port-range-" + std::to_string(::getpid()));
  auto clash_with = [&](const std::string& range) {
    std::ofstream(file) << range;
    return gang_port_clash(file.string());
  };
  EXPECT_EQ(clash_with("32768\t60999\n"), "");  // Linux's default: apart.
  EXPECT_EQ(clash_with("1024 27999\n"), "");
  const std::string clash = clash_with("20000\t60999\n");
  EXPECT_NE(clash.find("20000-60999"), std::string::npos) << clash;
  EXPECT_NE(clash.find(std::to_string(limits::kGangPortFirst)), std::string::npos) << clash;
  EXPECT_NE(clash.find("ip_local_reserved_ports"), std::string::npos) << clash;
  EXPECT_NE(clash_with("29000 29001"), "");
  EXPECT_EQ(clash_with("garbage"), "");
  std::filesystem::remove(file);
  EXPECT_EQ(gang_port_clash(file.string()), "");  // Unreadable: nothing to say.
}

}  // namespace
}  // namespace allot::agent
