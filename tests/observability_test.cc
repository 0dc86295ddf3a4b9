// What allotd shows beside its JSON API: Prometheus metrics (checked by promtool), the OpenAPI
// document (which must name every route the API serves), and the dashboard's built files.
#include <cstdlib>
#include <fstream>
#include <set>

#include "api/app.h"
#include "api/service_proxy.h"
#include "support/fixture.h"

namespace allot::testing {
namespace {

using nlohmann::json;

class ObservabilityTest : public ApiTest {
 protected:
  ObservabilityTest() {
    std::filesystem::create_directories(web_.path() / "assets");
    std::ofstream(web_.path() / "index.html") << "<!doctype html><title>Allot</title>";
    std::ofstream(web_.path() / "assets" / "app-1a2b.js") << "console.log('allot')";
    std::ofstream(web_.path().parent_path() / "secret.txt") << "not served";
    daemon_.set_extra_args({"--web-dir", web_.path().string()});
  }

  // Status line, headers and body as curl prints them.
  RunResult curl(const std::string& path, const std::string& key = {}) {
    std::vector<std::string> args = {"-sS", "-i", "--path-as-is", daemon_.url() + path};
    if (!key.empty()) args.insert(args.begin(), {"-H", "Authorization: Bearer " + key});
    return run_program("/usr/bin/curl", args);
  }

  TempDir web_;
};

TEST_F(ObservabilityTest, MetricsAreForOperatorsAndPassPromtool) {
  call("GET", "/v1/whoami", nullptr, a_.member_key, 200);  // One timed API call at least.
  call("GET", "/metrics", nullptr, a_.admin_key, 403);
  call("GET", "/metrics", nullptr, "", 401);
  const RunResult got = curl("/metrics", op_key_);
  ASSERT_EQ(got.exit_code, 0) << got.err;
  EXPECT_NE(got.out.find("Content-Type: text/plain; version=0.0.4"), std::string::npos);
  const std::string whoami_count =
      R"(allot_http_request_duration_seconds_count{method="GET",route="/v1/whoami",code="200"})";
  for (const std::string& line :
       {std::string(R"(allot_nodes{state="ready"} 0)"), std::string("allot_queue_length 0"),
        std::string("allot_ledger_balance_sum_micros 0"),
        std::string(R"(allot_instances{state="running"} 0)"),
        std::string(R"(allot_tenant_month_spend_micros{tenant="alpha")"), whoami_count,
        std::string("allot_schedule_duration_seconds_count 0"),
        std::string("# TYPE allot_queue_wait_seconds histogram")}) {
    EXPECT_NE(got.out.find(line), std::string::npos) << line << "\n" << got.out;
  }
  const auto file = web_.path().parent_path() / "metrics.txt";
  std::ofstream(file) << got.out.substr(got.out.find("\r\n\r\n") + 4);
  const RunResult check =
      run_program("/bin/sh", {"-c", "promtool check metrics < " + file.string()});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
}

TEST_F(ObservabilityTest, TheOpenApiDocumentNamesEveryRouteTheApiServes) {
  const ClientResponse got = daemon_.request("GET", "/openapi.json", "", "");
  ASSERT_EQ(got.status, 200);
  const json doc = json::parse(got.body, nullptr, false);
  ASSERT_TRUE(doc.is_object());
  EXPECT_TRUE(doc["openapi"].get<std::string>().starts_with("3."));
  const json& paths = doc["paths"];
  std::set<std::pair<std::string, std::string>> served;
  auto lower = [](std::string_view text) {
    std::string out(text);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  for (const Route& route : all_routes()) {
    const std::string method = lower(route.method);
    served.emplace(std::string(route.pattern), method);
    EXPECT_TRUE(paths.contains(route.pattern) && paths[route.pattern].contains(method))
        << route.method << " " << route.pattern << " is missing from docs/openapi.json";
  }
  // The OpenAI-style routes the service proxy answers are served too.
  for (const auto& [method, path] : kModelRoutes) served.emplace(std::string(path), lower(method));
  // And nothing it describes is an API route that does not exist.
  for (const auto& [path, operations] : paths.items()) {
    if (path == "/healthz" || path == "/readyz" || path == "/version" || path == "/openapi.json") {
      continue;
    }
    for (const auto& [method, op] : operations.items()) {
      if (method == "parameters") continue;
      EXPECT_TRUE(served.contains({path, method})) << method << " " << path << " is not served";
    }
  }
}

TEST_F(ObservabilityTest, TheDashboardsFilesAreServedAndNothingOutsideTheirFolder) {
  const RunResult index = curl("/");
  EXPECT_NE(index.out.find("HTTP/1.1 200"), std::string::npos) << index.out;
  EXPECT_NE(index.out.find("Content-Type: text/html"), std::string::npos);
  EXPECT_NE(index.out.find("Cache-Control: no-cache"), std::string::npos);
  EXPECT_NE(index.out.find("<title>Allot</title>"), std::string::npos);
  const RunResult bundle = curl("/assets/app-1a2b.js");
  EXPECT_NE(bundle.out.find("Content-Type: text/javascript"), std::string::npos) << bundle.out;
  EXPECT_NE(bundle.out.find("immutable"), std::string::npos);
  for (const char* path :
       {"/../secret.txt", "/assets/../../secret.txt", "/%2e%2e/secret.txt", "/assets/missing.js"}) {
    const RunResult refused = curl(path);
    EXPECT_NE(refused.out.find("HTTP/1.1 404"), std::string::npos) << path << "\n" << refused.out;
    EXPECT_EQ(refused.out.find("not served"), std::string::npos) << path;
  }
  // The API is unaffected.
  call("GET", "/v1/whoami", nullptr, a_.member_key, 200);
}

}  // namespace
}  // namespace allot::testing
