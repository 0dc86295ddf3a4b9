// Every endpoint refuses bad input with a stable error code and changes nothing.
#include <regex>

#include "api/app.h"
#include "api/routes/identity.h"
#include "support/fixture.h"

namespace allot::testing {
namespace {

using nlohmann::json;

enum class As { kOperator, kAdmin, kMember, kNoKey, kWrongKey };

struct BadCase {
  const char* name;
  const char* method;
  const char* target;
  const char* body;
  As as;
  int status;
  const char* code;
};

// Placeholders in targets and bodies: A_* are tenant alpha's objects, B_* tenant beta's.
const BadCase kBadCases[] = {
    {"tenant create: malformed JSON", "POST", "/v1/tenants", "{", As::kOperator, 400,
     "malformed_json"},
    {"tenant create: not an object", "POST", "/v1/tenants", "[]", As::kOperator, 400,
     "malformed_json"},
    {"tenant create: name of wrong type", "POST", "/v1/tenants", R"({"name": 5})", As::kOperator,
     400, "invalid_type"},
    {"tenant create: unknown field", "POST", "/v1/tenants", R"({"name": "x", "plan": "gold"})",
     As::kOperator, 400, "unknown_field"},
    {"tenant create: missing name", "POST", "/v1/tenants", "{}", As::kOperator, 400,
     "missing_field"},
    {"tenant create: empty name", "POST", "/v1/tenants", R"({"name": ""})", As::kOperator, 400,
     "invalid_argument"},
    {"tenant create: taken name", "POST", "/v1/tenants", R"({"name": "alpha"})", As::kOperator, 409,
     "already_exists"},
    {"tenant create: by a tenant admin", "POST", "/v1/tenants", R"({"name": "x"})", As::kAdmin, 403,
     "forbidden"},
    {"tenant list: bad limit", "GET", "/v1/tenants?limit=0", "", As::kOperator, 400,
     "invalid_argument"},
    {"tenant list: unknown parameter", "GET", "/v1/tenants?colour=red", "", As::kOperator, 400,
     "unknown_field"},
    {"tenant get: bad id", "GET", "/v1/tenants/acme", "", As::kOperator, 400, "invalid_id"},
    {"tenant get: no such tenant", "GET", "/v1/tenants/ten_ffffffffffffffff", "", As::kOperator,
     404, "not_found"},
    {"tenant get: another tenant", "GET", "/v1/tenants/B_TENANT", "", As::kAdmin, 404, "not_found"},
    {"project create: malformed JSON", "POST", "/v1/projects", "{\"name\":", As::kAdmin, 400,
     "malformed_json"},
    {"project create: tenant of wrong type", "POST", "/v1/projects",
     R"({"name": "p", "tenant_id": 7})", As::kAdmin, 400, "invalid_type"},
    {"project create: unknown field", "POST", "/v1/projects", R"({"name": "p", "gpus": 8})",
     As::kAdmin, 400, "unknown_field"},
    {"project create: missing name", "POST", "/v1/projects", R"({"tenant_id": "A_TENANT"})",
     As::kAdmin, 400, "missing_field"},
    {"project create: bad tenant id", "POST", "/v1/projects",
     R"({"name": "p", "tenant_id": "alpha"})", As::kAdmin, 400, "invalid_id"},
    {"project create: in another tenant", "POST", "/v1/projects",
     R"({"name": "p", "tenant_id": "B_TENANT"})", As::kAdmin, 404, "not_found"},
    {"project create: by a member", "POST", "/v1/projects", R"({"name": "p"})", As::kMember, 403,
     "forbidden"},
    {"project create: name with a control character", "POST", "/v1/projects",
     R"({"name": "a\u0001b"})", As::kAdmin, 400, "invalid_argument"},
    {"project list: bad tenant filter", "GET", "/v1/projects?tenant_id=x", "", As::kAdmin, 400,
     "invalid_id"},
    {"project list: another tenant's", "GET", "/v1/projects?tenant_id=B_TENANT", "", As::kAdmin,
     404, "not_found"},
    {"project get: bad id", "GET", "/v1/projects/train", "", As::kAdmin, 400, "invalid_id"},
    {"project get: another tenant's", "GET", "/v1/projects/B_PROJECT", "", As::kAdmin, 404,
     "not_found"},
    {"project delete: bad id", "DELETE", "/v1/projects/prj_XYZ", "", As::kAdmin, 400, "invalid_id"},
    {"project delete: another tenant's", "DELETE", "/v1/projects/B_PROJECT", "", As::kAdmin, 404,
     "not_found"},
    {"project delete: by a member", "DELETE", "/v1/projects/A_PROJECT", "", As::kMember, 403,
     "forbidden"},
    {"user create: malformed JSON", "POST", "/v1/users", "nope", As::kAdmin, 400, "malformed_json"},
    {"user create: missing e-mail", "POST", "/v1/users", R"({"name": "Z"})", As::kAdmin, 400,
     "missing_field"},
    {"user create: bad e-mail", "POST", "/v1/users", R"({"name": "Z", "email": "z at x"})",
     As::kAdmin, 400, "invalid_argument"},
    {"user create: unknown role", "POST", "/v1/users",
     R"({"name": "Z", "email": "z@x", "role": "king"})", As::kAdmin, 400, "invalid_argument"},
    {"user create: role of wrong type", "POST", "/v1/users",
     R"({"name": "Z", "email": "z@x", "role": 1})", As::kAdmin, 400, "invalid_type"},
    {"user create: operator admin by a tenant admin", "POST", "/v1/users",
     R"({"name": "Z", "email": "z@x", "role": "operator-admin"})", As::kAdmin, 403, "forbidden"},
    {"user create: operator admin in a customer tenant", "POST", "/v1/users",
     R"({"name": "Z", "email": "z@x", "role": "operator-admin", "tenant_id": "A_TENANT"})",
     As::kOperator, 400, "invalid_argument"},
    {"user create: unknown field", "POST", "/v1/users",
     R"({"name": "Z", "email": "z@x", "password": "x"})", As::kAdmin, 400, "unknown_field"},
    {"user create: taken e-mail", "POST", "/v1/users", R"({"name": "Z", "email": "m@alpha"})",
     As::kAdmin, 409, "already_exists"},
    {"user create: by a member", "POST", "/v1/users", R"({"name": "Z", "email": "z@x"})",
     As::kMember, 403, "forbidden"},
    {"user list: another tenant's", "GET", "/v1/users?tenant_id=B_TENANT", "", As::kMember, 404,
     "not_found"},
    {"user get: bad id", "GET", "/v1/users/usr_1", "", As::kAdmin, 400, "invalid_id"},
    {"user get: another tenant's", "GET", "/v1/users/B_MEMBER", "", As::kAdmin, 404, "not_found"},
    {"user update: disabled of wrong type", "PATCH", "/v1/users/A_MEMBER", R"({"disabled": "yes"})",
     As::kAdmin, 400, "invalid_type"},
    {"user update: unknown role", "PATCH", "/v1/users/A_MEMBER", R"({"role": "king"})", As::kAdmin,
     400, "invalid_argument"},
    {"user update: unknown field", "PATCH", "/v1/users/A_MEMBER", R"({"email": "new@x"})",
     As::kAdmin, 400, "unknown_field"},
    {"user update: another tenant's", "PATCH", "/v1/users/B_MEMBER", R"({"disabled": true})",
     As::kAdmin, 404, "not_found"},
    {"user update: by a member", "PATCH", "/v1/users/A_ADMIN", R"({"disabled": true})", As::kMember,
     403, "forbidden"},
    {"user update: malformed JSON", "PATCH", "/v1/users/A_MEMBER", "{,}", As::kAdmin, 400,
     "malformed_json"},
    {"key create: missing name", "POST", "/v1/keys", "{}", As::kMember, 400, "missing_field"},
    {"key create: bad user id", "POST", "/v1/keys", R"({"name": "k", "user_id": "me"})",
     As::kMember, 400, "invalid_id"},
    {"key create: for another tenant's user", "POST", "/v1/keys",
     R"({"name": "k", "user_id": "B_MEMBER"})", As::kAdmin, 404, "not_found"},
    {"key create: a member for its admin", "POST", "/v1/keys",
     R"({"name": "k", "user_id": "A_ADMIN"})", As::kMember, 403, "forbidden"},
    {"key create: unknown field", "POST", "/v1/keys", R"({"name": "k", "scope": "all"})",
     As::kMember, 400, "unknown_field"},
    {"key create: malformed JSON", "POST", "/v1/keys", "{\"name\" \"k\"}", As::kMember, 400,
     "malformed_json"},
    {"key list: unknown parameter", "GET", "/v1/keys?tenant=x", "", As::kMember, 400,
     "unknown_field"},
    {"key get: bad id", "GET", "/v1/keys/key", "", As::kMember, 400, "invalid_id"},
    {"key get: no such key", "GET", "/v1/keys/key_ffffffffffffffff", "", As::kMember, 404,
     "not_found"},
    {"key revoke: bad id", "DELETE", "/v1/keys/12", "", As::kMember, 400, "invalid_id"},
    {"key revoke: another tenant's", "DELETE", "/v1/keys/B_KEY", "", As::kAdmin, 404, "not_found"},
    {"audit: by a member", "GET", "/v1/audit", "", As::kMember, 403, "forbidden"},
    {"audit: bad cursor", "GET", "/v1/audit?after=yesterday", "", As::kAdmin, 400,
     "invalid_argument"},
    {"audit: another tenant's", "GET", "/v1/audit?tenant_id=B_TENANT", "", As::kAdmin, 404,
     "not_found"},
    {"audit: whole cloud by a tenant admin", "GET", "/v1/audit?tenant_id=", "", As::kAdmin, 400,
     "invalid_id"},
    {"no such endpoint", "GET", "/v1/nothing", "", As::kOperator, 404, "not_found"},
    {"method not allowed", "PUT", "/v1/tenants", "{}", As::kOperator, 405, "method_not_allowed"},
    {"bad escape in the URL", "GET", "/v1/tenants?after=%zz", "", As::kOperator, 400,
     "invalid_argument"},
};

class BadInputTest : public ApiTest {
 protected:
  std::string fill(std::string text) {
    std::string b_key_id =
        call("GET", "/v1/keys?user_id=" + b_.member_id, nullptr, b_.admin_key, 200)["items"][0]
            .value("id", "");
    const std::pair<const char*, std::string> names[] = {
        {"A_TENANT", a_.tenant_id},   {"B_TENANT", b_.tenant_id}, {"A_PROJECT", a_.project_id},
        {"B_PROJECT", b_.project_id}, {"A_MEMBER", a_.member_id}, {"B_MEMBER", b_.member_id},
        {"A_ADMIN", a_.admin_id},     {"B_KEY", b_key_id}};
    for (const auto& [name, value] : names) {
      text = std::regex_replace(text, std::regex(name), value);
    }
    return text;
  }

  std::string key_for(As as) {
    switch (as) {
      case As::kOperator:
        return op_key_;
      case As::kAdmin:
        return a_.admin_key;
      case As::kMember:
        return a_.member_key;
      case As::kNoKey:
        return "";
      case As::kWrongKey:
        return "allot_ffffffffffffffffffffffffffffffffffffffff";
    }
    return "";
  }

  void expect_refused(const std::string& label, const std::string& method,
                      const std::string& target, const std::string& body, As as, int status,
                      const std::string& code) {
    const std::string before = snapshot();
    const ClientResponse response = daemon_.request(method, target, body, key_for(as));
    EXPECT_EQ(response.status, status) << label << ": " << response.body;
    const json answer = json::parse(response.body, nullptr, false);
    ASSERT_TRUE(answer.is_object() && answer.contains("error")) << label << ": " << response.body;
    EXPECT_EQ(answer["error"].value("code", ""), code) << label;
    EXPECT_FALSE(answer["error"].value("message", "").empty()) << label;
    EXPECT_EQ(snapshot(), before) << label << " changed something";
  }
};

TEST_F(BadInputTest, EveryBadRequestGetsItsCodeAndChangesNothing) {
  for (const BadCase& c : kBadCases) {
    expect_refused(c.name, c.method, fill(c.target), fill(c.body), c.as, c.status, c.code);
  }
}

TEST_F(BadInputTest, EveryEndpointRefusesMissingAndWrongKeys) {
  for (const Route& route : identity_routes()) {
    const std::string target =
        fill(std::regex_replace(std::string(route.pattern), std::regex("\\{id\\}"), "A_PROJECT"));
    const std::string body = route.method == "GET" ? "" : R"({"name": "x"})";
    const std::string label = std::string(route.method) + " " + std::string(route.pattern);
    expect_refused(label + " without a key", std::string(route.method), target, body, As::kNoKey,
                   401, "unauthenticated");
    expect_refused(label + " with a wrong key", std::string(route.method), target, body,
                   As::kWrongKey, 401, "unauthenticated");
  }
}

TEST_F(BadInputTest, ABodyOverTheLimitIsRefused) {
  const std::string huge = R"({"name": ")" + std::string(2 << 20, 'x') + R"("})";
  expect_refused("huge body", "POST", "/v1/tenants", huge, As::kOperator, 413, "body_too_large");
}

TEST_F(BadInputTest, RevokedKeysAndDisabledUsersStopWorking) {
  json key = call("POST", "/v1/keys", {{"name", "temp"}}, a_.member_key, 201);
  const std::string secret = key.value("secret", "");
  call("GET", "/v1/whoami", nullptr, secret, 200);
  call("DELETE", "/v1/keys/" + key.value("id", ""), nullptr, a_.member_key, 200);
  call("GET", "/v1/whoami", nullptr, secret, 401);
  call("PATCH", "/v1/users/" + a_.member_id, {{"disabled", true}}, a_.admin_key, 200);
  call("GET", "/v1/whoami", nullptr, a_.member_key, 401);
  call("PATCH", "/v1/users/" + a_.member_id, {{"disabled", false}}, a_.admin_key, 200);
  call("GET", "/v1/whoami", nullptr, a_.member_key, 200);
}

TEST_F(BadInputTest, KeysAreShownOnceAndStoredOnlyAsHashes) {
  json key = call("POST", "/v1/keys", {{"name", "ci"}}, a_.member_key, 201);
  const std::string secret = key.value("secret", "");
  ASSERT_EQ(secret.size(), 46u);
  const json again = call("GET", "/v1/keys/" + key.value("id", ""), nullptr, a_.member_key, 200);
  EXPECT_FALSE(again.contains("secret"));
  EXPECT_EQ(again.dump().find(secret.substr(12)), std::string::npos);
}

TEST_F(BadInputTest, MutatingCallsAreAuditedWithTheirOutcome) {
  call("POST", "/v1/projects", {{"name", "audited"}}, a_.admin_key, 201);
  call("POST", "/v1/projects", {{"name", "audited"}}, a_.admin_key, 409);
  const json audit = call("GET", "/v1/audit?limit=1000", nullptr, a_.admin_key, 200);
  const json& items = audit["items"];
  ASSERT_GE(items.size(), 2u);
  const json& ok = items[items.size() - 2];
  const json& refused = items[items.size() - 1];
  EXPECT_EQ(ok["path"], "/v1/projects");
  EXPECT_EQ(ok["status"], 201);
  EXPECT_EQ(ok["user_id"], a_.admin_id);
  EXPECT_TRUE(ok["error_code"].is_null());
  EXPECT_EQ(refused["status"], 409);
  EXPECT_EQ(refused["error_code"], "already_exists");
  for (const json& entry : items) EXPECT_EQ(entry["tenant_id"], a_.tenant_id);
}

TEST_F(BadInputTest, ListsArePagedInIdOrder) {
  for (int i = 0; i < 5; ++i) {
    call("POST", "/v1/projects", {{"name", "p" + std::to_string(i)}}, a_.admin_key, 201);
  }
  std::vector<std::string> seen;
  std::string after;
  for (int pages = 0; pages < 10; ++pages) {
    const json page = call("GET", "/v1/projects?limit=2" + (after.empty() ? "" : "&after=" + after),
                           nullptr, a_.member_key, 200);
    for (const json& item : page["items"]) seen.push_back(item.value("id", ""));
    if (page["next_after"].is_null()) break;
    after = page["next_after"].get<std::string>();
  }
  EXPECT_EQ(seen.size(), 6u);  // The kit's project and five more.
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
}

TEST_F(BadInputTest, HealthAndVersionNeedNoKey) {
  EXPECT_EQ(daemon_.request("GET", "/healthz", "", "").status, 200);
  EXPECT_EQ(daemon_.request("GET", "/readyz", "", "").status, 200);
  const json version = json::parse(daemon_.request("GET", "/version", "", "").body);
  EXPECT_FALSE(version.value("version", "").empty());
  // They only answer GET: anything else is refused like on any other path.
  for (const char* path : {"/healthz", "/readyz", "/version", "/openapi.json"}) {
    const ClientResponse refused = daemon_.request("POST", path, "{}", "");
    EXPECT_EQ(refused.status, 405) << path;
    EXPECT_EQ(json::parse(refused.body)["error"].value("code", ""), "method_not_allowed") << path;
  }
}

}  // namespace
}  // namespace allot::testing
