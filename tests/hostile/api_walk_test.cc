// Every route of the API, read from allotd's own OpenAPI document, walked by strangers: an
// anonymous client is refused everywhere but the public probes, and another tenant's keys, of
// either role, reach none of a tenant's objects by any method. Nothing answers 5xx, and nothing
// changes. A route added later is walked too.
#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "support/fixture.h"

namespace allot::testing {
namespace {

using nlohmann::json;

const std::set<std::string> kPublic = {"/healthz", "/readyz", "/version", "/openapi.json"};
// Routes that authenticate by what the request carries besides a key (a browser's shell
// WebSocket, by its ticket in the query): refused all the same, each in its own way.
const std::set<std::string> kOwnCredential = {"/v1/instances/{id}/shell"};

// The document's routes as (method, path) pairs, methods in capitals.
std::vector<std::pair<std::string, std::string>> routes(const json& document) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [path, operations] : document["paths"].items()) {
    for (const auto& [method, operation] : operations.items()) {
      std::string upper = method;
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      out.emplace_back(upper, path);
    }
  }
  return out;
}

class ApiWalkTest : public ApiTest {
 protected:
  std::vector<std::pair<std::string, std::string>> all_routes() {
    const ClientResponse document = daemon_.request("GET", "/openapi.json", "", "");
    EXPECT_EQ(document.status, 200);
    auto out = routes(json::parse(document.body, nullptr, false));
    EXPECT_GT(out.size(), 90U);
    return out;
  }
};

TEST_F(ApiWalkTest, AnAnonymousClientIsRefusedOnEveryRouteButThePublicProbes) {
  const std::string before = snapshot();
  for (const auto& [method, path] : all_routes()) {
    const std::string target = std::regex_replace(path, std::regex(R"(\{[^}]+\})"), "x1");
    const ClientResponse answer = daemon_.request(method, target, "{}", "");
    if (kPublic.contains(path)) {
      EXPECT_LT(answer.status, 500) << method << " " << target;
      continue;
    }
    if (kOwnCredential.contains(path)) {
      EXPECT_TRUE(answer.status >= 400 && answer.status < 500) << method << " " << target;
      continue;
    }
    EXPECT_EQ(answer.status, 401) << method << " " << target << " -> " << answer.body;
  }
  EXPECT_EQ(snapshot(), before);
}

TEST_F(ApiWalkTest, AnotherTenantsKeysReachNoneOfATenantsObjectsByAnyMethod) {
  // Objects of tenant A's of every kind this fixture can make without a node.
  const std::string volume =
      call("POST", "/v1/volumes", {{"name", "data"}, {"size_gb", 1}}, a_.member_key, 201)["id"];
  const std::map<std::string, std::string> ids = {{"tenants", a_.tenant_id},
                                                  {"projects", a_.project_id},
                                                  {"users", a_.member_id},
                                                  {"volumes", volume}};
  const std::string before = snapshot();
  int tried = 0;
  for (const auto& [method, path] : all_routes()) {
    std::smatch match;
    static const std::regex kOwned(R"(^/v1/([a-z-]+)/\{id\}(/.*)?$)");
    if (!std::regex_match(path, match, kOwned) || !ids.contains(match[1])) continue;
    const std::string target = "/v1/" + match[1].str() + "/" + ids.at(match[1]) + match[2].str();
    for (const std::string& key : {b_.admin_key, b_.member_key}) {
      const ClientResponse answer = daemon_.request(method, target, "{}", key);
      ++tried;
      // A route may check the body before whose the object is (400, the same for any id):
      // refused all the same, and the snapshot below shows that nothing changed.
      EXPECT_TRUE(answer.status == 400 || answer.status == 403 || answer.status == 404)
          << method << " " << target << " with B's key -> " << answer.status << " " << answer.body;
    }
  }
  EXPECT_GT(tried, 20);
  EXPECT_EQ(snapshot(), before) << "a refused request changed something";
}

}  // namespace
}  // namespace allot::testing
