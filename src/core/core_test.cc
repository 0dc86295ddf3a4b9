#include "core/core.h"

#include <gtest/gtest.h>

namespace allot {
namespace {

constexpr TimeMs kNow = 1'800'000'000'000;
const std::string kHash(64, 'a');

class CoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(core.apply(CreateTenant{"ten_0000000000000001", "operator", true}, kNow));
    ASSERT_TRUE(core.apply(CreateTenant{"ten_0000000000000002", "acme"}, kNow));
    ASSERT_TRUE(core.apply(CreateUser{"usr_0000000000000001", "ten_0000000000000001", "root",
                                      "root@op", Role::kOperatorAdmin},
                           kNow));
  }

  ErrorCode rejection(const Command& command) {
    const State before = core.state();
    auto rows = core.apply(command, kNow + 1);
    EXPECT_FALSE(rows);
    EXPECT_EQ(core.state().tenants, before.tenants);
    EXPECT_EQ(core.state().projects, before.projects);
    EXPECT_EQ(core.state().users, before.users);
    EXPECT_EQ(core.state().keys, before.keys);
    return rows ? ErrorCode::kInternal : rows.error().code;
  }

  Core core;
};

TEST_F(CoreTest, CreatingAnObjectReturnsItAsTheRowToWrite) {
  auto rows =
      core.apply(CreateProject{"prj_0000000000000001", "ten_0000000000000002", "train"}, kNow + 5);
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->size(), 1u);
  const auto& project = std::get<Project>(rows->front());
  EXPECT_EQ(project.name, "train");
  EXPECT_EQ(project.created_at_ms, kNow + 5);
  EXPECT_EQ(*core.state().project("prj_0000000000000001"), project);
}

TEST_F(CoreTest, RejectionsLeaveTheStateAsItWas) {
  EXPECT_EQ(rejection(CreateTenant{"ten_0000000000000003", "acme"}), ErrorCode::kAlreadyExists);
  EXPECT_EQ(rejection(CreateTenant{"ten_0000000000000003", "op2", true}),
            ErrorCode::kAlreadyExists);
  EXPECT_EQ(rejection(CreateTenant{"tenant-3", "x"}), ErrorCode::kInvalidId);
  EXPECT_EQ(rejection(CreateTenant{"ten_0000000000000003", ""}), ErrorCode::kInvalidArgument);
  EXPECT_EQ(rejection(CreateTenant{"ten_0000000000000003", " padded"}),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(rejection(CreateTenant{"ten_0000000000000003", std::string(129, 'x')}),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(rejection(CreateProject{"prj_0000000000000001", "ten_00000000000000ff", "p"}),
            ErrorCode::kNotFound);
  EXPECT_EQ(rejection(CreateUser{"usr_0000000000000002", "ten_0000000000000002", "Ann",
                                 "not-an-email", Role::kMember}),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(rejection(CreateKey{"key_0000000000000001", "usr_00000000000000ff", "k", "p", kHash}),
            ErrorCode::kNotFound);
  EXPECT_EQ(rejection(RevokeKey{"key_00000000000000ff"}), ErrorCode::kNotFound);
  EXPECT_EQ(rejection(DeleteProject{"prj_00000000000000ff"}), ErrorCode::kNotFound);
}

TEST_F(CoreTest, OnlyTheOperatorTenantHoldsOperatorAdmins) {
  EXPECT_EQ(rejection(CreateUser{"usr_0000000000000002", "ten_0000000000000002", "Ann", "ann@acme",
                                 Role::kOperatorAdmin}),
            ErrorCode::kInvalidArgument);
  ASSERT_TRUE(core.apply(
      CreateUser{"usr_0000000000000002", "ten_0000000000000002", "Ann", "ann@acme", Role::kMember},
      kNow));
  EXPECT_EQ(rejection(UpdateUser{.id = "usr_0000000000000002", .role = Role::kOperatorAdmin}),
            ErrorCode::kInvalidArgument);
}

TEST_F(CoreTest, TheLastOperatorAdminCannotBeDisabledOrDemoted) {
  EXPECT_EQ(rejection(UpdateUser{.id = "usr_0000000000000001", .disabled = true}),
            ErrorCode::kConflict);
  EXPECT_EQ(rejection(UpdateUser{.id = "usr_0000000000000001", .role = Role::kViewer}),
            ErrorCode::kConflict);
  ASSERT_TRUE(core.apply(CreateUser{"usr_0000000000000002", "ten_0000000000000001", "second",
                                    "second@op", Role::kOperatorAdmin},
                         kNow));
  EXPECT_TRUE(core.apply(UpdateUser{.id = "usr_0000000000000001", .disabled = true}, kNow));
}

TEST_F(CoreTest, ProjectNamesAreUniqueAmongLiveProjectsOfATenant) {
  ASSERT_TRUE(core.apply(CreateProject{"prj_0000000000000001", "ten_0000000000000002", "a"}, kNow));
  EXPECT_EQ(rejection(CreateProject{"prj_0000000000000002", "ten_0000000000000002", "a"}),
            ErrorCode::kAlreadyExists);
  EXPECT_TRUE(core.apply(CreateProject{"prj_0000000000000002", "ten_0000000000000001", "a"}, kNow));
  ASSERT_TRUE(core.apply(DeleteProject{"prj_0000000000000001"}, kNow + 9));
  EXPECT_EQ(core.state().project("prj_0000000000000001")->deleted_at_ms, kNow + 9);
  EXPECT_EQ(rejection(DeleteProject{"prj_0000000000000001"}), ErrorCode::kNotFound);
  EXPECT_TRUE(core.apply(CreateProject{"prj_0000000000000003", "ten_0000000000000002", "a"}, kNow));
}

TEST_F(CoreTest, KeysAreFoundByHashUntilRevoked) {
  ASSERT_TRUE(core.apply(
      CreateKey{"key_0000000000000001", "usr_0000000000000001", "laptop", "allot_abc", kHash},
      kNow));
  const ApiKey* key = core.state().key_for_hash(kHash);
  ASSERT_NE(key, nullptr);
  EXPECT_EQ(key->tenant_id, "ten_0000000000000001");
  EXPECT_EQ(
      rejection(CreateKey{"key_0000000000000002", "usr_0000000000000001", "again", "x", kHash}),
      ErrorCode::kAlreadyExists);
  ASSERT_TRUE(core.apply(RevokeKey{"key_0000000000000001"}, kNow + 3));
  EXPECT_EQ(core.state().key_for_hash(kHash)->revoked_at_ms, kNow + 3);
  auto again = core.apply(RevokeKey{"key_0000000000000001"}, kNow + 4);
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->empty());
  EXPECT_EQ(core.state().key_for_hash(kHash)->revoked_at_ms, kNow + 3);
}

TEST_F(CoreTest, RestoringWrittenRowsRebuildsTheSameState) {
  std::vector<Row> written;
  auto keep = [&](Result<std::vector<Row>> rows) {
    ASSERT_TRUE(rows);
    written.insert(written.end(), rows->begin(), rows->end());
  };
  Core fresh;
  keep(fresh.apply(CreateTenant{"ten_0000000000000001", "operator", true}, kNow));
  keep(fresh.apply(CreateUser{"usr_0000000000000001", "ten_0000000000000001", "root", "r@op",
                              Role::kOperatorAdmin},
                   kNow));
  keep(fresh.apply(CreateKey{"key_0000000000000001", "usr_0000000000000001", "k", "p", kHash},
                   kNow));
  keep(fresh.apply(RevokeKey{"key_0000000000000001"}, kNow + 1));
  Core restored;
  restored.restore(written);
  EXPECT_EQ(restored.state().keys, fresh.state().keys);
  EXPECT_EQ(restored.state().users, fresh.state().users);
  EXPECT_EQ(restored.state().key_for_hash(kHash)->revoked_at_ms, kNow + 1);
}

}  // namespace
}  // namespace allot
