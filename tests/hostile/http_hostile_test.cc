// An anonymous client's worst bytes: no request, however malformed or large, ends allotd. Each
// case is answered with a 4xx (or the connection is closed), and the next request is served.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/daemon.h"
#include "support/raw_http.h"

namespace allot::testing {
namespace {

std::string chunked_post(const std::string& trailer_and_more) {
  return "POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n" +
         trailer_and_more;
}

class HttpHostileTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(daemon_.start()); }

  // allotd is alive and serving: what each case is checked by after its bytes.
  void expect_alive(const std::string& after) {
    const std::string answer =
        raw_send(daemon_.url(), "GET /healthz HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(status_of(answer), 200) << "after " << after << "\n" << daemon_.output();
  }

  Daemon daemon_;
};

TEST_F(HttpHostileTest, ATrailerTooLargeForAFieldIsRefusedAndAllotdLivesOn) {
  struct Case {
    std::string spec;
    std::string bytes;
  };
  const std::vector<Case> cases = {
      {"a trailer value of 70,000 bytes",
       chunked_post("0\r\nX: " + std::string(70'000, 'a') + "\r\n\r\n")},
      {"a trailer name of 70,000 bytes",
       chunked_post("0\r\n" + std::string(70'000, 'a') + ": v\r\n\r\n")},
      {"a thousand trailers of 1,000 bytes",
       [] {
         std::string many = "0\r\n";
         for (int i = 0; i < 1000; ++i)
           many += "X" + std::to_string(i) + ": " + std::string(1000, 'v') + "\r\n";
         return chunked_post(many + "\r\n");
       }()},
      {"a chunk extension of 100,000 bytes",
       "POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2;x=" +
           std::string(100'000, 'e') + "\r\n{}\r\n0\r\n\r\n"},
      {"a last chunk's extension of 100,000 bytes",
       chunked_post("0;x=" + std::string(100'000, 'e') + "\r\n\r\n")},
  };
  for (const Case& c : cases) {
    const std::string answer = raw_send(daemon_.url(), c.bytes);
    const int status = status_of(answer);
    EXPECT_TRUE(status == 0 || (status >= 400 && status < 500)) << c.spec << ": " << answer;
    if (status != 0) {
      EXPECT_EQ(error_code_of(answer.substr(answer.find("\r\n\r\n") + 4)), "header_too_large")
          << c.spec;
    }
    expect_alive(c.spec);
  }
}

TEST_F(HttpHostileTest, ManyHeaderFieldsAndLongOnesAreRefusedAndAllotdLivesOn) {
  std::string many = "GET /healthz HTTP/1.1\r\nHost: a\r\n";
  for (int i = 0; i < 5000; ++i) many += "X: y\r\n";
  const std::vector<std::string> requests = {
      many + "\r\n",
      "GET /healthz HTTP/1.1\r\nHost: a\r\n" + std::string(70'000, 'n') + ": v\r\n\r\n",
      "GET /healthz HTTP/1.1\r\nHost: a\r\nX: " + std::string(200'000, 'v') + "\r\n\r\n",
  };
  for (const std::string& request : requests) {
    EXPECT_EQ(status_of(raw_send(daemon_.url(), request)), 431);
    expect_alive(request.substr(0, 40));
  }
}

TEST_F(HttpHostileTest, AChunkedRequestWhoseLastChunkComesInPiecesIsAnsweredAndAllotdLivesOn) {
  // Valid HTTP that Boost 1.74's Beast asserts on when, after the last chunk's "0\r\n", one
  // byte comes before the rest: found by the http_request fuzz target (docs/fuzzing.md).
  const std::string answer = raw_send_pieces(
      daemon_.url(),
      {"POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n", "\r", "\n"},
      300, 5'000);
  const int status = status_of(answer);
  EXPECT_TRUE(status == 0 || status < 500) << answer;
  expect_alive("a last chunk in pieces");
}

TEST_F(HttpHostileTest, ABodyNestedAHundredThousandDeepIsRefusedAndAllotdLivesOn) {
  // 200 KB, under the body limit: copied or written back, it would overflow the stack.
  const std::string body = R"({"command": ["x"], "idle": )" + std::string(100'000, '[') +
                           std::string(100'000, ']') + "}";
  const ClientResponse answer = daemon_.request("POST", "/v1/instances", body, daemon_.admin_key());
  EXPECT_EQ(answer.status, 400) << answer.body;
  EXPECT_EQ(error_code_of(answer.body), "malformed_json");
  expect_alive("a deep body");
}

}  // namespace
}  // namespace allot::testing
