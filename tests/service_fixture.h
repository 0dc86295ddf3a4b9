// The fixture of the services' tests: a real allotd, three agents and a small HTTP server that
// every replica runs.
#pragma once

#include <fstream>
#include <string>
#include <string_view>

#include "support/cluster.h"
#include "support/raw_http.h"

namespace allot::testing {

// On PORT: GET /health (503 while NOT_READY is set, or since a GET /sicken), any other GET answered
// with the revision's VERSION, what it was asked and the Authorization header it got, after
// ?sleep=S; and a POST answered as an OpenAI chat completion, its usage one token per word asked
// and one answered: with "stream", as server-sent events whose last carries the usage; with
// "tokens_header": N, as {} with X-Allot-Tokens: N; with "broken", with a usage whose count is not
// a number. An answer is gzipped when the request accepts gzip.
constexpr std::string_view kServer = R"PY(
import gzip, json, os, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse, parse_qs
SICK = False
class Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    def log_message(self, *args): pass
    def answer(self, status, text):
        out = text.encode()
        self.send_response(status)
        if 'gzip' in self.headers.get('Accept-Encoding', ''):
            out = gzip.compress(out)
            self.send_header('Content-Encoding', 'gzip')
        self.send_header('Content-Type', 'text/plain')
        self.send_header('Content-Length', str(len(out)))
        self.end_headers()
        self.wfile.write(out)
    def do_GET(self):
        url = urlparse(self.path)
        if url.path == '/health':
            return self.answer(503 if os.environ.get('NOT_READY') or SICK else 200, 'ok')
        if url.path == '/sicken':
            globals()['SICK'] = True
            return self.answer(200, 'sick')
        time.sleep(float(parse_qs(url.query).get('sleep', ['0'])[0]))
        self.answer(200, 'v%s %s auth=%s' % (os.environ.get('VERSION', '?'), url.path,
                                             self.headers.get('Authorization', '-')))
    def do_POST(self):
        asked = json.loads(self.rfile.read(int(self.headers.get('Content-Length', '0'))))
        words = sum(len(m['content'].split()) for m in asked.get('messages', []))
        usage = {'prompt_tokens': words, 'completion_tokens': 1, 'total_tokens': words + 1}
        if asked.get('broken'):
            usage = {'total_tokens': 'many'}
        if asked.get('stream'):
            events = [{'choices': [{'delta': {'content': 'hi'}}], 'usage': None},
                      {'choices': [], 'usage': usage}]
            out = ''.join('data: %s\n\n' % json.dumps(e) for e in events) + 'data: [DONE]\n\n'
            out = out.encode()
            self.send_response(200)
            self.send_header('Content-Type', 'text/event-stream')
            self.send_header('Content-Length', str(len(out)))
            self.end_headers()
            return self.wfile.write(out)
        if asked.get('tokens_header'):
            out = b'{}'
            self.send_response(200)
            self.send_header('Content-Type', 'application/json')
            self.send_header('X-Allot-Tokens', str(asked['tokens_header']))
            self.send_header('Content-Length', str(len(out)))
            self.end_headers()
            return self.wfile.write(out)
        self.answer(200, json.dumps({'object': 'chat.completion', 'model': asked['model'],
            'path': self.path, 'choices': [{'message': {'role': 'assistant', 'content': 'hi'}}],
            'usage': usage}))
ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer((os.environ.get('ALLOT_HOST', '127.0.0.1'), int(sys.argv[1])), Handler).serve_forever()
)PY";

struct Answer {
  int status = 0;
  std::string body;
  std::string replica;
  std::string retry_after;
};

class ServiceTest : public ClusterTest {
 protected:
  ServiceTest() {
    agent_count_ = 3;
    own_addresses_ = true;  // Replicas on two nodes serve the same port.
    extra_daemon_args_ = {"--service-interval-ms", "200", "--service-probe-interval-ms", "200",
                          "--service-hold-ms",     "8000"};
  }

  void SetUp() override {
    ClusterTest::SetUp();
    if (HasFatalFailure()) return;
    port_ = free_loopback_port();
    script_ = (dir_.path() / "server.py").string();
    std::ofstream(script_) << kServer;
  }

  Answer get(const std::string& target, const std::string& key) {
    const RawAnswer in = raw_request(daemon_.url(), "GET", target, key);
    return Answer{.status = in.status,
                  .body = in.body,
                  .replica = in.header("x-allot-replica"),
                  .retry_after = in.header("retry-after")};
  }

  nlohmann::json service(const std::string& name) {
    return call_with(member_key_, "GET", "/v1/services/" + name, "", 200);
  }

  // The command of every replica: the server on the service's port. Eight GPUs: one replica
  // fills one simulated node.
  nlohmann::json replica(const std::string& version, bool ready = true) {
    nlohmann::json env = {{"VERSION", version}};
    if (!ready) env["NOT_READY"] = "1";
    return {{"gpus", 8}, {"env", env}, {"command", {"python3", script_, std::to_string(port_)}}};
  }

  int port_ = 0;
  std::string script_;
};

inline std::string error_code(const Answer& answer) { return error_code_of(answer.body); }

}  // namespace allot::testing
