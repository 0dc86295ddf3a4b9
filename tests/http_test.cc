// HTTP under abuse, over raw sockets: every malformed request gets the status HTTP gives it and a
// JSON error with a stable code; ten thousand slow clients do not lock out people or agents.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "client/http_client.h"
#include "support/daemon.h"

namespace allot::testing {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

uint16_t port_of(const std::string& url) {
  return static_cast<uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
}

// A TCP connection to the daemon from `source` (any address of 127.0.0.0/8), or -1.
int open_connection(uint16_t port, const char* source = "127.0.0.1") {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in from{.sin_family = AF_INET, .sin_port = 0, .sin_addr = {}, .sin_zero = {}};
  sockaddr_in to{.sin_family = AF_INET, .sin_port = htons(port), .sin_addr = {}, .sin_zero = {}};
  ::inet_pton(AF_INET, source, &from.sin_addr);
  ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// What the server sends until it closes the connection (or 10 s pass).
std::string read_to_close(int fd) {
  std::string out;
  char chunk[4096];
  const auto until = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < until) {
    pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) break;
    out.append(chunk, static_cast<size_t>(n));
  }
  return out;
}

struct Answer {
  int status = 0;    // 0: the connection was closed without an answer.
  std::string code;  // The JSON error's code.
};

Answer parse_answer(const std::string& text) {
  Answer answer;
  if (text.rfind("HTTP/1.", 0) != 0 || text.size() < 12) return answer;
  answer.status = std::stoi(text.substr(9, 3));
  const size_t body = text.find("\r\n\r\n");
  if (body != std::string::npos) {
    const json doc = json::parse(text.substr(body + 4), nullptr, false);
    if (doc.is_object() && doc.contains("error")) answer.code = doc["error"].value("code", "");
  }
  return answer;
}

// Sends `request` as it is and reads the answer.
Answer exchange(uint16_t port, const std::string& request) {
  const int fd = open_connection(port);
  if (fd < 0) return {};
  (void)send_all(fd, request);
  Answer answer = parse_answer(read_to_close(fd));
  ::close(fd);
  return answer;
}

class HttpTest : public ::testing::Test {
 protected:
  // `env`: allotd's settings as ALLOT_* variables.
  void start(const std::vector<std::string>& env = {}) {
    ASSERT_TRUE(daemon_.start(env));
    port_ = port_of(daemon_.url());
  }

  // A node joined through the API: its id and credential.
  std::pair<std::string, std::string> join_node() {
    const ClientResponse token =
        daemon_.request("POST", "/v1/join-tokens", json{{"name", "t"}}.dump(), daemon_.admin_key());
    EXPECT_EQ(token.status, 201) << token.body;
    const json inventory = {{"name", "node-1"},
                            {"gpus", {{{"index", 0}, {"uuid", "GPU-1"}, {"model", "H100"}}}}};
    const ClientResponse joined = daemon_.request("POST", "/v1/agent/join", inventory.dump(),
                                                  json::parse(token.body).value("token", ""));
    EXPECT_EQ(joined.status, 201) << joined.body;
    const json node = json::parse(joined.body, nullptr, false);
    return {node.value("node_id", ""), node.value("credential", "")};
  }

  Daemon daemon_;
  uint16_t port_ = 0;
};

TEST_F(HttpTest, EachMalformedRequestIsAnsweredWithItsStatusAndCode) {
  start();
  const std::string key = daemon_.admin_key();
  // Answers from the API keep the connection open unless asked not to.
  const std::string auth = "Authorization: Bearer " + key + "\r\nConnection: close\r\n";
  struct Case {
    std::string spec;
    std::string request;
    int status;
    std::string code;
  };
  const std::vector<Case> cases = {
      {"a well-formed request is served", "GET /v1/tenants HTTP/1.1\r\nHost: a\r\n" + auth + "\r\n",
       200, ""},
      {"a header over 16 KiB is 431",
       "GET /healthz HTTP/1.1\r\nHost: a\r\nX-Big: " + std::string(20'000, 'a') + "\r\n\r\n", 431,
       "header_too_large"},
      {"a request target over 8 KiB is 414",
       "GET /healthz?x=" + std::string(9'000, 'a') + " HTTP/1.1\r\nHost: a\r\n\r\n", 414,
       "uri_too_long"},
      {"a request line past the header limit is 414",
       "GET /healthz?x=" + std::string(20'000, 'a') + " HTTP/1.1\r\nHost: a\r\n\r\n", 414,
       "uri_too_long"},
      {"HTTP/2.0 in a request line is 505", "GET /healthz HTTP/2.0\r\nHost: a\r\n\r\n", 505,
       "http_version_not_supported"},
      {"a version that is not a number is 505", "GET /healthz HTTP/1.x\r\nHost: a\r\n\r\n", 505,
       "http_version_not_supported"},
      {"HTTP/1.1 without Host is 400", "GET /healthz HTTP/1.1\r\n\r\n", 400, "malformed_request"},
      {"a header line without a colon is 400",
       "GET /healthz HTTP/1.1\r\nHost: a\r\nnocolon\r\n\r\n", 400, "malformed_request"},
      {"a method that is not a token is 400", "G@T /healthz HTTP/1.1\r\nHost: a\r\n\r\n", 400,
       "malformed_request"},
      {"a Content-Length that is not a number is 400",
       "POST /v1/tenants HTTP/1.1\r\nHost: a\r\nContent-Length: ten\r\n\r\n", 400,
       "malformed_request"},
      {"a negative Content-Length is 400",
       "POST /v1/tenants HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400,
       "malformed_request"},
      {"two different Content-Lengths are 400",
       "POST /v1/tenants HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
       400, "malformed_request"},
      {"Content-Length with Transfer-Encoding is 400",
       "POST /v1/tenants HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n"
       "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
       400, "malformed_request"},
      {"a Transfer-Encoding that does not end in chunked is 400",
       "POST /v1/tenants HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n{}", 400,
       "malformed_request"},
      {"a chunk size that is not hex is 400",
       "POST /v1/tenants HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n"
       "0\r\n\r\n",
       400, "malformed_request"},
      {"a chunk longer than its size is 400",
       "POST /v1/tenants HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{}\r\n"
       "0\r\n\r\n",
       400, "malformed_request"},
      {"a body over 1 MiB is 413",
       "POST /v1/tenants HTTP/1.1\r\nHost: a\r\nContent-Length: 2000000\r\n\r\n{}", 413,
       "body_too_large"},
      {"a limit that is not a number is 400",
       "GET /v1/tenants?limit=ten HTTP/1.1\r\nHost: a\r\n" + auth + "\r\n", 400,
       "invalid_argument"},
      {"a limit past the 64-bit range is 400",
       "GET /v1/tenants?limit=99999999999999999999999 HTTP/1.1\r\nHost: a\r\n" + auth + "\r\n", 400,
       "invalid_argument"},
      {"a negative limit is 400",
       "GET /v1/tenants?limit=-5 HTTP/1.1\r\nHost: a\r\n" + auth + "\r\n", 400, "invalid_argument"},
      {"an event cursor that is not a number is 400",
       "GET /v1/events?after=abc HTTP/1.1\r\nHost: a\r\n" + auth + "\r\n", 400, "invalid_argument"},
      {"a repeated query parameter is 400",
       "GET /v1/tenants?limit=1&limit=2 HTTP/1.1\r\nHost: a\r\n" + auth + "\r\n", 400,
       "invalid_argument"},
  };
  for (const Case& c : cases) {
    const Answer answer = exchange(port_, c.request);
    EXPECT_EQ(answer.status, c.status) << c.spec;
    EXPECT_EQ(answer.code, c.code) << c.spec;
  }
  // None of it hurt the server.
  EXPECT_EQ(daemon_.request("GET", "/healthz", "", "").status, 200);
}

TEST_F(HttpTest, AgentRoutesRefuseAnythingButAnArrayWhereAnArrayIsExpected) {
  start();
  const auto [node_id, credential] = join_node();
  const ClientResponse token =
      daemon_.request("POST", "/v1/join-tokens", json{{"name", "t2"}}.dump(), daemon_.admin_key());
  const std::string join_token = json::parse(token.body).value("token", "");
  const json gpu = {{"index", 0}, {"uuid", "GPU-2"}, {"model", "H100"}};
  for (const json& gpus : {json{{"a", gpu}}, json(5), json("gpus"), json(nullptr)}) {
    const ClientResponse joined = daemon_.request(
        "POST", "/v1/agent/join", json{{"name", "node-2"}, {"gpus", gpus}}.dump(), join_token);
    EXPECT_EQ(joined.status, 400) << "join with gpus " << gpus.dump() << ": " << joined.body;
  }
  const json workload = {{"instance_id", "ins_x"}, {"state", "running"}};
  for (const char* field : {"gpus", "workloads", "logs"}) {
    for (const json& value :
         {json{{"a", field == std::string("gpus") ? gpu : workload}}, json(1)}) {
      const json beat = {{"node_id", node_id}, {field, value}};
      const ClientResponse answer =
          daemon_.request("POST", "/v1/agent/heartbeat", beat.dump(), credential);
      EXPECT_EQ(answer.status, 400) << "heartbeat with " << beat.dump() << ": " << answer.body;
    }
  }
  // The node itself is still fine.
  EXPECT_EQ(
      daemon_.request("POST", "/v1/agent/heartbeat", json{{"node_id", node_id}}.dump(), credential)
          .status,
      200);
}

// The slow side of the attack: connections that each send a request line and then a header
// line now and then, never finishing. The test raises its own descriptor limit to hold them.
class Slowloris {
 public:
  static constexpr std::string_view kRequestLine = "GET /healthz HTTP/1.1\r\n";
  static constexpr std::string_view kHeaderLine = "X-Slow: 1\r\n";

  // Opens `count` connections spread over 127.0.0.2 onwards, `per_address` from each.
  Slowloris(uint16_t port, int count, int per_address) {
    rlimit files{};
    ::getrlimit(RLIMIT_NOFILE, &files);
    files.rlim_cur = files.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &files);
    for (int i = 0; i < count; ++i) {
      const std::string source =
          fmt::format("127.0.{}.{}", 2 + i / per_address / 250, 2 + (i / per_address) % 250);
      const int fd = open_connection(port, source.c_str());
      if (fd < 0) {
        ++failed_to_open_;
        continue;
      }
      ::fcntl(fd, F_SETFL, O_NONBLOCK);
      (void)::send(fd, kRequestLine.data(), kRequestLine.size(), MSG_NOSIGNAL);
      fds_.push_back(fd);
    }
  }
  ~Slowloris() {
    for (int fd : fds_) ::close(fd);
  }
  Slowloris(const Slowloris&) = delete;
  Slowloris& operator=(const Slowloris&) = delete;

  // One more header line on every connection still open.
  void trickle() {
    for (int fd : fds_) {
      (void)::send(fd, kHeaderLine.data(), kHeaderLine.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
  }

  size_t opened() const { return fds_.size(); }
  int failed_to_open() const { return failed_to_open_; }

  // Connections the server has neither answered with 408 nor closed.
  size_t still_held() {
    resolved_.resize(fds_.size(), false);
    size_t held = 0;
    char chunk[512];
    for (size_t i = 0; i < fds_.size(); ++i) {
      if (resolved_[i]) continue;
      const ssize_t n = ::recv(fds_[i], chunk, sizeof chunk, MSG_DONTWAIT);
      const bool closed = n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
      const bool timed_out =
          n > 0 && std::string_view(chunk, static_cast<size_t>(n)).starts_with("HTTP/1.1 408");
      resolved_[i] = closed || timed_out;
      if (!resolved_[i]) ++held;
    }
    return held;
  }

 private:
  std::vector<int> fds_;
  std::vector<bool> resolved_;
  int failed_to_open_ = 0;
};

TEST_F(HttpTest, TenThousandSlowClientsLockOutNeitherPeopleNorAgents) {
  // The cap is under the attack's size, so that making room for new connections is tested and
  // not only the per-address share or the deadline.
  constexpr int kHeaderTimeoutMs = 3'000;
  start({"ALLOT_HTTP_HEADER_TIMEOUT_MS=" + std::to_string(kHeaderTimeoutMs),
         "ALLOT_HTTP_MAX_CONNECTIONS=4000", "ALLOT_HTTP_MAX_CONNECTIONS_PER_ADDRESS=256"});
  const auto [node_id, credential] = join_node();
  ASSERT_FALSE(credential.empty());

  // 10,200 connections from 40 addresses, each address within its share of 256.
  Slowloris attack(port_, 10'200, 255);
  EXPECT_EQ(attack.failed_to_open(), 0);
  ASSERT_GE(attack.opened(), 10'000U);
  const auto opened_at = Clock::now();

  // While they hold on, people and agents are served, each on a new connection.
  attack.trickle();
  auto fresh = HttpClient::connect_to(daemon_.url());
  ASSERT_TRUE(fresh);
  auto listed = (*fresh)->send("GET", "/v1/tenants", "", daemon_.admin_key());
  ASSERT_TRUE(listed) << listed.error().message;
  EXPECT_EQ(listed->status, 200) << listed->body;
  auto agent = HttpClient::connect_to(daemon_.url());
  ASSERT_TRUE(agent);
  auto beat =
      (*agent)->send("POST", "/v1/agent/heartbeat", json{{"node_id", node_id}}.dump(), credential);
  ASSERT_TRUE(beat) << beat.error().message;
  EXPECT_EQ(beat->status, 200) << beat->body;

  // Past the header deadline every slow connection has been answered 408 or closed.
  while (Clock::now() < opened_at + milliseconds(kHeaderTimeoutMs + 1'500)) {
    attack.trickle();
    std::this_thread::sleep_for(milliseconds(500));
  }
  size_t held = attack.still_held();
  for (int i = 0; i < 20 && held > 0; ++i) {
    std::this_thread::sleep_for(milliseconds(250));
    held = attack.still_held();
  }
  EXPECT_EQ(held, 0U);

  // And a heartbeat after the attack, on the agent's kept-alive connection.
  beat =
      (*agent)->send("POST", "/v1/agent/heartbeat", json{{"node_id", node_id}}.dump(), credential);
  ASSERT_TRUE(beat) << beat.error().message;
  EXPECT_EQ(beat->status, 200) << beat->body;
}

// The other side: a server that takes the connection and never answers (or a connection that died
// unseen) does not hold a client, an agent's above all, for ever.
TEST(HttpClientTest, ARequestToAServerThatNeverAnswersEndsInATimeout) {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in any{.sin_family = AF_INET, .sin_port = 0, .sin_addr = {}, .sin_zero = {}};
  ::inet_pton(AF_INET, "127.0.0.1", &any.sin_addr);
  socklen_t size = sizeof any;
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&any), sizeof any), 0);
  ASSERT_EQ(::listen(listener, 8), 0);  // The kernel takes connections; no one ever reads them.
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&any), &size), 0);
  const std::string url = fmt::format("http://127.0.0.1:{}", ntohs(any.sin_port));

  auto client = HttpClient::connect_to(url, milliseconds(300));
  ASSERT_TRUE(client);
  auto answer = (*client)->send("GET", "/v1/tenants", "", "");
  ASSERT_FALSE(answer);
  EXPECT_EQ(answer.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(answer.error().message.find("did not answer"), std::string::npos)
      << answer.error().message;
  ::close(listener);
}

}  // namespace
}  // namespace allot::testing
