// allotd and two agents on the container runtime (podman), each simulating 8 GPUs as real device
// nodes given by CDI, and two tenants: what one tenant's container can reach of the node, of the
// controller and of the other tenant; re-adoption after an agent restart; bad images and commands.
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include "common/limits.h"
#include "container_fixture.h"

namespace allot::testing {
namespace {

using nlohmann::json;

TEST_F(ContainerTest, AContainerHasItsGpusAndNothingOfTheNodeTheControllerOrAnotherTenant) {
  const Tenant b = make_tenant("bravo");
  // B's container keeps a file and a listener; a second container of B's shows that its own
  // tenant can reach the listener, so that A's failure to is the wall and not a broken network.
  const std::string b_id = launch_as(
      b, {{"gpus", 1},
          {"image", kImage},
          {"interactive", true},
          {"command",
           {"sh", "-c",
            "echo b-secret > /tmp/b-file; (while true; do echo hi | nc -l -p 8080; done) & "
            "exec sleep 3001"}}});
  auto state_of = [&](const std::string& id) {
    const ClientResponse got = daemon_.request("GET", "/v1/instances/" + id, "", b.key);
    return json::parse(got.body, nullptr, false);
  };
  auto b_reaches = [&](const std::string& id, const std::string& state) {
    return eventually([&] { return state_of(id)["state"] == state; });
  };
  ASSERT_TRUE(b_reaches(b_id, "running")) << state_of(b_id).dump();
  std::string b_ip;
  ASSERT_TRUE(eventually([&] { return !(b_ip = address_of(b_id)).empty(); }));
  const std::string b_peer = launch_as(
      b, {{"gpus", 1},
          {"image", kImage},
          {"command", {"sh", "-c", "nc -w 3 " + b_ip + " 8080 </dev/null && echo peer=reached"}}});
  ASSERT_TRUE(b_reaches(b_peer, "succeeded")) << state_of(b_peer).dump();

  HostListener host;
  const std::string api_port = daemon_.url().substr(daemon_.url().rfind(':') + 1);
  const std::string state_dir = agents_[0].state_dir.string();
  const std::string probe =
      "echo gpus=$(ls /dev | grep -c '^nvidia[0-9]')\n"
      "echo uid=$(id -u)\n"
      "cat " +
      state_dir +
      "/node.json >/dev/null 2>&1 && echo state=read || echo state=hidden\n"
      "echo bfile=$(cat /tmp/b-file 2>/dev/null || echo none)\n"
      "echo bprocs=$(ps | grep -c 'sleep 300[1]')\n"
      "nc -w 2 127.0.0.1 $API_PORT </dev/null && echo api=reached || echo api=refused\n"
      "gw=$(ip route | awk '/default/ {print $3}')\n"
      "nc -w 2 $gw $HOST_PORT </dev/null && echo host=reached || echo host=refused\n"
      "nc -w 2 $B_IP 8080 </dev/null && echo peer=reached || echo peer=refused\n"
      "echo caps=$(awk '/CapEff/ {print $2}' /proc/self/status)\n"
      "touch /bin/x 2>/dev/null && echo rootfs=writable || echo rootfs=readonly\n"
      "echo scratch > /tmp/s && echo tmp=writable\n"
      "echo cuda=$CUDA_VISIBLE_DEVICES\n"
      "echo envkeys=$(env | grep -c -i -e allot_node_ -e join_token -e allot_key)\n"
      "echo hostname=$(hostname)\n";
  const std::string a_id = launch(
      {{"gpus", 2},
       {"image", kImage},
       {"env", {{"API_PORT", api_port}, {"HOST_PORT", std::to_string(host.port)}, {"B_IP", b_ip}}},
       {"command", {"sh", "-c", probe}}});
  ASSERT_TRUE(instance_reaches(a_id, "succeeded")) << instance(a_id).dump() << logs(a_id);
  const json a = instance(a_id);
  auto seen = fields(logs(a_id));  // A missing line reads as "".
  EXPECT_EQ(seen["gpus"], "2") << logs(a_id);
  EXPECT_NE(seen["uid"], "0");
  EXPECT_EQ(seen["state"], "hidden");
  EXPECT_EQ(seen["bfile"], "none");
  EXPECT_EQ(seen["bprocs"], "0");
  EXPECT_EQ(seen["api"], "refused");
  EXPECT_EQ(seen["host"], "refused");
  EXPECT_EQ(seen["peer"], "refused");
  EXPECT_EQ(seen["caps"], "0000000000000000");
  EXPECT_EQ(seen["rootfs"], "readonly");
  EXPECT_EQ(seen["tmp"], "writable");
  EXPECT_EQ(seen["envkeys"], "0");
  EXPECT_EQ(seen["hostname"], a_id);
  std::string uuids;
  for (const json& uuid : a["gpu_uuids"])
    uuids += (uuids.empty() ? "" : ",") + uuid.get<std::string>();
  EXPECT_EQ(seen["cuda"], uuids);
  const ClientResponse peer_logs =
      daemon_.request("GET", "/v1/instances/" + b_peer + "/logs", "", b.key);
  EXPECT_EQ(json::parse(peer_logs.body, nullptr, false).value("data", ""), "hi\npeer=reached\n");

  // B's key does not open A's logs, nor A's instance.
  EXPECT_EQ(daemon_.request("GET", "/v1/instances/" + a_id + "/logs", "", b.key).status, 404);
  EXPECT_EQ(daemon_.request("GET", "/v1/instances/" + a_id, "", b.key).status, 404);
  // A's ended container is gone from the node.
  EXPECT_TRUE(eventually([&] { return containers_of(a_id).empty(); })) << containers_of(a_id);
}

TEST_F(ContainerTest, TheImagesUserIsKeptAndARootImageRunsUnprivileged) {
  const std::string own = launch({{"gpus", 1}, {"image", kUserImage}, {"command", {"id", "-u"}}});
  const std::string root = launch({{"gpus", 1}, {"image", kImage}, {"command", {"id", "-u"}}});
  ASSERT_TRUE(instance_reaches(own, "succeeded")) << instance(own).dump();
  ASSERT_TRUE(instance_reaches(root, "succeeded")) << instance(root).dump();
  EXPECT_EQ(logs(own), "4321\n");
  EXPECT_EQ(logs(root), "65534\n");
}

TEST_F(ContainerTest, AnAgentRestartReadoptsItsContainersRemovesStraysAndAStopLeavesNone) {
  const std::string id = launch(
      {{"gpus", 1}, {"image", kImage}, {"interactive", true}, {"command", {"sleep", "3000"}}});
  ASSERT_TRUE(instance_reaches(id, "running"));
  ASSERT_TRUE(eventually([&] { return !containers_of(id).empty(); }));
  const size_t i = agent_of(id);
  // A container under the agent's label that no workload of its accounts for (a running agent
  // looks for such only when it opens).
  const std::string owner = owner_of(agents_[i]);
  const RunResult stray = podman(
      {"run", "-d", "--name", "allot-stray-" + owner, "--label", "allot.owner=" + owner, "--ulimit",
       "nofile=1024:1024", "--ulimit", "nproc=1024:1024", std::string(kImage), "sleep", "3000"});
  ASSERT_EQ(stray.exit_code, 0) << stray.err;
  kill_agent(i);
  start_agent(i);
  EXPECT_TRUE(eventually([&] {
    return podman({"ps", "-a", "--filter", "name=allot-stray-" + owner, "--format", "{{.Names}}"})
        .out.empty();
  }));
  // The instance ran on throughout: the same container, still running.
  EXPECT_EQ(instance(id)["state"], "running");
  EXPECT_EQ(containers_of(id), "allot-" + id + "\n");

  call("POST", "/v1/instances/" + id + "/stop", nullptr, 200);
  ASSERT_TRUE(instance_reaches(id, "stopped"));
  EXPECT_TRUE(eventually([&] { return containers_of(id).empty(); })) << containers_of(id);
  // Stopped with no work running, the agent leaves no tenant network behind.
  stop_agent(i);
  EXPECT_EQ(
      podman({"network", "ls", "--filter", "label=allot.owner=" + owner, "--format", "{{.Name}}"})
          .out,
      "");
}

TEST_F(ContainerTest, AStoppedContainerReadsItsStopNoticeAndCannotWriteIt) {
  // The notice's directory is there, empty and read-only, until a stop; the SIGTERM finds the
  // notice in it.
  const std::string script =
      "echo \"notice=$ALLOT_STOP_NOTICE\"; ls -A /run/allot | wc -l | sed 's/^ */files=/'; "
      "touch /run/allot/x 2>/dev/null && echo write=yes || echo write=no; "
      "trap 'echo; cat \"$ALLOT_STOP_NOTICE\"; echo; exit 0' TERM; echo ready=1; "
      "sleep 3000 & wait";
  const std::string id = launch({{"gpus", 1},
                                 {"image", kImage},
                                 {"interactive", true},
                                 {"command", {"/bin/sh", "-c", script}}});
  ASSERT_TRUE(eventually([&] { return logs(id).find("ready=1") != std::string::npos; }))
      << logs(id) << instance(id).dump();
  const auto seen = fields(logs(id));
  EXPECT_EQ(seen.at("notice"), "/run/allot/stop.json");
  EXPECT_EQ(seen.at("files"), "0");
  EXPECT_EQ(seen.at("write"), "no");

  call("POST", "/v1/instances/" + id + "/stop", nullptr, 200);
  ASSERT_TRUE(instance_reaches(id, "stopped"));
  ASSERT_TRUE(eventually([&] { return logs(id).find("\"reason\"") != std::string::npos; }))
      << logs(id);
  const std::string text = logs(id);
  const json notice =
      json::parse(text.substr(text.find('{'), text.rfind('}') - text.find('{') + 1));
  EXPECT_EQ(notice["reason"], "stopped");
  EXPECT_EQ(notice["grace_ms"], 500);
}

TEST_F(ContainerTest, AVolumeIsMountedAtItsPathAndAReaderCannotWriteIt) {
  call("POST", "/v1/volumes", {{"name", "data"}, {"size_gb", 1}}, 201);
  const std::string writer = launch(
      {{"gpus", 1},
       {"image", kImage},
       {"volumes", {{{"volume", "data"}, {"path", "/data"}}}},
       {"command", {"/bin/sh", "-c", "echo kept > /data/f && echo var=$ALLOT_VOLUME_DATA"}}});
  ASSERT_TRUE(instance_reaches(writer, "succeeded")) << logs(writer) << instance(writer).dump();
  EXPECT_EQ(logs(writer), "var=/data\n");
  const std::string reader =
      launch({{"gpus", 1},
              {"image", kImage},
              {"volumes", {{{"volume", "data"}, {"path", "/in"}, {"read_only", true}}}},
              {"command",
               {"/bin/sh", "-c",
                "cat /in/f; touch /in/g 2>/dev/null && echo write=yes || echo write=no"}}});
  ASSERT_TRUE(instance_reaches(reader, "succeeded")) << logs(reader) << instance(reader).dump();
  EXPECT_EQ(instance(reader)["node_id"], instance(writer)["node_id"]);
  EXPECT_EQ(logs(reader), "kept\nwrite=no\n");
}

TEST_F(ContainerTest, APublishedPortAnExecAndAPortForwardReachIntoTheContainerAlone) {
  // A web server on the container's network, and a second one on its loopback only (reached by
  // port-forward, which the node reaches from inside the container's network namespace).
  const std::string id =
      launch({{"gpus", 1},
              {"image", kImage},
              {"interactive", true},
              {"ports", {8080}},
              {"command",
               {"/bin/sh", "-c",
                "mkdir -p /tmp/www && echo hello-from-container > /tmp/www/index.html && "
                "httpd -p 127.0.0.1:9090 -h /tmp/www && exec httpd -f -p 8080 -h /tmp/www"}}});
  ASSERT_TRUE(instance_reaches(id, "running")) << logs(id) << instance(id).dump();
  const std::string page = fmt::format("/i/{}/8080/index.html", id);
  ClientResponse got;
  ASSERT_TRUE(eventually([&] {
    got = daemon_.request("GET", page, "", member_key_);
    return got.status == 200;
  })) << got.status
      << got.body << logs(id);
  EXPECT_EQ(got.body, "hello-from-container\n");
  EXPECT_EQ(daemon_.request("GET", page, "", make_tenant("rival").key).status, 404);
  EXPECT_EQ(daemon_.request("GET", page, "", "").status, 401);

  // exec runs inside the container: its hostname, its user, its files, and the exit code back.
  const RunResult inside =
      cli({"exec", id, "--", "sh", "-c", "hostname; cat /tmp/www/index.html; exit 4"}, member_key_);
  EXPECT_EQ(inside.exit_code, 4) << inside.err;
  EXPECT_EQ(inside.out, id.substr(0, 63) + "\nhello-from-container\n") << inside.out;

  // The loopback-only server, through a TCP stream to port 9090.
  const RunResult forwarded = run_program(
      "/bin/sh",
      {"-c",
       fmt::format("{0}/src/cli/allot port-forward {1} 0:9090 > {2}/fw.out & pid=$!; "
                   "for i in $(seq 50); do grep -q forwarding {2}/fw.out 2>/dev/null && break; "
                   "sleep 0.1; done; port=$(sed -n 's/.*:\\([0-9]*\\) to.*/\\1/p' {2}/fw.out); "
                   "printf 'GET /index.html HTTP/1.0\\r\\n\\r\\n' | busybox nc 127.0.0.1 $port; "
                   "kill $pid",
                   bin_dir(), id, dir_.path().string())},
      {"ALLOT_SERVER=" + daemon_.url(), "ALLOT_KEY=" + member_key_, "HOME=/nonexistent"});
  EXPECT_NE(forwarded.out.find("hello-from-container"), std::string::npos)
      << forwarded.out << forwarded.err;
}

TEST_F(ContainerTest, BadImagesAndCommandsFailTheInstanceWithTheReasonAndLeaveNothing) {
  const ClientResponse malformed = daemon_.request("POST", "/v1/instances",
                                                   json{{"project_id", project_id_},
                                                        {"gpus", 1},
                                                        {"image", "Not An/Image"},
                                                        {"command", {"true"}}}
                                                       .dump(),
                                                   member_key_);
  EXPECT_EQ(malformed.status, 400);
  EXPECT_NE(malformed.body.find("invalid_argument"), std::string::npos) << malformed.body;
  // Nothing in a launch can ask for more of the node: no capability, privilege or host path.
  for (const char* field : {"privileged", "cap_add", "devices", "network"}) {
    const ClientResponse refused = daemon_.request(
        "POST", "/v1/instances",
        json{{"project_id", project_id_},
             {"gpus", 1},
             {"image", kImage},
             {"command", {"true"}},
             {field, field == std::string("privileged") ? json(true) : json::array({"/:/host"})}}
            .dump(),
        member_key_);
    EXPECT_EQ(refused.status, 400) << field;
    EXPECT_NE(refused.body.find("unknown_field"), std::string::npos) << refused.body;
  }
  // Volumes are the tenant's own, by name: a host path is none of them.
  for (const json& volumes :
       {json::array({"/:/host"}), json::array({{{"volume", "/"}, {"path", "/host"}}}),
        json::array({{{"volume", "../../etc"}, {"path", "/host"}}})}) {
    const ClientResponse refused = daemon_.request("POST", "/v1/instances",
                                                   json{{"project_id", project_id_},
                                                        {"gpus", 1},
                                                        {"image", kImage},
                                                        {"command", {"true"}},
                                                        {"volumes", volumes}}
                                                       .dump(),
                                                   member_key_);
    EXPECT_TRUE(refused.status == 400 || refused.status == 404) << refused.body;
  }

  const std::string missing_image =
      launch({{"gpus", 1}, {"image", "localhost/allot-no-such-image:1"}, {"command", {"true"}}});
  const std::string missing_command =
      launch({{"gpus", 1}, {"image", kImage}, {"command", {"/no/such/program"}}});
  const std::string no_image = launch({{"gpus", 1}, {"command", {"true"}}});
  for (const std::string& id : {missing_image, missing_command, no_image}) {
    ASSERT_TRUE(instance_reaches(id, "failed")) << instance(id).dump();
  }
  EXPECT_NE(instance(missing_image).dump().find("allot-no-such-image"), std::string::npos)
      << instance(missing_image).dump();
  EXPECT_NE(instance(missing_command).dump().find("/no/such/program"), std::string::npos)
      << instance(missing_command).dump();
  EXPECT_NE(instance(no_image).dump().find("image"), std::string::npos)
      << instance(no_image).dump();
  for (const std::string& id : {missing_image, missing_command, no_image}) {
    EXPECT_TRUE(eventually([&] { return containers_of(id).empty(); })) << id;
  }
}

TEST_F(ContainerTest, AGangsMembersReachEachOtherAcrossNodesAndNoOtherTenantReachesThem) {
  // Rank 0 answers on its first gang port; rank 1 calls it at MASTER_ADDR:MASTER_PORT.
  const std::string script =
      "if [ \"$ALLOT_GANG_RANK\" = 0 ]; then\n"
      "  while true; do nc -l -p \"$ALLOT_GANG_PORT\" -e sh -c 'read l; echo \"got $l\" >&2; "
      "echo pong'; done\n"
      "else\n"
      "  for i in $(seq 60); do\n"
      "    out=$(echo ping | nc \"$MASTER_ADDR\" \"$MASTER_PORT\" 2>/dev/null) && [ -n \"$out\" ] "
      "&& "
      "echo \"$out\" && exit 0\n"
      "    sleep 1\n"
      "  done; exit 1\n"
      "fi\n";
  const ClientResponse launched = daemon_.request("POST", "/v1/instances",
                                                  json{{"project_id", project_id_},
                                                       {"gpus", 1},
                                                       {"nodes", 2},
                                                       {"image", kImage},
                                                       {"command", {"sh", "-c", script}}}
                                                      .dump(),
                                                  member_key_);
  ASSERT_EQ(launched.status, 201) << launched.body;
  const json gang = json::parse(launched.body);
  ASSERT_EQ(gang["members"].size(), 2u) << gang.dump();
  const std::string leader = gang["members"][0];
  const std::string follower = gang["members"][1];
  ASSERT_TRUE(instance_reaches(leader, "running"))
      << instance(leader).dump() << instance(follower).dump();
  EXPECT_NE(instance(leader)["node_id"], instance(follower)["node_id"]);

  ASSERT_TRUE(instance_reaches(follower, "succeeded"))
      << instance(follower).dump() << logs(follower) << logs(leader);
  EXPECT_EQ(logs(follower), "pong\n");
  EXPECT_TRUE(eventually([&] { return logs(leader).find("got ping") != std::string::npos; }))
      << logs(leader);
  // The leader's ports are published on its node, and the address is the node's.
  const std::string published = podman({"port", "allot-" + leader}).out;
  EXPECT_NE(published.find(fmt::format("{}/tcp", limits::kGangPortFirst)), std::string::npos)
      << published;

  // Another tenant's container, on either node, cannot reach them.
  const Tenant b = make_tenant("bravo-gang");
  for (int i = 0; i < 2; ++i) {
    const std::string probe =
        launch_as(b, {{"gpus", 1},
                      {"image", kImage},
                      {"command",
                       {"sh", "-c",
                        fmt::format("echo intruder | nc -w 3 {} {} && echo reached || echo refused",
                                    address_, limits::kGangPortFirst)}}});
    auto state = [&] {
      return json::parse(daemon_.request("GET", "/v1/instances/" + probe, "", b.key).body);
    };
    ASSERT_TRUE(eventually([&] { return state()["state"] == "succeeded"; })) << state().dump();
    const std::string said =
        json::parse(daemon_.request("GET", "/v1/instances/" + probe + "/logs", "", b.key).body)
            .value("data", "");
    EXPECT_EQ(said.find("reached"), std::string::npos) << said;
  }
  EXPECT_EQ(logs(leader).find("intruder"), std::string::npos) << logs(leader);

  // The gang's way through the walls goes with it.
  operator_call("POST", "/v1/instances/" + leader + "/stop", 200);
  ASSERT_TRUE(instance_reaches(leader, "stopped"));
  EXPECT_TRUE(eventually([&] {
    return run_program("/usr/sbin/iptables", {"-w", "-S", "ALLOT-ISOLATION"}).out.find(leader) ==
           std::string::npos;
  }));
}

TEST(AgentRuntimeTest, AnAgentWithoutAWorkingPodmanRefusesToStartAndSaysWhatToDo) {
  TempDir dir;
  const RunResult refused = run_program(
      bin_dir() + "/src/agent/allot-agent",
      {"--server", "http://127.0.0.1:9", "--state-dir", (dir.path() / "state").string(),
       "--join-token", "t", "--simulate", "1xH100-80GB", "--podman", "/nonexistent/podman"});
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("install podman"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--runtime process"), std::string::npos) << refused.err;
  // Nothing joined, nothing written that a later start would mistake for a node.
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "state" / "node.json"));
}

// A private registry on loopback (Debian's docker-registry, with a password), holding the test
// image; the agents pull from it over plain HTTP.
class RegistryTest : public ContainerTest {
 protected:
  void SetUp() override {
    HostListener probe;  // A free port, given back for the registry.
    port_ = probe.port;
    ::close(probe.fd);
    probe.fd = -1;
    host_ = "127.0.0.1:" + std::to_string(port_);
    const auto dir = dir_.path() / "registry";
    std::filesystem::create_directories(dir / "data");
    const RunResult hash = run_program("/usr/bin/htpasswd", {"-Bbn", "alice", "s3cret-pw"});
    ASSERT_EQ(hash.exit_code, 0) << hash.err;
    std::ofstream(dir / "htpasswd") << hash.out;
    std::ofstream(dir / "config.yml")
        << "version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: " << (dir / "data").string()
        << "\nhttp:\n  addr: " << host_
        << "\nauth:\n  htpasswd:\n    realm: allot\n    path: " << (dir / "htpasswd").string()
        << "\n";
    registry_pid_ =
        spawn_program("/usr/bin/docker-registry", {"serve", (dir / "config.yml").string()}, {},
                      dir / "out", dir / "err");
    extra_agent_args_ = {"--insecure-registry", host_};
    ContainerTest::SetUp();
    image_ = host_ + "/team/busybox:1";
    RunResult pushed;
    ASSERT_TRUE(eventually([&] {
      pushed = run_program("/usr/bin/skopeo",
                           {"copy", "--dest-tls-verify=false", "--dest-creds", "alice:s3cret-pw",
                            "containers-storage:" + std::string(kImage), "docker://" + image_});
      return pushed.exit_code == 0;
    })) << pushed.err;
    // The node must not have it from the push: every pull below goes to the registry.
    (void)podman({"rmi", "-f", image_});
  }

  void TearDown() override {
    ContainerTest::TearDown();
    if (registry_pid_ > 0) {
      ::kill(registry_pid_, SIGTERM);
      wait_for_exit(registry_pid_, std::chrono::seconds(10));
    }
    (void)podman({"rmi", "-f", image_});
  }

  std::string tenant_of_member() {
    return operator_call("GET", "/v1/projects/" + project_id_, 200).value("tenant_id", "");
  }

  int port_ = 0;
  std::string host_;
  std::string image_;
  pid_t registry_pid_ = -1;
};

TEST_F(RegistryTest, ATenantsStoredCredentialPullsItsPrivateImageAndNoOtherTenantGetsIt) {
  const std::string tenant = tenant_of_member();
  const std::string op = daemon_.admin_key();
  // Bad input changes nothing: a malformed host, an empty password, another tenant's key.
  const Tenant b = make_tenant("bravo");
  for (const auto& [body, key, status] :
       {std::tuple{json{{"host", "not a host"}, {"username", "alice"}, {"password", "x"}}, op, 400},
        std::tuple{json{{"host", host_}, {"username", "alice"}, {"password", ""}}, op, 400},
        std::tuple{
            json{{"host", host_}, {"username", "alice"}, {"password", "x"}, {"tenant_id", tenant}},
            b.key, 404},
        std::tuple{json{{"host", host_}, {"username", "alice"}, {"password", "x"}}, member_key_,
                   403}}) {
    json sent = body;
    if (!sent.contains("tenant_id") && key == op) sent["tenant_id"] = tenant;
    const ClientResponse refused = daemon_.request("PUT", "/v1/registries", sent.dump(), key);
    EXPECT_EQ(refused.status, status) << sent.dump() << " " << refused.body;
  }
  EXPECT_EQ(json::parse(daemon_.request("GET", "/v1/registries", "", op).body)["items"].size(), 0u);

  // Without a credential the registry refuses the pull, and the instance fails with its reason.
  const std::string refused = launch({{"gpus", 1}, {"image", image_}, {"command", {"true"}}});
  ASSERT_TRUE(instance_reaches(refused, "failed")) << instance(refused).dump();
  EXPECT_NE(instance(refused).value("reason", "").find("authentication required"),
            std::string::npos)
      << instance(refused).dump();

  const ClientResponse set = daemon_.request(
      "PUT", "/v1/registries",
      json{{"host", host_}, {"username", "alice"}, {"password", "s3cret-pw"}, {"tenant_id", tenant}}
          .dump(),
      op);
  ASSERT_EQ(set.status, 200) << set.body;
  EXPECT_EQ(set.body.find("s3cret"), std::string::npos);
  const RunResult listed = cli({"registries", "list"}, member_key_);
  EXPECT_EQ(listed.exit_code, 0);
  EXPECT_NE(listed.out.find(host_), std::string::npos) << listed.out;
  EXPECT_EQ(listed.out.find("s3cret"), std::string::npos);
  // Sealed at rest: the password is nowhere in allotd's database.
  for (const auto& entry : std::filesystem::recursive_directory_iterator(daemon_.data_dir())) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(bytes.find("s3cret-pw"), std::string::npos) << entry.path();
  }

  const std::string pulled = launch({{"gpus", 1}, {"image", image_}, {"command", {"id", "-u"}}});
  ASSERT_TRUE(instance_reaches(pulled, "succeeded")) << instance(pulled).dump();
  EXPECT_EQ(logs(pulled), "65534\n");

  // The image is on the node now; tenant B, without a credential, still does not get it.
  const ClientResponse b_launch = daemon_.request(
      "POST", "/v1/instances",
      json{{"project_id", b.project_id}, {"gpus", 1}, {"image", image_}, {"command", {"true"}}}
          .dump(),
      b.key);
  ASSERT_EQ(b_launch.status, 201) << b_launch.body;
  const std::string b_id = json::parse(b_launch.body).value("id", "");
  auto b_state = [&] {
    return json::parse(daemon_.request("GET", "/v1/instances/" + b_id, "", b.key).body);
  };
  ASSERT_TRUE(eventually([&] { return b_state()["state"] == "failed"; })) << b_state().dump();
  EXPECT_NE(b_state().value("reason", "").find("authentication required"), std::string::npos);

  const ClientResponse removed =
      daemon_.request("DELETE", "/v1/registries/" + host_ + "?tenant_id=" + tenant, "", op);
  EXPECT_EQ(removed.status, 200) << removed.body;
  EXPECT_EQ(json::parse(daemon_.request("GET", "/v1/registries", "", op).body)["items"].size(), 0u);
}

TEST_F(RegistryTest, AnOperatorPrePullsAPrivateImageOntoEveryNodeWithItsOwnCredential) {
  const std::string op = daemon_.admin_key();
  // Operator admins only; a pool no node is in, a malformed or node-local image: refused.
  EXPECT_EQ(daemon_.request("GET", "/v1/images", "", member_key_).status, 403);
  for (const auto& [body, code] :
       {std::pair{json{{"image", image_}, {"pool", "nowhere"}}, "conflict"},
        std::pair{json{{"image", "Not An/Image"}}, "invalid_argument"},
        std::pair{json{{"image", std::string(kImage)}}, "invalid_argument"},
        std::pair{json{{"image", image_}, {"force", true}}, "unknown_field"}}) {
    const ClientResponse refused = daemon_.request("POST", "/v1/images/pulls", body.dump(), op);
    EXPECT_NE(refused.body.find(code), std::string::npos) << body.dump() << " " << refused.body;
  }
  EXPECT_EQ(operator_call("GET", "/v1/images/pulls", 200)["items"].size(), 0u);

  // The operator's tenant has no credential yet: each node fails with the registry's reason.
  const RunResult unauthorized = cli({"images", "pull", image_, "--wait"}, op);
  EXPECT_EQ(unauthorized.exit_code, 1) << unauthorized.out << unauthorized.err;
  EXPECT_NE(unauthorized.out.find("authentication required"), std::string::npos)
      << unauthorized.out;

  ASSERT_EQ(
      daemon_
          .request("PUT", "/v1/registries",
                   json{{"host", host_}, {"username", "alice"}, {"password", "s3cret-pw"}}.dump(),
                   op)
          .status,
      200);
  const RunResult pulled = cli({"images", "pull", image_, "--wait"}, op);
  ASSERT_EQ(pulled.exit_code, 0) << pulled.out << pulled.err;
  EXPECT_EQ(pulled.out.find("failed"), std::string::npos) << pulled.out;
  EXPECT_EQ(podman({"image", "exists", image_}).exit_code, 0);

  // Each node's listing shows it, with its image store's size, once its agent has looked again.
  ASSERT_TRUE(eventually([&] {
    const json nodes = operator_call("GET", "/v1/images", 200)["items"];
    int holding = 0;
    for (const json& node : nodes) {
      std::set<std::string> ids;  // Each image once, whatever names it has.
      for (const json& image : node["images"]) {
        EXPECT_TRUE(ids.insert(image["id"].get<std::string>()).second) << image.dump();
        holding += image["names"].dump().find(image_) != std::string::npos ? 1 : 0;
      }
    }
    return holding == 2;
  })) << operator_call("GET", "/v1/images", 200).dump();
  const json node = operator_call("GET", "/v1/images", 200)["items"][0];
  EXPECT_GT(node["store_total_bytes"].get<int64_t>(), node["store_free_bytes"].get<int64_t>());
  EXPECT_GT(node["images_bytes"].get<int64_t>(), 0);
  const RunResult listed = cli({"images", "list"}, op);
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find(image_), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("FREE"), std::string::npos) << listed.out;
  const RunResult history = cli({"images", "pulls"}, op);
  EXPECT_NE(history.out.find(image_), std::string::npos) << history.out;
}

}  // namespace
}  // namespace allot::testing
