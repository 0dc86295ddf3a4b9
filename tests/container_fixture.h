// The fixture of the container runtime's tests: allotd and two agents on the container runtime
// (podman), each simulating 8 GPUs as real device nodes given by CDI, busybox images made here,
// tenants of their own; and what the tests read of podman.
#pragma once

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "support/cluster.h"

namespace allot::testing {

inline constexpr std::string_view kImage = "localhost/allot-test-busybox:1";
inline constexpr std::string_view kUserImage = "localhost/allot-test-busybox-user:1";
// An image whose USER is root written as "00", which a check for "0" alone would miss.
inline constexpr std::string_view kRootZerosImage = "localhost/allot-test-busybox-root00:1";

inline RunResult podman(const std::vector<std::string>& args) {
  return run_program("/usr/bin/podman", args);
}

// key=value lines, as the probe scripts print them.
inline std::map<std::string, std::string> fields(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const size_t eq = line.find('=');
    if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return out;
}

class ContainerTest : public ClusterTest {
 protected:
  void SetUp() override {
    ASSERT_EQ(::geteuid(), 0u) << "the container runtime needs root (mknod, rootful podman)";
    build_images();
    agent_count_ = 2;
    runtime_ = "container";
    // A container agent's start asks podman several things before its first report; on a loaded
    // machine that can pass the usual 2 s, and a node must not be lost across a restart.
    heartbeat_timeout_ms_ = 10'000;
    // Where gang peers reach each node: an address of the host that is not its loopback (which,
    // inside a container, would be the container's own).
    address_ = host_address();
    ASSERT_FALSE(address_.empty()) << "the host has no IPv4 address but loopback";
    extra_agent_args_.insert(extra_agent_args_.end(), {"--address", address_});
    ClusterTest::SetUp();
  }

  void TearDown() override {
    ClusterTest::TearDown();
    // Local volumes are file systems of their own, loop-mounted under the agents' directories.
    std::ifstream mounts("/proc/self/mounts");
    for (std::string device, point, rest;
         mounts >> device >> point && std::getline(mounts, rest);) {
      if (point.starts_with(dir_.path().string())) {
        (void)run_program("/bin/umount", {"-l", point});
      }
    }
    // The agents' tenant networks outlive them (a restarted agent takes them up again).
    for (const AgentProcess& agent : agents_) {
      const std::string listed =
          podman({"network", "ls", "--filter", "label=allot.owner=" + owner_of(agent), "--format",
                  "{{.Name}}"})
              .out;
      std::istringstream names(listed);
      for (std::string name; std::getline(names, name);) {
        if (!name.empty()) (void)podman({"network", "rm", "-f", name});
      }
    }
    // Each agent wrote a CDI spec naming devices in this test's directory.
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/var/run/cdi", ec)) {
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      if (text.str().find(dir_.path().string()) != std::string::npos) {
        std::filesystem::remove(entry.path(), ec);
      }
    }
  }

  static std::string host_address() {
    ifaddrs* list = nullptr;
    if (::getifaddrs(&list) != 0) return "";
    std::string found;
    for (ifaddrs* it = list; it != nullptr && found.empty(); it = it->ifa_next) {
      if (it->ifa_addr == nullptr || it->ifa_addr->sa_family != AF_INET ||
          (it->ifa_flags & IFF_LOOPBACK) != 0) {
        continue;
      }
      char text[INET_ADDRSTRLEN] = {};
      ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(it->ifa_addr)->sin_addr, text,
                  sizeof(text));
      found = text;
    }
    ::freeifaddrs(list);
    return found;
  }

  std::string address_;

  // The label an agent gives its containers and networks (a hash of its workloads directory).
  static std::string owner_of(const AgentProcess& agent) {
    return fmt::format("{:016x}",
                       std::hash<std::string>{}(
                           std::filesystem::absolute(agent.state_dir / "workloads").string()));
  }

  // A busybox image made here (no registry is reachable): every applet linked in /bin, and the
  // same with a USER of its own.
  void build_images() {
    // Made once per machine: a new import each time would leave the last one behind untagged.
    if (podman({"image", "exists", std::string(kImage)}).exit_code == 0 &&
        podman({"image", "exists", std::string(kUserImage)}).exit_code == 0 &&
        podman({"image", "exists", std::string(kRootZerosImage)}).exit_code == 0) {
      return;
    }
    const auto root = dir_.path() / "rootfs";
    std::filesystem::create_directories(root / "bin");
    std::filesystem::create_directories(root / "etc");
    std::filesystem::create_directories(root / "tmp");
    std::filesystem::copy_file("/bin/busybox", root / "bin/busybox");
    std::istringstream applets(run_program("/bin/busybox", {"--list"}).out);
    for (std::string applet; std::getline(applets, applet);) {
      if (applet != "busybox") std::filesystem::create_symlink("busybox", root / "bin" / applet);
    }
    std::ofstream(root / "etc/passwd") << "root:x:0:0:root:/root:/bin/sh\n";
    const std::string tar = (dir_.path() / "rootfs.tar").string();
    ASSERT_EQ(run_program("/bin/tar", {"-C", root.string(), "-cf", tar, "."}).exit_code, 0);
    for (const auto& [image, user] :
         {std::pair{kImage, std::string()}, std::pair{kUserImage, std::string("4321:4321")},
          std::pair{kRootZerosImage, std::string("00")}}) {
      std::vector<std::string> args = {"import", "--change", "CMD [\"/bin/sh\"]"};
      if (!user.empty()) args.insert(args.end(), {"--change", "USER " + user});
      args.insert(args.end(), {tar, std::string(image)});
      const RunResult imported = podman(args);
      ASSERT_EQ(imported.exit_code, 0) << imported.err;
    }
  }

  struct Tenant {
    std::string project_id;
    std::string key;
  };

  Tenant make_tenant(const std::string& name) {
    const std::string op = daemon_.admin_key();
    auto send = [&](const std::string& path, const nlohmann::json& body) {
      return nlohmann::json::parse(daemon_.request("POST", path, body.dump(), op).body, nullptr,
                                   false);
    };
    const std::string tenant = send("/v1/tenants", {{"name", name}}).value("id", "");
    Tenant out;
    out.project_id = send("/v1/projects", {{"name", "p"}, {"tenant_id", tenant}}).value("id", "");
    const std::string user =
        send("/v1/users", {{"name", name}, {"email", name + "@x"}, {"tenant_id", tenant}})
            .value("id", "");
    out.key = send("/v1/keys", {{"name", "k"}, {"user_id", user}}).value("secret", "");
    return out;
  }

  std::string launch_as(const Tenant& tenant, nlohmann::json body) {
    body["project_id"] = tenant.project_id;
    const ClientResponse response =
        daemon_.request("POST", "/v1/instances", body.dump(), tenant.key);
    EXPECT_EQ(response.status, 201) << response.body;
    return nlohmann::json::parse(response.body, nullptr, false).value("id", "");
  }

  // The names of the containers carrying an instance's label, ended ones included.
  static std::string containers_of(const std::string& id) {
    return podman({"ps", "-a", "--filter", "label=allot.instance=" + id, "--format", "{{.Names}}"})
        .out;
  }

  static std::string address_of(const std::string& id) {
    std::string ip = podman({"inspect", "allot-" + id, "--format",
                             "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}"})
                         .out;
    while (!ip.empty() && ip.back() == '\n') ip.pop_back();
    return ip;
  }

  size_t agent_of(const std::string& instance_id) {
    const std::string node_id = instance(instance_id).value("node_id", "");
    for (const nlohmann::json& node : nodes()) {
      if (node["id"] == node_id) return std::stoul(node["name"].get<std::string>().substr(5));
    }
    ADD_FAILURE() << "no node for " << instance_id;
    return 0;
  }
};

// A TCP listener on every address of the host: what a container must not reach through its
// network's gateway.
struct HostListener {
  HostListener() {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_ANY);
    socklen_t size = sizeof(address);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
        ::listen(fd, 16) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
      ADD_FAILURE() << "cannot listen on the host";
    }
    port = ntohs(address.sin_port);
  }
  ~HostListener() { ::close(fd); }
  int fd = -1;
  int port = 0;
};

}  // namespace allot::testing
