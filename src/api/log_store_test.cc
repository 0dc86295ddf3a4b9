#include "api/log_store.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "common/limits.h"
#include "support/temp_dir.h"

namespace allot {
namespace {

class LogStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = open_sqlite_store((dir_.path() / "allot.db").string());
    ASSERT_TRUE(opened) << opened.error().message;
    store_ = std::move(*opened);
    logs_ = std::make_unique<LogStore>(*store_);
  }

  // Accepts a chunk as a heartbeat would and commits what it adds.
  Status ship(const std::string& id, int64_t offset, std::string_view data,
              bool after_drop = false) {
    auto piece = logs_->accept(id, offset, data, after_drop);
    if (!piece) return std::unexpected(piece.error());
    Batch batch;
    if (*piece) batch.logs.push_back(std::move(**piece));
    auto ok = store_->commit(batch);
    if (ok) logs_->committed();
    return ok;
  }

  testing::TempDir dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<LogStore> logs_;
};

TEST_F(LogStoreTest, AppendsByOffsetWritingEachByteOnce) {
  ASSERT_TRUE(ship("ins_1", 0, "hello "));
  ASSERT_TRUE(ship("ins_1", 0, "hello "));      // Sent twice: written once.
  ASSERT_TRUE(ship("ins_1", 3, "lo world\n"));  // Overlaps: only the new part.
  EXPECT_EQ(ship("ins_1", 100, "x").error().code, ErrorCode::kConflict);  // A gap.
  EXPECT_EQ(logs_->read("ins_1", 0, 1000)->data, "hello world\n");
  EXPECT_EQ(logs_->read("ins_1", 6, 3)->data, "wor");
  EXPECT_EQ(logs_->read("ins_1", 4, 4)->data, "o wo");  // Across the two pieces.
  EXPECT_EQ(*logs_->size("ins_1"), 12);
  EXPECT_EQ(logs_->read("ins_2", 0, 10)->data, "");
}

TEST_F(LogStoreTest, WhatAnAgentDroppedIsAHoleThatReadsSkipAndName) {
  ASSERT_TRUE(ship("ins_1", 0, "early\n"));
  EXPECT_EQ(ship("ins_1", 1'000, "late\n").error().code, ErrorCode::kConflict);
  ASSERT_TRUE(ship("ins_1", 1'000, "late\n", /*after_drop=*/true));
  EXPECT_EQ(*logs_->size("ins_1"), 1'005);
  const LogChunk first = *logs_->read("ins_1", 0, 100);
  EXPECT_EQ(first.data, "early\n");
  EXPECT_EQ(first.dropped, 0);
  const LogChunk next = *logs_->read("ins_1", 6, 100);
  EXPECT_EQ(next.offset, 1'000);
  EXPECT_EQ(next.data, "late\n");
  EXPECT_EQ(next.dropped, 994);
  EXPECT_EQ(logs_->read("ins_1", 1'005, 100)->data, "");  // The end: nothing, nothing dropped.
}

TEST_F(LogStoreTest, TheStoreKeepsAnInstancesNewestOutputOnly) {
  const std::string chunk(limits::kMaxLogChunkBytes, 'x');
  const auto chunks = static_cast<int64_t>(limits::kMaxStoredLogBytes / chunk.size()) + 8;
  for (int64_t i = 0; i < chunks; ++i) {
    ASSERT_TRUE(ship("ins_1", i * static_cast<int64_t>(chunk.size()), chunk));
  }
  const int64_t size = chunks * static_cast<int64_t>(chunk.size());
  EXPECT_EQ(*logs_->size("ins_1"), size);
  // The oldest are gone; a read from the start begins where what is kept does, and says so.
  const LogChunk from_start = *logs_->read("ins_1", 0, 10);
  EXPECT_EQ(from_start.dropped, from_start.offset);
  EXPECT_GE(from_start.offset, size - static_cast<int64_t>(limits::kMaxStoredLogBytes));
  EXPECT_EQ(from_start.data, "xxxxxxxxxx");
  EXPECT_EQ(logs_->read("ins_1", size - 3, 10)->data, "xxx");
}

TEST_F(LogStoreTest, KeepsBytesThatAreNotText) {
  const std::string bytes("a\0b\xff\n", 5);
  ASSERT_TRUE(ship("ins_1", 0, bytes));
  EXPECT_EQ(logs_->read("ins_1", 0, 100)->data, bytes);
}

TEST_F(LogStoreTest, AnotherReaderOfTheSameStoreSeesWhatWasCommitted) {
  ASSERT_TRUE(ship("ins_1", 0, "first\n"));
  // A new leader starts with nothing in memory: sizes and data come from the store.
  LogStore fresh(*store_);
  EXPECT_EQ(*fresh.size("ins_1"), 6);
  EXPECT_EQ(fresh.read("ins_1", 0, 100)->data, "first\n");
}

TEST_F(LogStoreTest, ForgetsSizesThatACommitNeverWrote) {
  ASSERT_TRUE(ship("ins_1", 0, "kept\n"));
  auto lost = logs_->accept("ins_1", 5, "lost\n");  // Accepted, but its batch never commits.
  ASSERT_TRUE(lost && *lost);
  EXPECT_EQ(*logs_->size("ins_1"), 10);
  logs_->forget();
  EXPECT_EQ(*logs_->size("ins_1"), 5);  // So the node's resend is taken, not skipped.
  ASSERT_TRUE(ship("ins_1", 5, "again\n"));
  EXPECT_EQ(logs_->read("ins_1", 0, 100)->data, "kept\nagain\n");
}

TEST_F(LogStoreTest, AReadInTheBatchOfAPieceSeesItAndNotAfterAFailedCommit) {
  ASSERT_TRUE(ship("ins_1", 0, "hi\n"));
  // The last output and the instance's end come in one heartbeat; a read of the logs in the
  // same batch, answered only once it commits, must show that output with the end.
  auto piece = logs_->accept("ins_1", 3, "bye\n");
  ASSERT_TRUE(piece && *piece);
  EXPECT_EQ(logs_->read("ins_1", 3, 100)->data, "bye\n");
  EXPECT_EQ(logs_->read("ins_1", 0, 100)->data, "hi\nbye\n");
  EXPECT_EQ(logs_->tail("ins_1", 1, 100)->data, "bye\n");
  // The commit failed: nothing of it is shown, and the piece is accepted again.
  logs_->forget();
  EXPECT_EQ(logs_->read("ins_1", 0, 100)->data, "hi\n");
  ASSERT_TRUE(ship("ins_1", 3, "bye\n"));
  logs_->committed();
  EXPECT_EQ(logs_->read("ins_1", 0, 100)->data, "hi\nbye\n");
}

TEST_F(LogStoreTest, KeepsTheSizesOfAFewInstancesAndReadsTheOthersAgain) {
  LogStore few(*store_, 2);
  const auto ship_to = [&](const std::string& id, int64_t offset, std::string_view data) {
    auto piece = few.accept(id, offset, data);
    ASSERT_TRUE(piece && *piece);
    Batch batch;
    batch.logs.push_back(std::move(**piece));
    ASSERT_TRUE(store_->commit(batch));
    few.committed();
  };
  ship_to("ins_1", 0, "one\n");
  ship_to("ins_2", 0, "two\n");
  EXPECT_EQ(few.sizes_known(), 2u);
  ship_to("ins_3", 0, "three\n");
  EXPECT_EQ(few.sizes_known(), 0u);
  // Read again from the store: a chunk sent twice is still written once, and a gap refused.
  EXPECT_FALSE(*few.accept("ins_1", 0, "one\n"));
  EXPECT_EQ(few.accept("ins_2", 9, "x").error().code, ErrorCode::kConflict);
  ship_to("ins_3", 6, "more\n");
  EXPECT_EQ(few.read("ins_3", 0, 100)->data, "three\nmore\n");
  EXPECT_EQ(*few.size("ins_1"), 4);
}

TEST_F(LogStoreTest, TakesInTheLogFilesOfOlderVersionsOnce) {
  const auto dir = dir_.path() / "logs";
  std::filesystem::create_directories(dir);
  std::string big(200'000, 'x');  // Over three pieces.
  big += "\nend\n";
  std::ofstream(dir / "ins_1.log", std::ios::binary) << big;
  std::ofstream(dir / "ins_2.log", std::ios::binary) << "two\n";
  ASSERT_TRUE(ship("ins_2", 0, "kept\n"));  // Already in the store: left as it is.
  ASSERT_TRUE(import_log_files(*store_, dir));
  LogStore fresh(*store_);
  EXPECT_EQ(*fresh.size("ins_1"), static_cast<int64_t>(big.size()));
  EXPECT_EQ(fresh.read("ins_1", 0, static_cast<int64_t>(big.size()))->data, big);
  EXPECT_EQ(fresh.tail("ins_1", 1, 100)->data, "end\n");
  EXPECT_EQ(fresh.read("ins_2", 0, 100)->data, "kept\n");
  EXPECT_FALSE(std::filesystem::exists(dir));
  EXPECT_TRUE(std::filesystem::exists(dir_.path() / "logs.imported" / "ins_1.log"));
  ASSERT_TRUE(import_log_files(*store_, dir));  // Nothing left to take in.
}

TEST_F(LogStoreTest, TailsTheLastLines) {
  ASSERT_TRUE(ship("ins_1", 0, "one\ntwo\nthree\nfour"));
  auto tail = logs_->tail("ins_1", 2, 1000);
  EXPECT_EQ(tail->data, "three\nfour");
  EXPECT_EQ(tail->offset, 8);
  EXPECT_EQ(logs_->tail("ins_1", 10, 1000)->data, "one\ntwo\nthree\nfour");
}

}  // namespace
}  // namespace allot
