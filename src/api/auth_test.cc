#include "api/auth.h"

#include <gtest/gtest.h>

#include "common/random.h"
#include "core/core.h"

namespace allot {
namespace {

const std::string kKey = "allot_0123456789abcdef0123456789abcdef01234567";

class AuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(core.apply(CreateTenant{"ten_0000000000000001", "acme"}, 1));
    ASSERT_TRUE(core.apply(
        CreateUser{"usr_0000000000000001", "ten_0000000000000001", "Ann", "a@x", Role::kMember},
        1));
    ASSERT_TRUE(core.apply(CreateKey{"key_0000000000000001", "usr_0000000000000001", "k",
                                     kKey.substr(0, 12), sha256_hex(kKey)},
                           1));
  }
  Core core;
};

TEST_F(AuthTest, ALiveKeyNamesItsUserTenantAndRole) {
  auto caller = authenticate(core.state(), "Bearer " + kKey);
  ASSERT_TRUE(caller);
  EXPECT_EQ(caller->user_id, "usr_0000000000000001");
  EXPECT_EQ(caller->tenant_id, "ten_0000000000000001");
  EXPECT_EQ(caller->role, Role::kMember);
}

TEST_F(AuthTest, MissingWrongRevokedOrDisabledKeysAreRefused) {
  for (const std::string& header : {std::string(""), "Basic " + kKey, "Bearer " + kKey + "0",
                                    std::string("Bearer short"), "bearer " + kKey}) {
    auto caller = authenticate(core.state(), header);
    ASSERT_FALSE(caller) << header;
    EXPECT_EQ(caller.error().code, ErrorCode::kUnauthenticated);
  }
  ASSERT_TRUE(core.apply(UpdateUser{.id = "usr_0000000000000001", .disabled = true}, 2));
  EXPECT_FALSE(authenticate(core.state(), "Bearer " + kKey));
  ASSERT_TRUE(core.apply(UpdateUser{.id = "usr_0000000000000001", .disabled = false}, 3));
  EXPECT_TRUE(authenticate(core.state(), "Bearer " + kKey));
  ASSERT_TRUE(core.apply(RevokeKey{"key_0000000000000001"}, 4));
  EXPECT_FALSE(authenticate(core.state(), "Bearer " + kKey));
}

TEST(Permissions, TenantAdminsActOnlyInTheirOwnTenant) {
  const Caller admin{.tenant_id = "ten_a", .role = Role::kTenantAdmin};
  const Caller member{.tenant_id = "ten_a", .role = Role::kMember};
  const Caller op{.tenant_id = "ten_op", .role = Role::kOperatorAdmin};
  EXPECT_TRUE(require_admin_of(admin, "ten_a"));
  EXPECT_EQ(require_admin_of(admin, "ten_b").error().code, ErrorCode::kNotFound);
  EXPECT_EQ(require_admin_of(member, "ten_a").error().code, ErrorCode::kForbidden);
  EXPECT_TRUE(require_admin_of(op, "ten_b"));
  EXPECT_EQ(require_operator_admin(admin).error().code, ErrorCode::kForbidden);
  EXPECT_TRUE(may_see_tenant(op, "anything"));
  EXPECT_FALSE(may_see_tenant(member, "ten_b"));
}

}  // namespace
}  // namespace allot
