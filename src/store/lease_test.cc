// The leader's lease and write fencing, on a real PostgreSQL database.
#include "store/lease.h"

#include <gtest/gtest.h>

#include "support/postgres.h"

namespace allot {
namespace {

constexpr int64_t kLeaseMs = 5'000;

class LeaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::postgres_available()) GTEST_SKIP() << "no PostgreSQL test server";
    auto url = testing::new_postgres_database();
    ASSERT_TRUE(url);
    url_ = *url;
    auto store = open_postgres_store(url_);  // Runs the migrations that make the lease.
    ASSERT_TRUE(store) << store.error().message;
    store_ = std::move(*store);
    auto db = open_postgres_db(url_);
    ASSERT_TRUE(db);
    db_ = std::move(*db);
  }

  std::unique_ptr<Lease> lease(const std::string& holder, const std::string& url) {
    auto opened = Lease::open(url_, holder, url, kLeaseMs);
    EXPECT_TRUE(opened);
    return opened ? std::move(*opened) : nullptr;
  }

  // A write fenced with `holder` at `epoch`.
  Status fenced_write(const std::string& holder, int64_t epoch) {
    store_->set_fence(Fence{.holder = holder, .epoch = epoch});
    Batch batch;
    batch.logs.push_back(
        LogPiece{.instance_id = "ins_1", .offset = next_offset_, .data = "written\n"});
    Status ok = store_->commit(batch);
    if (ok) next_offset_ += 8;
    return ok;
  }

  std::string url_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Db> db_;  // For the hand edits.
  int64_t next_offset_ = 0;
};

TEST_F(LeaseTest, OneReplicaTakesItAndOnlyItsWritesCommit) {
  auto a = lease("rep_a", "http://a:1");
  auto b = lease("rep_b", "http://b:1");
  const auto taken = a->try_acquire();
  ASSERT_TRUE(taken && *taken);
  EXPECT_EQ(**taken, 1);
  EXPECT_EQ(*b->try_acquire(), std::nullopt);  // Held: the other follows.
  const LeaseRow row = *b->read();
  EXPECT_TRUE(row.held());
  EXPECT_EQ(row.url, "http://a:1");
  EXPECT_TRUE(*a->renew(1));
  EXPECT_FALSE(*b->renew(1));  // Not its lease.

  EXPECT_TRUE(fenced_write("rep_a", 1));
  EXPECT_EQ(fenced_write("rep_b", 1).error().code, ErrorCode::kNotLeader);
  EXPECT_EQ(fenced_write("rep_a", 0).error().code, ErrorCode::kNotLeader);
  EXPECT_EQ(*store_->log_size("ins_1"), 8);  // Only the leader's write is there.

  // Given up, it is free at once, at the next epoch.
  ASSERT_TRUE(a->release(1));
  EXPECT_EQ(fenced_write("rep_a", 1).error().code, ErrorCode::kNotLeader);
  EXPECT_EQ(**b->try_acquire(), 2);
  EXPECT_TRUE(fenced_write("rep_b", 2));
}

TEST_F(LeaseTest, AnExpiredLeaseIsTakenAndItsOldHolderFenced) {
  auto a = lease("rep_a", "http://a:1");
  auto b = lease("rep_b", "http://b:1");
  ASSERT_EQ(**a->try_acquire(), 1);
  // As if a stopped past its lease: expired on the database's clock.
  ASSERT_TRUE(db_->exec("UPDATE leader_lease SET expires_ms = expires_ms - 60000"));
  EXPECT_EQ(fenced_write("rep_a", 1).error().code, ErrorCode::kNotLeader);
  EXPECT_EQ(**b->try_acquire(), 2);
  EXPECT_FALSE(*a->renew(1));  // It finds out, and steps down.
  EXPECT_EQ(fenced_write("rep_a", 1).error().code, ErrorCode::kNotLeader);
  EXPECT_TRUE(fenced_write("rep_b", 2));
}

TEST_F(LeaseTest, ALeaseRowEditedByHandCannotBlockOrFoolTheReplicas) {
  auto a = lease("rep_a", "http://a:1");
  auto b = lease("rep_b", "http://b:1");
  ASSERT_EQ(**a->try_acquire(), 1);
  // A holder that does not exist, for a day: no renewal could have set that, so it is taken.
  ASSERT_TRUE(
      db_->exec("UPDATE leader_lease SET holder = 'nobody', expires_ms = expires_ms + 86400000"));
  EXPECT_EQ(fenced_write("rep_a", 1).error().code, ErrorCode::kNotLeader);
  EXPECT_EQ(**b->try_acquire(), 2);
  // The epoch set back: the leader's fence no longer matches and it steps down.
  ASSERT_TRUE(db_->exec("UPDATE leader_lease SET epoch = 1"));
  EXPECT_EQ(fenced_write("rep_b", 2).error().code, ErrorCode::kNotLeader);
  EXPECT_FALSE(*b->renew(2));
  // The row deleted: it is put back free and taken; no old fence matches the new holder.
  ASSERT_TRUE(db_->exec("DELETE FROM leader_lease"));
  EXPECT_EQ(**a->try_acquire(), 1);
  EXPECT_EQ(fenced_write("rep_b", 1).error().code, ErrorCode::kNotLeader);
  EXPECT_TRUE(fenced_write("rep_a", 1));
}

TEST_F(LeaseTest, TwoLiveReplicasMayNotAdvertiseOneUrl) {
  auto a = lease("rep_a", "http://a:1");
  auto twin = lease("rep_twin", "http://a:1");
  ASSERT_TRUE(a->announce());
  auto refused = twin->announce();
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kAlreadyExists);
  EXPECT_NE(refused.error().message.find("--advertise-url"), std::string::npos);
  ASSERT_TRUE(a->announce());  // Itself again is fine.
  ASSERT_EQ(a->replicas()->size(), 1u);
  EXPECT_EQ(a->replicas()->front().holder, "rep_a");
  EXPECT_LT(a->replicas()->front().age_ms, 5'000);
  // One that has been gone longer than a lease may be replaced.
  ASSERT_TRUE(db_->exec("UPDATE replicas SET seen_ms = seen_ms - 60000"));
  EXPECT_GE(a->replicas()->front().age_ms, 60'000);
  EXPECT_TRUE(twin->announce());
  EXPECT_EQ(a->replicas()->front().holder, "rep_twin");
}

TEST_F(LeaseTest, SharedSettingsKeepTheirFirstValue) {
  auto a = lease("rep_a", "http://a:1");
  EXPECT_EQ(*a->shared_setting("cluster_id", "cls_1"), "cls_1");
  EXPECT_EQ(*a->shared_setting("cluster_id", "cls_2"), "cls_1");
}

}  // namespace
}  // namespace allot
