// Tenant A can neither see nor change anything of tenant B, whatever its role.
#include "support/fixture.h"

namespace allot::testing {
namespace {

using nlohmann::json;

class IsolationTest : public ApiTest {
 protected:
  // The ids in a listing's items.
  std::vector<std::string> ids(const std::string& target, const std::string& key) {
    std::vector<std::string> out;
    const json page = call("GET", target, nullptr, key, 200);
    for (const json& item : page["items"]) {
      out.push_back(item.value("id", ""));
    }
    return out;
  }

  bool contains(const std::vector<std::string>& list, const std::string& id) {
    return std::find(list.begin(), list.end(), id) != list.end();
  }
};

TEST_F(IsolationTest, ListingsShowOnlyTheCallersTenant) {
  for (const std::string& key : {a_.admin_key, a_.member_key}) {
    EXPECT_EQ(ids("/v1/tenants", key), std::vector<std::string>{a_.tenant_id});
    const auto projects = ids("/v1/projects", key);
    EXPECT_TRUE(contains(projects, a_.project_id));
    EXPECT_FALSE(contains(projects, b_.project_id));
    const auto users = ids("/v1/users", key);
    EXPECT_TRUE(contains(users, a_.member_id));
    EXPECT_FALSE(contains(users, b_.member_id));
    EXPECT_FALSE(contains(users, b_.admin_id));
  }
  const json admin_keys = call("GET", "/v1/keys", nullptr, a_.admin_key, 200);
  EXPECT_EQ(admin_keys["items"].size(), 2u);
  for (const json& key : admin_keys["items"]) EXPECT_EQ(key["tenant_id"], a_.tenant_id);
  const json audit = call("GET", "/v1/audit", nullptr, a_.admin_key, 200);
  EXPECT_GE(audit["items"].size(), 3u);
  for (const json& entry : audit["items"]) EXPECT_EQ(entry["tenant_id"], a_.tenant_id);
  // A member sees only its own keys.
  const json member_keys = call("GET", "/v1/keys", nullptr, a_.member_key, 200);
  ASSERT_EQ(member_keys["items"].size(), 1u);
  EXPECT_EQ(member_keys["items"][0]["user_id"], a_.member_id);
}

TEST_F(IsolationTest, AnotherTenantsObjectsAreNotFoundAndUnchanged) {
  const std::string before = snapshot();
  const std::string b_key = ids("/v1/keys?user_id=" + b_.member_id, b_.admin_key).at(0);
  struct Attempt {
    const char* method;
    std::string target;
    json body;
  };
  const Attempt attempts[] = {
      {"GET", "/v1/tenants/" + b_.tenant_id, nullptr},
      {"GET", "/v1/projects/" + b_.project_id, nullptr},
      {"DELETE", "/v1/projects/" + b_.project_id, nullptr},
      {"POST", "/v1/projects", {{"name", "intruder"}, {"tenant_id", b_.tenant_id}}},
      {"GET", "/v1/users/" + b_.member_id, nullptr},
      {"PATCH", "/v1/users/" + b_.member_id, {{"disabled", true}}},
      {"PATCH", "/v1/users/" + b_.admin_id, {{"role", "viewer"}}},
      {"POST", "/v1/users", {{"name", "x"}, {"email", "x@x"}, {"tenant_id", b_.tenant_id}}},
      {"POST", "/v1/keys", {{"name", "steal"}, {"user_id", b_.admin_id}}},
      {"GET", "/v1/keys/" + b_key, nullptr},
      {"DELETE", "/v1/keys/" + b_key, nullptr},
      {"GET", "/v1/projects?tenant_id=" + b_.tenant_id, nullptr},
      {"GET", "/v1/users?tenant_id=" + b_.tenant_id, nullptr},
      {"GET", "/v1/audit?tenant_id=" + b_.tenant_id, nullptr},
  };
  for (const Attempt& attempt : attempts) {
    const json answer = call(attempt.method, attempt.target, attempt.body, a_.admin_key, 404);
    EXPECT_EQ(answer["error"].value("code", ""), "not_found") << attempt.target;
  }
  EXPECT_EQ(snapshot(), before);
  // B's keys still work.
  call("GET", "/v1/whoami", nullptr, b_.member_key, 200);
}

TEST_F(IsolationTest, TheOperatorSeesEveryTenant) {
  const auto tenants = ids("/v1/tenants", op_key_);
  EXPECT_TRUE(contains(tenants, a_.tenant_id));
  EXPECT_TRUE(contains(tenants, b_.tenant_id));
  call("GET", "/v1/projects/" + b_.project_id, nullptr, op_key_, 200);
  const auto projects = ids("/v1/projects?tenant_id=" + b_.tenant_id, op_key_);
  EXPECT_EQ(projects, std::vector<std::string>{b_.project_id});
}

}  // namespace
}  // namespace allot::testing
