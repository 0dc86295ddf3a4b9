// Published ports and port-forwards under a real allotd and agent: an instance's HTTP server and
// WebSocket reached through allotd's /i/INSTANCE/PORT/ and the tunnel its agent keeps open
// outward, by its tenant's key or a signed link and by nobody else; a TCP port carried by
// `allot port-forward`; and the tunnel back after allotd restarts.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <fstream>

#include <fmt/format.h>

#include "common/asio.h"
#include "support/cluster.h"
#include "support/raw_http.h"

namespace allot::testing {
namespace {

using nlohmann::json;
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

// On PORT, HTTP that says what it was asked (method, target, the Authorization and Cookie headers
// it got, the prefix allotd says it serves it under, the body) and a WebSocket that echoes; on
// PORT+1, a TCP echo; given a certificate and its key, the same HTTP over TLS on PORT+2.
constexpr std::string_view kServer = R"PY(
import base64, hashlib, os, socket, sys, threading, time
port = int(sys.argv[1])
def websocket(conn, f, key):
    accept = base64.b64encode(hashlib.sha1((key + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').encode()).digest()).decode()
    conn.sendall(('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n'
                  'Sec-WebSocket-Accept: ' + accept + '\r\n\r\n').encode())
    while True:
        head = f.read(2)
        if len(head) < 2: return
        op, n = head[0] & 15, head[1] & 127
        if n == 126: n = int.from_bytes(f.read(2), 'big')
        mask = f.read(4) if head[1] & 128 else b'\0\0\0\0'
        data = bytes(b ^ mask[i % 4] for i, b in enumerate(f.read(n)))
        if op == 8:
            conn.sendall(bytes([136, 0])); conn.shutdown(socket.SHUT_RDWR); return
        conn.sendall(bytes([128 | op, len(data)]) + data)
def events(conn, go):
    # An event, then the next only once the file `go` exists: a relay that holds the first back
    # until the answer ends never lets its reader make the file.
    conn.sendall(b'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n'
                 b'Transfer-Encoding: chunked\r\n\r\n')
    for data in (b'data: one\n\n', b'data: two\n\n'):
        conn.sendall(b'%x\r\n%s\r\n' % (len(data), data))
        while not os.path.exists(go): time.sleep(0.05)
    conn.sendall(b'0\r\n\r\n')
def http(conn):
    f = conn.makefile('rb')
    while True:
        line = f.readline()
        if not line: return
        method, target, _ = line.decode().split(' ', 2)
        headers = {}
        while True:
            h = f.readline().decode()
            if h in ('\r\n', '\n', ''): break
            k, v = h.split(':', 1); headers[k.strip().lower()] = v.strip()
        body = f.read(int(headers.get('content-length', '0'))).decode()
        if headers.get('upgrade', '').lower() == 'websocket':
            return websocket(conn, f, headers['sec-websocket-key'])
        if target.startswith('/bare-lf'):
            conn.sendall(b'HTTP/1.1 200 OK\nContent-Type: text/plain\nContent-Length: 4\n\nbare')
            continue
        if target.startswith('/events'):
            events(conn, target.split('go=', 1)[1])
            continue
        text = '%s %s auth=%s cookie=%s prefix=%s body=%s' % (method, target,
            headers.get('authorization', '-'), headers.get('cookie', '-'),
            headers.get('x-forwarded-prefix', '-'), body)
        out = text.encode()
        conn.sendall(b'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n' % len(out) + out)
def echo(conn):
    while True:
        data = conn.recv(65536)
        if not data: return
        conn.sendall(data)
def serve(p, handle):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(('127.0.0.1', p)); s.listen(64)
    while True:
        c, _ = s.accept()
        threading.Thread(target=handle, args=(c,), daemon=True).start()
threading.Thread(target=serve, args=(port + 1, echo), daemon=True).start()
if len(sys.argv) > 3:
    import ssl
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(sys.argv[2], sys.argv[3])
    def tls_http(conn):
        try:
            http(tls.wrap_socket(conn, server_side=True))
        except (ssl.SSLError, OSError):
            conn.close()
    threading.Thread(target=serve, args=(port + 2, tls_http), daemon=True).start()
print('serving', flush=True)
serve(port, http)
)PY";

int free_port() { return free_loopback_port(); }

struct Answer {
  int status = 0;
  std::string body;
  std::string set_cookie;
  std::string location;
  std::string csp;
};

class PortTest : public ClusterTest {
 protected:
  PortTest() { agent_count_ = 1; }

  void SetUp() override {
    ClusterTest::SetUp();
    if (HasFatalFailure()) return;
    port_ = free_port();
    const std::filesystem::path script = dir_.path() / "server.py";
    std::ofstream(script) << kServer;
    id_ = launch({{"gpus", 1},
                  {"interactive", true},
                  {"ports", {port_}},
                  {"command", {"python3", script.string(), std::to_string(port_)}}});
    ASSERT_TRUE(instance_reaches(id_, "running")) << instance(id_).dump();
    // Up once its server listens and the agent's tunnel is open.
    ASSERT_TRUE(eventually([&] { return get(path("/"), member_key_).status == 200; }))
        << get(path("/"), member_key_).body << logs(id_);
  }

  std::string path(const std::string& rest) const {
    return fmt::format("/i/{}/{}{}", id_, port_, rest);
  }

  // One request to allotd, with `key` as a Bearer token when not empty.
  Answer request(const std::string& method, const std::string& target, const std::string& key,
                 const std::string& body = "", const std::string& cookie = "") {
    const RawAnswer in = raw_request(daemon_.url(), method, target, key, body, cookie);
    return Answer{.status = in.status,
                  .body = in.body,
                  .set_cookie = in.header("set-cookie"),
                  .location = in.header("location"),
                  .csp = in.header("content-security-policy")};
  }
  Answer get(const std::string& target, const std::string& key) {
    return request("GET", target, key);
  }

  int port_ = 0;
  std::string id_;
};

std::string error_code(const Answer& answer) { return error_code_of(answer.body); }

TEST_F(PortTest, APublishedPortAnswersItsTenantAndNoOneElse) {
  // Through allotd to the instance: the path under the prefix, the query, the body; allotd's key
  // never reaches the instance.
  const Answer ok = request("POST", path("/api/run?x=1&x=2"), member_key_, "payload");
  EXPECT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(ok.body, fmt::format("POST /api/run?x=1&x=2 auth=- cookie=- prefix=/i/{}/{} body="
                                 "payload",
                                 id_, port_));
  // Its pages run as an origin of their own, apart from the dashboard on the same host.
  EXPECT_NE(ok.csp.find("sandbox"), std::string::npos);

  const std::string stranger = stranger_key();
  const Answer theirs = get(path("/"), stranger);
  EXPECT_EQ(theirs.status, 404) << theirs.body;
  EXPECT_EQ(error_code(theirs), "not_found");
  const Answer anonymous = get(path("/"), "");
  EXPECT_EQ(anonymous.status, 401) << anonymous.body;
  EXPECT_EQ(error_code(anonymous), "unauthenticated");
  EXPECT_EQ(get(path("/"), "not-a-key").status, 401);

  // A port it does not publish, a port that is none, an instance that is not there.
  const Answer unpublished = get(fmt::format("/i/{}/{}/", id_, port_ + 1), member_key_);
  EXPECT_EQ(unpublished.status, 404) << unpublished.body;
  const Answer out_of_range = get(fmt::format("/i/{}/70000/", id_), member_key_);
  EXPECT_EQ(out_of_range.status, 400) << out_of_range.body;
  EXPECT_EQ(error_code(out_of_range), "invalid_argument");
  EXPECT_EQ(get(fmt::format("/i/{}/abc/", id_), member_key_).status, 400);
  EXPECT_EQ(get(fmt::format("/i/ins_0000000000000000/{}/", port_), member_key_).status, 404);
  // Without a key, an instance that is not there looks like one that is.
  EXPECT_EQ(get(fmt::format("/i/ins_0000000000000000/{}/", port_), "").status, 401);

  // The bare prefix gets its slash, so that the app's relative links resolve under it.
  const Answer bare = get(fmt::format("/i/{}/{}?a=b", id_, port_), member_key_);
  EXPECT_EQ(bare.status, 308);
  EXPECT_EQ(bare.location, path("/?a=b"));
}

TEST_F(PortTest, APublicPortAnswersAnyoneButAStrangersKey) {
  const int port = free_port();
  const std::string script = (dir_.path() / "server.py").string();
  const std::string open = launch({{"gpus", 1},
                                   {"interactive", true},
                                   {"ports", {{{"port", port}, {"public", true}}}},
                                   {"command", {"python3", script, std::to_string(port)}}});
  ASSERT_TRUE(instance_reaches(open, "running"));
  const std::string root = fmt::format("/i/{}/{}/", open, port);
  EXPECT_TRUE(eventually([&] { return get(root, "").status == 200; })) << get(root, "").body;
  // A key is still checked when one is given: another tenant's finds nothing.
  EXPECT_EQ(get(root, stranger_key()).status, 404);
}

TEST_F(PortTest, AnHttpsPortIsProxiedWithTheNodeSpeakingTlsToIt) {
  // The app's own self-signed certificate, as an app in an instance makes one.
  const std::string cert = (dir_.path() / "cert.pem").string();
  const std::string key = (dir_.path() / "key.pem").string();
  ASSERT_EQ(std::system(fmt::format("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "
                                    "/CN=localhost -keyout {} -out {} 2>/dev/null",
                                    key, cert)
                            .c_str()),
            0);
  const int port = free_port();
  const std::string script = (dir_.path() / "server.py").string();
  // PORT+2 speaks TLS; PORT speaks plain HTTP, though published as https by mistake.
  const std::string id = launch(
      {{"gpus", 1},
       {"interactive", true},
       {"ports",
        {{{"port", port + 2}, {"protocol", "https"}}, {{"port", port}, {"protocol", "https"}}}},
       {"command", {"python3", script, std::to_string(port), cert, key}}});
  ASSERT_TRUE(instance_reaches(id, "running"));
  const std::string secure = fmt::format("/i/{}/{}", id, port + 2);
  EXPECT_TRUE(eventually([&] { return get(secure + "/", member_key_).status == 200; }))
      << get(secure + "/", member_key_).body;
  const Answer ok = request("POST", secure + "/api?x=1", member_key_, "over tls");
  EXPECT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(ok.body, fmt::format("POST /api?x=1 auth=- cookie=- prefix={} body=over tls", secure));
  // Kept streams carry TLS too: a run of requests all answer.
  for (int i = 0; i < 5; ++i) EXPECT_EQ(get(secure + "/again", member_key_).status, 200);
  // The walls hold as for any port.
  EXPECT_EQ(get(secure + "/", stranger_key()).status, 404);
  EXPECT_EQ(get(secure + "/", "").status, 401);

  // A port that does not speak TLS: 502, saying why.
  const Answer plain = get(fmt::format("/i/{}/{}/", id, port), member_key_);
  EXPECT_EQ(plain.status, 502) << plain.body;
  EXPECT_EQ(error_code(plain), "bad_gateway");
  EXPECT_NE(plain.body.find("TLS handshake"), std::string::npos) << plain.body;
}

TEST_F(PortTest, ASignedLinkLetsABrowserInToThatPortAloneUntilItExpires) {
  const json ports = call("GET", "/v1/instances/" + id_ + "/ports", nullptr, 200);
  ASSERT_EQ(ports["items"].size(), 1u) << ports.dump();
  const std::string link = ports["items"][0]["link"];
  ASSERT_TRUE(link.starts_with(path("/?allot_link="))) << link;
  const std::string token = link.substr(link.find('=') + 1);

  // The link itself: in, and a cookie for the port's path that lets the page's next requests in.
  const Answer first = get(link, "");
  EXPECT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(first.body.find("allot_link"), std::string::npos) << first.body;
  EXPECT_NE(first.set_cookie.find("allot_link=" + token), std::string::npos) << first.set_cookie;
  EXPECT_NE(first.set_cookie.find(fmt::format("Path=/i/{}/{}/", id_, port_)), std::string::npos);
  EXPECT_NE(first.set_cookie.find("HttpOnly"), std::string::npos);
  const Answer next = request("GET", path("/app.js"), "", "", "theme=dark; allot_link=" + token);
  EXPECT_EQ(next.status, 200) << next.body;
  // The instance's own cookies reach it; allotd's does not.
  EXPECT_NE(next.body.find("cookie=theme=dark prefix"), std::string::npos) << next.body;

  // Altered, or taken to another port: refused.
  std::string altered = token;
  altered[altered.size() / 2] = altered[altered.size() / 2] == 'A' ? 'B' : 'A';
  EXPECT_EQ(get(path("/?allot_link=" + altered), "").status, 401);
  EXPECT_EQ(get(fmt::format("/i/{}/{}/?allot_link={}", id_, port_ + 1, token), "").status, 401);

  // Another tenant cannot list the links.
  call_with(stranger_key(), "GET", "/v1/instances/" + id_ + "/ports", "", 404);
}

TEST_F(PortTest, AWebSocketEchoesThroughAllotd) {
  asio::io_context io;
  websocket::stream<beast::tcp_stream> ws(io);
  const std::string address = daemon_.url().substr(std::string("http://").size());
  const size_t colon = address.rfind(':');
  beast::get_lowest_layer(ws).connect(
      tcp::resolver(io).resolve(address.substr(0, colon), address.substr(colon + 1)));
  ws.set_option(websocket::stream_base::decorator([&](websocket::request_type& request) {
    request.set(http::field::authorization, "Bearer " + member_key_);
  }));
  ws.handshake("localhost", path("/ws"));
  for (const std::string message : {"hello", "through the tunnel"}) {
    ws.write(asio::buffer(message));
    beast::flat_buffer buffer;
    ws.read(buffer);
    EXPECT_EQ(beast::buffers_to_string(buffer.data()), message);
  }
  ws.close(websocket::close_code::normal);
}

TEST_F(PortTest, AnAnswerWhoseLinesEndInABareLineFeedIsRelayedAsCurlReadsIt) {
  const Answer answer = get(path("/bare-lf"), member_key_);
  EXPECT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(answer.body, "bare");
}

TEST_F(PortTest, AnEventStreamPassesEachEventAsTheServerSendsIt) {
  const std::filesystem::path go = dir_.path() / "go";
  asio::io_context io;
  beast::tcp_stream stream(io);
  const std::string address = daemon_.url().substr(std::string("http://").size());
  const size_t colon = address.rfind(':');
  stream.connect(tcp::resolver(io).resolve(address.substr(0, colon), address.substr(colon + 1)));
  http::request<http::empty_body> ask{http::verb::get, path("/events?go=" + go.string()), 11};
  ask.set(http::field::host, "localhost");
  ask.set(http::field::authorization, "Bearer " + member_key_);
  http::write(stream, ask);
  // The first event comes while the server still holds the second back.
  std::string got;
  auto read_until = [&](const std::string& text) {
    std::array<char, 4096> chunk{};
    while (got.find(text) == std::string::npos) {
      boost::system::error_code ec;
      size_t n = 0;
      stream.expires_after(std::chrono::seconds(30));  // Then ec is a timeout.
      stream.async_read_some(asio::buffer(chunk), [&](boost::system::error_code e, size_t k) {
        ec = e;
        n = k;
      });
      io.restart();
      io.run();
      if (ec) return false;
      got.append(chunk.data(), n);
    }
    return true;
  };
  ASSERT_TRUE(read_until("data: one")) << got;
  EXPECT_EQ(got.find("data: two"), std::string::npos) << got;
  std::ofstream(go) << "go";
  ASSERT_TRUE(read_until("data: two")) << got;
  EXPECT_NE(got.find("text/event-stream"), std::string::npos) << got;
}

// `allot port-forward` in the background: its pid, and the port it listens on.
struct Forward {
  pid_t pid = -1;
  int port = 0;
};

Forward start_forward(const std::string& cli, const std::vector<std::string>& env,
                      const std::vector<std::string>& args) {
  int out[2];
  if (::pipe(out) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::close(out[0]);
    std::vector<char*> argv = {const_cast<char*>(cli.c_str())};
    for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    std::vector<char*> envp;
    envp.reserve(env.size() + 1);
    for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    ::execve(cli.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(out[1]);
  std::string line;
  char c = 0;
  while (::read(out[0], &c, 1) == 1 && c != '\n') line += c;
  ::close(out[0]);
  // "forwarding 127.0.0.1:PORT to port N of ID ..."
  const size_t colon = line.find(':');
  Forward forward{.pid = pid};
  if (colon != std::string::npos) forward.port = std::atoi(line.c_str() + colon + 1);
  return forward;
}

TEST_F(PortTest, PortForwardCarriesATcpConnectionToAnyPortOfTheInstance) {
  const std::vector<std::string> env = {"ALLOT_SERVER=" + daemon_.url(), "ALLOT_KEY=" + member_key_,
                                        "HOME=/nonexistent"};
  const Forward forward = start_forward(bin_dir() + "/src/cli/allot", env,
                                        {"port-forward", id_, fmt::format("0:{}", port_ + 1)});
  ASSERT_GT(forward.port, 0);
  {
    asio::io_context io;
    tcp::socket socket(io);
    socket.connect(
        tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<uint16_t>(forward.port)));
    for (const std::string& message : {std::string("ping\n"), std::string(100000, 'x')}) {
      asio::write(socket, asio::buffer(message));
      std::string echoed(message.size(), '\0');
      asio::read(socket, asio::buffer(echoed));
      EXPECT_EQ(echoed, message);
    }
  }
  ::kill(forward.pid, SIGTERM);
  int status = 0;
  ::waitpid(forward.pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;

  // Another tenant's key: refused before it listens, as a missing instance.
  const RunResult theirs = cli({"port-forward", id_, "0:22"}, stranger_key());
  EXPECT_EQ(theirs.exit_code, 4) << theirs.out << theirs.err;
  const RunResult bad = cli({"port-forward", id_, "1:99999"}, member_key_);
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
}

TEST_F(PortTest, ThePortAnswersAgainAfterAllotdRestartsAndStopsWithItsInstance) {
  ASSERT_EQ(daemon_.stop(), 0);
  ASSERT_TRUE(daemon_.start_on_same_port());
  // The agent opens its tunnel again by itself.
  EXPECT_TRUE(eventually([&] { return get(path("/"), member_key_).status == 200; }))
      << get(path("/"), member_key_).body;

  call("POST", "/v1/instances/" + id_ + "/stop", nullptr, 200);
  ASSERT_TRUE(instance_reaches(id_, "stopped"));
  const Answer stopped = get(path("/"), member_key_);
  EXPECT_EQ(stopped.status, 409) << stopped.body;
  EXPECT_EQ(error_code(stopped), "conflict");
}

class PublicPortTest : public ClusterTest {
 protected:
  PublicPortTest() {
    agent_count_ = 0;
    extra_daemon_args_ = {"--public-ports", "false"};
  }
};

TEST_F(PublicPortTest, AnOperatorMayForbidPublicPortsAndBadPortsAreRefused) {
  const json body = {{"gpus", 1}, {"command", {"sleep", "1"}}};
  auto with_ports = [&](json ports) {
    json b = body;
    b["ports"] = std::move(ports);
    return b;
  };
  const json forbidden =
      call("POST", "/v1/instances", with_ports({{{"port", 8888}, {"public", true}}}), 403);
  EXPECT_EQ(forbidden["error"]["code"], "forbidden");
  EXPECT_EQ(call("POST", "/v1/instances", with_ports({0}), 400)["error"]["code"],
            "invalid_argument");
  EXPECT_EQ(call("POST", "/v1/instances", with_ports({65536}), 400)["error"]["code"],
            "invalid_argument");
  EXPECT_EQ(call("POST", "/v1/instances", with_ports({80, 80}), 400)["error"]["code"],
            "invalid_argument");
  EXPECT_EQ(call("POST", "/v1/instances", with_ports({{{"port", 80}, {"protocol", "ftp"}}}),
                 400)["error"]["code"],
            "invalid_argument");
  EXPECT_EQ(call("POST", "/v1/instances", with_ports("8888"), 400)["error"]["code"],
            "invalid_type");
  // None of it made an instance.
  EXPECT_TRUE(call("GET", "/v1/instances", nullptr, 200)["items"].empty());
}

}  // namespace
}  // namespace allot::testing
