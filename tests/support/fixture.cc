#include "support/fixture.h"

namespace allot::testing {

using nlohmann::json;

void ApiTest::SetUp() {
  ASSERT_TRUE(daemon_.start());
  op_key_ = daemon_.admin_key();
  ASSERT_FALSE(op_key_.empty()) << daemon_.output();
  a_ = make_tenant("alpha");
  b_ = make_tenant("beta");
}

json ApiTest::call(const std::string& method, const std::string& target, const json& body,
                   const std::string& key, int expected_status) {
  const ClientResponse response =
      daemon_.request(method, target, body.is_null() ? "" : body.dump(), key);
  EXPECT_EQ(response.status, expected_status) << method << " " << target << " -> " << response.body;
  return json::parse(response.body, nullptr, false);
}

TenantKit ApiTest::make_tenant(const std::string& name) {
  TenantKit kit;
  kit.tenant_id = call("POST", "/v1/tenants", {{"name", name}}, op_key_, 201).value("id", "");
  json admin = call("POST", "/v1/users",
                    {{"name", name + " admin"},
                     {"email", "admin@" + name},
                     {"role", "tenant-admin"},
                     {"tenant_id", kit.tenant_id}},
                    op_key_, 201);
  kit.admin_id = admin.value("id", "");
  kit.admin_key = call("POST", "/v1/keys", {{"name", "k"}, {"user_id", kit.admin_id}}, op_key_, 201)
                      .value("secret", "");
  json member = call("POST", "/v1/users", {{"name", name + " member"}, {"email", "m@" + name}},
                     kit.admin_key, 201);
  kit.member_id = member.value("id", "");
  kit.member_key =
      call("POST", "/v1/keys", {{"name", "k"}, {"user_id", kit.member_id}}, kit.admin_key, 201)
          .value("secret", "");
  kit.project_id =
      call("POST", "/v1/projects", {{"name", name + "-train"}}, kit.admin_key, 201).value("id", "");
  return kit;
}

std::string ApiTest::snapshot() {
  std::string out;
  for (const char* path :
       {"/v1/tenants?limit=1000", "/v1/projects?include_deleted&limit=1000", "/v1/users?limit=1000",
        "/v1/keys?limit=1000", "/v1/quotas?include_ended=true&limit=1000",
        "/v1/reservations?include_ended=true&limit=1000", "/v1/instances?limit=1000",
        "/v1/volumes?limit=1000"}) {
    out += daemon_.request("GET", path, "", op_key_).body;
  }
  return out;
}

}  // namespace allot::testing
