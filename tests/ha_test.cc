// Replicas of allotd on one PostgreSQL (docs/ha.md): two replicas, two agents and eight writers;
// the leader is killed mid-write, then the new leader is stopped past its lease and continued.
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "support/daemon.h"
#include "support/postgres.h"
#include "support/temp_dir.h"

namespace allot::testing {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

constexpr std::string_view kAdminKey = "allot_ha_test_operator_key_0123456789";

// A loopback port that is free now.
std::string free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof(address);
  (void)bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  (void)getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
  const int port = ntohs(address.sin_port);
  close(fd);
  return std::to_string(port);
}

// One request on a fresh connection of its own, with no redirect followed: the answer's status,
// or 0 when none came within `wait`.
int raw_status(const std::string& port, const std::string& method, const std::string& target,
               const std::string& body, milliseconds wait) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  timeval limit{.tv_sec = static_cast<time_t>(wait.count() / 1000),
                .tv_usec = static_cast<suseconds_t>(wait.count() % 1000 * 1000)};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(std::stoi(port)));
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return 0;
  }
  const std::string request = fmt::format(
      "{} {} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nContent-Type: application/json"
      "\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
      method, target, kAdminKey, body.size(), body);
  (void)write(fd, request.data(), request.size());
  std::string answer;
  char buffer[4096];
  for (ssize_t n = 0; (n = read(fd, buffer, sizeof(buffer))) > 0;) {
    answer.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  if (!answer.starts_with("HTTP/1.1 ")) return 0;
  return std::stoi(answer.substr(9, 3));
}

// Carries TCP connections from a loopback port of its own to `to_port`: a firewall rule on its
// port (Cut) then parts whoever connects through it from the database, while others still reach
// it directly.
class Relay {
 public:
  explicit Relay(int to_port) : to_port_(to_port) {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address = loopback(0);
    socklen_t size = sizeof(address);
    (void)bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    (void)getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &size);
    port_ = ntohs(address.sin_port);
    (void)listen(listener_, 64);
    acceptor_ = std::thread([this] { accept_all(); });
  }
  ~Relay() {
    stop_ = true;
    acceptor_.join();
    for (std::thread& carrier : carriers_) carrier.join();
    close(listener_);
  }
  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;

  int port() const { return port_; }

 private:
  static sockaddr_in loopback(int port) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<uint16_t>(port));
    return address;
  }

  void accept_all() {
    while (!stop_) {
      pollfd ready{.fd = listener_, .events = POLLIN, .revents = 0};
      if (poll(&ready, 1, 100) <= 0) continue;
      const int client = accept(listener_, nullptr, nullptr);
      if (client < 0) continue;
      const int server = socket(AF_INET, SOCK_STREAM, 0);
      const sockaddr_in to = loopback(to_port_);
      if (connect(server, reinterpret_cast<const sockaddr*>(&to), sizeof(to)) != 0) {
        close(client);
        close(server);
        continue;
      }
      carriers_.emplace_back([this, client, server] { carry(client, server); });
    }
  }

  // Copies both ways until either side closes or the relay stops.
  void carry(int a, int b) {
    char buffer[16384];
    while (!stop_) {
      pollfd both[2] = {{.fd = a, .events = POLLIN, .revents = 0},
                        {.fd = b, .events = POLLIN, .revents = 0}};
      if (poll(both, 2, 100) <= 0) continue;
      bool open = true;
      for (int i = 0; i < 2 && open; ++i) {
        if (both[i].revents == 0) continue;
        const ssize_t n = read(both[i].fd, buffer, sizeof(buffer));
        open = n > 0 && write(both[1 - i].fd, buffer, static_cast<size_t>(n)) == n;
      }
      if (!open) break;
    }
    close(a);
    close(b);
  }

  int to_port_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread acceptor_;
  std::vector<std::thread> carriers_;  // One per connection; the acceptor's own until it ends.
};

// Drops every packet to and from a loopback port while it lives, as a network partition does:
// nothing is refused or reset, it just never arrives.
class Cut {
 public:
  explicit Cut(int port) : port_(std::to_string(port)) { rules("-I"); }
  ~Cut() { rules("-D"); }
  Cut(const Cut&) = delete;
  Cut& operator=(const Cut&) = delete;

 private:
  void rules(const std::string& action) {
    for (const char* side : {"--dport", "--sport"}) {
      const RunResult done = run_program(
          "/usr/sbin/iptables", {"-w", action, "INPUT", "-p", "tcp", side, port_, "-j", "DROP"});
      EXPECT_EQ(done.exit_code, 0) << done.err;
    }
  }

  std::string port_;
};

// What the writers were told was done.
struct Acknowledged {
  std::mutex mutex;
  std::map<std::string, std::string> tenants;    // Id to name.
  std::map<std::string, std::string> topups;     // Tenant id to its top-up's id.
  std::map<std::string, std::string> instances;  // Launch key to instance id.
  int refused = 0;                               // Answers that were not 2xx, or no answer.
};

class HaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!postgres_available()) GTEST_SKIP() << "no PostgreSQL server";
    auto url = new_postgres_database();
    ASSERT_TRUE(url);
    url_ = *url;
    for (int i = 0; i < 2; ++i) {
      ports_[i] = free_port();
      replicas_[i] = std::make_unique<Daemon>(url_);
      replicas_[i]->set_listen_port(ports_[i]);
      replicas_[i]->set_extra_args({"--advertise-url", base(i), "--heartbeat-interval-ms", "300",
                                    "--rating-interval-ms", "1000", "--stop-grace-ms", "500"});
    }
  }

  void TearDown() override {
    // Workloads outlive their agents: stop the long ones through the controller first.
    for (const std::string& id : long_ones_) {
      auto client = HttpClient::connect_to(both());
      (void)(*client)->send("POST", "/v1/instances/" + id + "/stop", "", std::string(kAdminKey));
    }
    within(milliseconds(20'000), [&] {
      for (const std::string& id : long_ones_) {
        auto client = HttpClient::connect_to(both());
        auto shown = (*client)->send("GET", "/v1/instances/" + id, "", std::string(kAdminKey));
        if (shown && shown->body.find("\"running\"") != std::string::npos) return false;
      }
      return true;
    });
    for (pid_t pid : agents_) {
      ::kill(pid, SIGKILL);
      wait_for_exit(pid, std::chrono::seconds(10));
    }
  }

  std::string base(int i) const { return "http://127.0.0.1:" + ports_[i]; }
  std::string both() const { return base(0) + "," + base(1); }

  bool start(int i, std::vector<std::string> extra_env = {}) {
    if (i == 1) {
      // Every replica must share the secrets key that seals tenants' registry passwords.
      std::filesystem::create_directories(replicas_[1]->data_dir());
      std::filesystem::copy_file(replicas_[0]->data_dir() / "secrets.key",
                                 replicas_[1]->data_dir() / "secrets.key",
                                 std::filesystem::copy_options::overwrite_existing);
    }
    extra_env.push_back("ALLOT_ADMIN_KEY=" + std::string(kAdminKey));
    return replicas_[i]->start(extra_env);
  }

  // /readyz of replica i: its status and body (status 0 when it does not answer).
  std::pair<int, json> readiness(int i) {
    auto client = HttpClient::connect_to(base(i), milliseconds(2'000));
    auto answer = (*client)->send("GET", "/readyz", "", "");
    if (!answer) return {0, json()};
    return {answer->status, json::parse(answer->body, nullptr, false)};
  }

  bool leads(int i) { return readiness(i).first == 200; }

  // Polls until `done` holds or `limit` passes.
  static bool within(milliseconds limit, const std::function<bool()>& done) {
    const auto deadline = steady_clock::now() + limit;
    while (steady_clock::now() < deadline) {
      if (done()) return true;
      std::this_thread::sleep_for(milliseconds(100));
    }
    return done();
  }

  // The body of a GET to `server`, as an operator (/metrics: a follower answers it itself).
  std::string call_text(const std::string& target, const std::string& server) {
    auto client = HttpClient::connect_to(server);
    auto answer = (*client)->send("GET", target, "", std::string(kAdminKey));
    return answer ? answer->body : std::string();
  }

  // A request through both replicas, as an operator.
  json call(const std::string& method, const std::string& target, const json& body, int expected,
            const std::string& key = std::string(kAdminKey)) {
    auto client = HttpClient::connect_to(both());
    auto answer = (*client)->send(method, target, body.is_null() ? "" : body.dump(), key);
    if (!answer) {
      ADD_FAILURE() << method << " " << target << ": " << answer.error().message;
      return json();
    }
    EXPECT_EQ(answer->status, expected) << method << " " << target << ": " << answer->body;
    return json::parse(answer->body, nullptr, false);
  }

  void start_agent(int i, const std::string& token) {
    const auto dir = replicas_[0]->data_dir().parent_path() / fmt::format("agent-{}", i);
    agents_.push_back(spawn_program(
        bin_dir() + "/src/agent/allot-agent",
        {"--server", both(), "--join-token", token, "--state-dir", dir.string(), "--name",
         fmt::format("node-{}", i), "--simulate", "8xH100-80GB", "--log-level", "warn"},
        {"ALLOT_RUNTIME=process"}, dir.string() + ".out", dir.string() + ".err"));
  }

  // Writes as writer `w` until `stop`: tenants, a top-up of each with its own id (sent again
  // until answered), and now and then an instance.
  void write(int w, const std::atomic<bool>& stop, const std::string& project,
             const std::string& member, Acknowledged& done) {
    auto client = HttpClient::connect_to(both(), milliseconds(10'000));
    for (int n = 0; !stop; ++n) {
      const std::string name = fmt::format("w{}-{}", w, n);
      auto made = (*client)->send("POST", "/v1/tenants", json{{"name", name}}.dump(),
                                  std::string(kAdminKey));
      if (!made || made->status != 201) {
        std::lock_guard lock(done.mutex);
        ++done.refused;
        continue;
      }
      const std::string tenant = json::parse(made->body).value("id", "");
      {
        std::lock_guard lock(done.mutex);
        done.tenants[tenant] = name;
      }
      const std::string topup = "top-" + name;
      for (int attempt = 0; attempt < 20 && !stop; ++attempt) {
        auto paid =
            (*client)->send("POST", "/v1/tenants/" + tenant + "/topups",
                            json{{"amount", "10"}, {"id", topup}}.dump(), std::string(kAdminKey));
        if (paid && (paid->status == 200 || paid->status == 201)) {
          std::lock_guard lock(done.mutex);
          done.topups[tenant] = topup;
          break;
        }
      }
      if (n % 4 == 0) {
        // With a key, the client sends a launch whose answer was lost again: it happens once.
        const std::string key = "launch-" + name;
        auto launched = (*client)->exchange(ClientRequest{.method = "POST",
                                                          .target = "/v1/instances",
                                                          .body = launch_body(project, n),
                                                          .authorization = "Bearer " + member,
                                                          .idempotency_key = key});
        std::lock_guard lock(done.mutex);
        if (launched && (launched->status == 201 || launched->status == 200)) {
          done.instances[key] = json::parse(launched->body).value("id", "");
        }
      }
    }
  }

  static std::string launch_body(const std::string& project, int n) {
    return json{{"project_id", project},
                {"gpus", 1},
                {"command", {"true"}},
                {"labels", {{"n", std::to_string(n)}}}}
        .dump();
  }

  std::string url_;
  std::vector<std::string> long_ones_;  // Instances that run across the failovers.
  std::string ports_[2];
  std::unique_ptr<Daemon> replicas_[2];
  std::vector<pid_t> agents_;
};

TEST_F(HaTest, AKilledLeaderLosesNothingAndAStoppedOneCommitsNothing) {
  ASSERT_TRUE(start(0));
  ASSERT_TRUE(within(milliseconds(20'000), [&] { return leads(0); }));
  ASSERT_TRUE(start(1));
  // The follower says where the leader is, and sends everything else there.
  ASSERT_TRUE(within(milliseconds(5'000), [&] {
    const json shown = readiness(1).second;
    return shown.is_object() && shown["leader"].is_string();
  }));
  const auto [follower_status, follower] = readiness(1);
  EXPECT_EQ(follower_status, 503);
  EXPECT_EQ(follower["role"], "follower");
  EXPECT_EQ(follower["leader"], base(0));
  ASSERT_TRUE(follower["cluster"].is_string()) << follower.dump();
  EXPECT_EQ(raw_status(ports_[1], "GET", "/v1/tenants", "", milliseconds(5'000)), 307);

  // A tenant whose work runs across the failover, at 1 micro-unit per GPU-millisecond.
  call("PUT", "/v1/prices",
       {{"gpu_model", "H100-80GB"},
        {"region", "default"},
        {"price_class", "on-demand"},
        {"gpu_hour", "3.6"}},
       200);

  const std::string tenant = call("POST", "/v1/tenants", {{"name", "acme"}}, 201).value("id", "");
  const std::string project =
      call("POST", "/v1/projects", {{"name", "p"}, {"tenant_id", tenant}}, 201).value("id", "");
  const std::string user =
      call("POST", "/v1/users", {{"name", "Ann"}, {"email", "ann@acme"}, {"tenant_id", tenant}},
           201)
          .value("id", "");
  const std::string member =
      call("POST", "/v1/keys", {{"name", "k"}, {"user_id", user}}, 201).value("secret", "");
  const std::string token =
      call("POST", "/v1/join-tokens", {{"name", "t"}}, 201).value("token", "");
  start_agent(0, token);
  start_agent(1, token);
  ASSERT_TRUE(within(milliseconds(30'000),
                     [&] { return call("GET", "/v1/nodes", nullptr, 200)["items"].size() == 2; }));
  std::vector<std::string>& long_ones = long_ones_;
  for (int i = 0; i < 2; ++i) {
    long_ones.push_back(call("POST", "/v1/instances",
                             {{"project_id", project}, {"gpus", 2}, {"command", {"sleep", "700"}}},
                             201, member)
                            .value("id", ""));
  }
  auto state_of = [&](const std::string& id) {
    return call("GET", "/v1/instances/" + id, nullptr, 200, member);
  };
  ASSERT_TRUE(within(milliseconds(30'000), [&] {
    return state_of(long_ones[0])["state"] == "running" &&
           state_of(long_ones[1])["state"] == "running";
  }));
  const std::string node_before = state_of(long_ones[0]).value("node_id", "");

  // Eight writers; the leader dies under them.
  Acknowledged done;
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  writers.reserve(8);
  for (int w = 0; w < 8; ++w) {
    writers.emplace_back([&, w] { write(w, stop, project, member, done); });
  }
  std::this_thread::sleep_for(milliseconds(3'000));
  replicas_[0]->kill();
  const auto killed = steady_clock::now();
  ASSERT_TRUE(within(milliseconds(20'000), [&] { return leads(1); }));
  const auto took = steady_clock::now() - killed;
  EXPECT_LT(took, milliseconds(15'000));
  std::this_thread::sleep_for(milliseconds(3'000));
  stop = true;
  for (std::thread& writer : writers) writer.join();

  // Every acknowledged write is there, each top-up once.
  ASSERT_GT(done.tenants.size(), 8u);
  for (const auto& [id, name] : done.tenants) {
    EXPECT_EQ(call("GET", "/v1/tenants/" + id, nullptr, 200).value("name", ""), name);
  }
  for (const auto& [id, topup] : done.topups) {
    EXPECT_EQ(call("GET", "/v1/tenants/" + id + "/balance", nullptr, 200)["cash"], "10.000000")
        << id;
  }
  // Every launch acknowledged is there, once: sent again under its key, to the new leader, it
  // is the same instance.
  ASSERT_FALSE(done.instances.empty());
  auto client = HttpClient::connect_to(both());
  for (const auto& [key, id] : done.instances) {
    call("GET", "/v1/instances/" + id, nullptr, 200);
    const int n = std::stoi(key.substr(key.rfind('-') + 1));
    auto again = (*client)->exchange(ClientRequest{.method = "POST",
                                                   .target = "/v1/instances",
                                                   .body = launch_body(project, n),
                                                   .authorization = "Bearer " + member,
                                                   .idempotency_key = key});
    ASSERT_TRUE(again);
    EXPECT_EQ(again->status, 200) << again->body;
    EXPECT_EQ(json::parse(again->body).value("id", ""), id);
  }
  const std::string metrics =
      (*HttpClient::connect_to(both()))->send("GET", "/metrics", "", std::string(kAdminKey))->body;
  EXPECT_NE(metrics.find("allot_ledger_balance_sum_micros 0\n"), std::string::npos);
  EXPECT_NE(metrics.find(fmt::format("allot_replica_leader{{cluster=\"{}\"}} 1\n",
                                     follower["cluster"].get<std::string>())),
            std::string::npos)
      << metrics;

  // The work ran on where it was, and its billing went on without a gap or a second charge: the
  // charge is exactly its GPUs' time from its start to where billing has reached, past the
  // takeover.
  const auto failover_ms = std::chrono::duration_cast<milliseconds>(took).count();
  ASSERT_TRUE(within(milliseconds(20'000), [&] {
    const json shown = state_of(long_ones[0]);
    return shown.value("billed_to_ms", int64_t{0}) - shown.value("started_at_ms", int64_t{0}) >
           failover_ms + 5'000;
  }));
  for (const std::string& id : long_ones) {
    const json shown = state_of(id);
    EXPECT_EQ(shown["state"], "running");
    const int64_t billed_ms =
        shown.value("billed_to_ms", int64_t{0}) - shown.value("started_at_ms", int64_t{0});
    // 2 GPUs at 1,000 micro-units a GPU-second, charged by whole seconds, so give or take the
    // seconds at either end; a gap over the takeover (over 10 s) or its time charged twice would
    // be 20,000 or more off.
    const int64_t expected = int64_t{2'000} * (billed_ms / 1'000);
    EXPECT_LE(std::abs(shown.value("billed_micros", int64_t{0}) - expected), 4'000) << shown.dump();
  }
  EXPECT_EQ(state_of(long_ones[0]).value("node_id", ""), node_before);

  // The old leader comes back as a follower; the new one is stopped past its lease.
  ASSERT_TRUE(start(0));
  ASSERT_TRUE(within(milliseconds(10'000), [&] { return readiness(0).first == 503; }));
  ::kill(replicas_[1]->pid(), SIGSTOP);
  // A write sent to the stopped leader waits in its socket.
  std::atomic<int> stale_status{-1};
  std::thread stale([&] {
    stale_status =
        raw_status(ports_[1], "POST", "/v1/tenants",
                   json{{"name", "written-by-a-stopped-leader"}}.dump(), milliseconds(60'000));
  });
  ASSERT_TRUE(within(milliseconds(25'000), [&] { return leads(0); }));
  ::kill(replicas_[1]->pid(), SIGCONT);
  stale.join();
  EXPECT_NE(stale_status / 100, 2) << stale_status;
  ASSERT_TRUE(within(milliseconds(15'000), [&] {
    const auto [status, shown] = readiness(1);
    return status == 503 && shown.is_object() && shown["role"] == "follower" &&
           shown["leader"] == base(0);
  }));
  const json tenants = call("GET", "/v1/tenants?limit=1000", nullptr, 200);
  for (const json& t : tenants["items"]) EXPECT_NE(t["name"], "written-by-a-stopped-leader");
  EXPECT_NE(replicas_[1]->output().find("lost the lease"), std::string::npos);
  // And the work still runs, billed by the third leader.
  EXPECT_EQ(state_of(long_ones[1])["state"], "running");
}

TEST_F(HaTest, AReplicaThatWouldBeMistakenForAnotherRefusesToStart) {
  ASSERT_TRUE(start(0));
  ASSERT_TRUE(within(milliseconds(20'000), [&] { return leads(0); }));
  TempDir other;
  auto allotd = [&](const std::string& data, std::vector<std::string> more) {
    std::vector<std::string> args = {"--listen",    "127.0.0.1:" + free_port(),
                                     "--data-dir",  (other.path() / data).string(),
                                     "--log-level", "warn"};
    args.insert(args.end(), more.begin(), more.end());
    return run_program(bin_dir() + "/src/daemon/allotd", args, {}, std::chrono::seconds(30));
  };
  const std::vector<std::string> pg = {"--store", "postgres", "--postgres-url", url_};
  auto with_pg = [&](std::vector<std::string> more) {
    more.insert(more.end(), pg.begin(), pg.end());
    return more;
  };
  // Its own secrets key: it could not open what the others sealed.
  const RunResult foreign = allotd("foreign", with_pg({"--advertise-url", base(1)}));
  EXPECT_EQ(foreign.exit_code, 2) << foreign.err;
  EXPECT_NE(foreign.err.find("secrets.key is not the key"), std::string::npos) << foreign.err;
  // The leader's own advertised URL: clients could not tell the two apart.
  std::filesystem::create_directories(other.path() / "twin");
  std::filesystem::copy_file(replicas_[0]->data_dir() / "secrets.key",
                             other.path() / "twin" / "secrets.key");
  const RunResult twin = allotd("twin", with_pg({"--advertise-url", base(0)}));
  EXPECT_EQ(twin.exit_code, 2) << twin.err;
  EXPECT_NE(twin.err.find("advertises " + base(0)), std::string::npos) << twin.err;
  // SQLite is a single allotd.
  const RunResult sqlite = allotd("sqlite", {"--advertise-url", base(1)});
  EXPECT_EQ(sqlite.exit_code, 2);
  EXPECT_NE(sqlite.err.find("store = postgres"), std::string::npos) << sqlite.err;
  EXPECT_TRUE(leads(0));  // None of them disturbed the leader.
}

// The lease is kept by the database's clock, and so is the time a leader stamps: replicas whose
// hosts' clocks are two minutes apart (libfaketime) neither take a live leader's lease, nor wait
// past its end, nor date anything by their own clocks.
TEST_F(HaTest, ReplicasWhoseClocksDisagreeByMinutesKeepTheDatabasesTime) {
  const std::string faketime = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";
  ASSERT_TRUE(std::filesystem::exists(faketime)) << "scripts/setup.sh installs faketime";
  for (int i = 0; i < 2; ++i) {
    replicas_[i]->set_extra_args({"--advertise-url", base(i), "--lease-ms", "2000"});
  }
  auto skewed = [&](const std::string& by) {
    // libfaketime is preloaded ahead of the sanitizers' runtime of the test build, which then
    // must not insist on coming first.
    return std::vector<std::string>{"LD_PRELOAD=" + faketime, "FAKETIME=" + by,
                                    "ASAN_OPTIONS=verify_asan_link_order=0"};
  };
  ASSERT_TRUE(start(0, skewed("-60s")));
  ASSERT_TRUE(within(milliseconds(20'000), [&] { return leads(0); }));
  ASSERT_TRUE(start(1, skewed("+60s")));
  ASSERT_TRUE(within(milliseconds(10'000), [&] {
    const json shown = readiness(1).second;
    return shown.is_object() && shown["leader"] == base(0);
  }));
  const json first_epoch = readiness(0).second["epoch"];
  // Five leases: the replica a minute ahead never finds the lease of the one a minute behind
  // expired.
  for (int n = 0; n < 50; ++n) {
    ASSERT_TRUE(leads(0)) << n;
    ASSERT_NE(readiness(1).first, 200) << n;
    std::this_thread::sleep_for(milliseconds(200));
  }
  EXPECT_EQ(readiness(0).second["epoch"], first_epoch);
  auto stamped_now = [&](const std::string& name) {
    const json made = call("POST", "/v1/tenants", {{"name", name}}, 201);
    const auto at = parse_time(made.value("created_at", ""));
    const auto now = std::chrono::duration_cast<milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    return at && std::abs(*at - now) < 5'000;
  };
  EXPECT_TRUE(stamped_now("stamped-by-the-one-behind"));

  // Its leader gone, the replica ahead takes over once the lease has run out by the database's
  // clock: not at once, and not a minute late.
  replicas_[0]->kill();
  const auto killed = steady_clock::now();
  ASSERT_TRUE(within(milliseconds(15'000), [&] { return leads(1); }));
  EXPECT_LT(steady_clock::now() - killed, milliseconds(6'000));
  EXPECT_EQ(readiness(1).second["epoch"], first_epoch.get<int64_t>() + 1);
  EXPECT_TRUE(stamped_now("stamped-by-the-one-ahead"));
  const std::string metrics = call_text("/metrics", base(1));
  const size_t at = metrics.find("\nallot_replica_clock_offset_seconds ");
  ASSERT_NE(at, std::string::npos) << metrics;
  const double offset = std::stod(metrics.substr(at + 36));
  EXPECT_GT(offset, -61.0) << metrics;
  EXPECT_LT(offset, -59.0) << metrics;
  EXPECT_NE(replicas_[1]->output().find("off the database's"), std::string::npos);
}

// A partition between the leader and the database: the leader acknowledges nothing it cannot
// commit, the other replica takes over, and when the partition heals the old leader follows.
TEST_F(HaTest, ALeaderCutOffFromTheDatabaseAcknowledgesNothingAndFollowsWhenItHeals) {
  const size_t colon = url_.rfind(':');
  const size_t slash = url_.find('/', colon);
  const int database_port = std::stoi(url_.substr(colon + 1, slash - colon - 1));
  Relay relay(database_port);
  const std::string via_relay =
      url_.substr(0, colon + 1) + std::to_string(relay.port()) + url_.substr(slash);
  replicas_[0] = std::make_unique<Daemon>(via_relay);
  replicas_[0]->set_listen_port(ports_[0]);
  for (int i = 0; i < 2; ++i) {
    replicas_[i]->set_extra_args({"--advertise-url", base(i), "--lease-ms", "3000"});
  }
  ASSERT_TRUE(start(0));
  ASSERT_TRUE(within(milliseconds(20'000), [&] { return leads(0); }));
  ASSERT_TRUE(start(1));
  ASSERT_TRUE(within(milliseconds(10'000), [&] {
    const json shown = readiness(1).second;
    return shown.is_object() && shown["leader"] == base(0);
  }));
  const std::string before =
      call("POST", "/v1/tenants", {{"name", "before-the-cut"}}, 201).value("id", "");
  std::atomic<int> cut_off_status{-1};
  {
    const Cut cut(relay.port());
    const auto cut_at = steady_clock::now();
    // A write sent to the leader that cannot reach the database.
    std::thread cut_off([&] {
      cut_off_status =
          raw_status(ports_[0], "POST", "/v1/tenants",
                     json{{"name", "written-while-cut-off"}}.dump(), milliseconds(60'000));
    });
    ASSERT_TRUE(within(milliseconds(20'000), [&] { return leads(1); }));
    EXPECT_LT(steady_clock::now() - cut_at, milliseconds(8'000));
    EXPECT_EQ(readiness(1).second["leader"], base(1));
    call("POST", "/v1/tenants", {{"name", "after-the-cut"}}, 201);
    cut_off.join();
    EXPECT_NE(cut_off_status / 100, 2) << cut_off_status;
    // The cut-off one no longer serves: it cannot know that it still leads.
    EXPECT_NE(raw_status(ports_[0], "GET", "/v1/tenants", "", milliseconds(5'000)), 200);
  }
  // Healed, it finds its lease taken and follows.
  ASSERT_TRUE(within(milliseconds(40'000), [&] {
    const auto [status, shown] = readiness(0);
    return status == 503 && shown.is_object() && shown["role"] == "follower" &&
           shown["leader"] == base(1);
  })) << replicas_[0]->output();
  EXPECT_NE(replicas_[0]->output().find("lost the lease"), std::string::npos);
  std::set<std::string> names;
  const json tenants = call("GET", "/v1/tenants?limit=1000", nullptr, 200);
  for (const json& t : tenants["items"]) names.insert(t.value("name", ""));
  EXPECT_TRUE(names.contains("before-the-cut"));
  EXPECT_TRUE(names.contains("after-the-cut"));
  EXPECT_FALSE(names.contains("written-while-cut-off"));
  EXPECT_EQ(call("GET", "/v1/tenants/" + before, nullptr, 200).value("name", ""), "before-the-cut");
  const std::string ledger = call_text("/metrics", base(1));
  EXPECT_NE(ledger.find("allot_ledger_balance_sum_micros 0\n"), std::string::npos);
}

// A PostgreSQL primary and its streaming standby (tests/support/pg_pair.sh), removed at the end.
class PostgresPair {
 public:
  PostgresPair()
      : dir_(fmt::format("/tmp/allot-pg-pair-{}", getpid())),
        primary_port_(free_port()),
        standby_port_(free_port()) {}
  ~PostgresPair() { (void)step({"stop"}); }
  PostgresPair(const PostgresPair&) = delete;
  PostgresPair& operator=(const PostgresPair&) = delete;

  bool start() { return step({"start", primary_port_, standby_port_}); }
  bool stop_primary() { return step({"stop-primary"}); }
  bool promote() { return step({"promote"}); }
  // libpq's multi-host form: the first of the two that takes writes.
  std::string url() const {
    return fmt::format(
        "host=127.0.0.1,127.0.0.1 port={},{} user=postgres dbname=postgres "
        "target_session_attrs=read-write",
        primary_port_, standby_port_);
  }

 private:
  bool step(std::vector<std::string> args) {
    args.insert(args.begin(), dir_);
    const RunResult result =
        run_program(std::string(ALLOT_SOURCE_DIR) + "/tests/support/pg_pair.sh", args);
    EXPECT_EQ(result.exit_code, 0) << args[1] << ": " << result.out << result.err;
    return result.exit_code == 0;
  }

  std::string dir_;
  std::string primary_port_;
  std::string standby_port_;
};

TEST(HaStandbyTest, AllotdCarriesOnWhenTheStandbyIsPromoted) {
  if (!postgres_available()) GTEST_SKIP() << "no PostgreSQL server";
  PostgresPair pair;
  ASSERT_TRUE(pair.start());
  Daemon daemon(pair.url());
  ASSERT_TRUE(daemon.start({"ALLOT_ADMIN_KEY=" + std::string(kAdminKey)}));
  const std::string key(kAdminKey);
  auto tenant = [&](const std::string& name) {
    return daemon.request("POST", "/v1/tenants", json{{"name", name}}.dump(), key);
  };
  ASSERT_EQ(tenant("before").status, 201);

  ASSERT_TRUE(pair.stop_primary());
  // No primary: a write is refused, and says why; nothing is acknowledged that is not committed.
  const ClientResponse refused = tenant("while-down");
  EXPECT_EQ(refused.status, 503) << refused.body;
  EXPECT_NE(refused.body.find("unavailable"), std::string::npos);

  ASSERT_TRUE(pair.promote());
  const auto deadline = steady_clock::now() + std::chrono::seconds(30);
  int status = 0;
  while (steady_clock::now() < deadline && status != 201) {
    status = tenant("after").status;
    if (status != 201) std::this_thread::sleep_for(milliseconds(200));
  }
  ASSERT_EQ(status, 201);
  const json tenants =
      json::parse(daemon.request("GET", "/v1/tenants?limit=100", "", key).body, nullptr, false);
  std::set<std::string> names;
  for (const json& t : tenants["items"]) names.insert(t.value("name", ""));
  EXPECT_TRUE(names.contains("before"));
  EXPECT_TRUE(names.contains("after"));
  EXPECT_FALSE(names.contains("while-down"));
  EXPECT_EQ(daemon.request("GET", "/readyz", "", "").status, 200);
  EXPECT_EQ(daemon.stop(), 0);
}

}  // namespace
}  // namespace allot::testing
