#include "api/log_store.h"

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace allot {
namespace {

TEST(LogStore, AppendsByOffsetWritingEachByteOnce) {
  testing::TempDir dir;
  LogStore logs(dir.path());
  ASSERT_TRUE(logs.append("ins_1", 0, "hello "));
  ASSERT_TRUE(logs.append("ins_1", 0, "hello "));      // Sent twice: written once.
  ASSERT_TRUE(logs.append("ins_1", 3, "lo world\n"));  // Overlaps: only the new part.
  EXPECT_EQ(logs.append("ins_1", 100, "x").error().code, ErrorCode::kConflict);  // A gap.
  EXPECT_EQ(logs.read("ins_1", 0, 1000)->data, "hello world\n");
  EXPECT_EQ(logs.read("ins_1", 6, 3)->data, "wor");
  EXPECT_EQ(logs.size("ins_1"), 12);
  EXPECT_EQ(logs.read("ins_2", 0, 10)->data, "");
}

TEST(LogStore, TailsTheLastLines) {
  testing::TempDir dir;
  LogStore logs(dir.path());
  ASSERT_TRUE(logs.append("ins_1", 0, "one\ntwo\nthree\nfour"));
  auto tail = logs.tail("ins_1", 2, 1000);
  EXPECT_EQ(tail->data, "three\nfour");
  EXPECT_EQ(tail->offset, 8);
  EXPECT_EQ(logs.tail("ins_1", 10, 1000)->data, "one\ntwo\nthree\nfour");
}

TEST(LogStore, ARequeuedRunsOutputFollowsTheLastRunsAndCountsFromItsOwnStart) {
  testing::TempDir dir;
  {
    LogStore logs(dir.path());
    ASSERT_TRUE(logs.append_run("ins_1", 0, 0, "epoch 1\nepoch 2\n"));
    EXPECT_EQ(logs.run_size("ins_1", 0), 16);
    EXPECT_EQ(logs.run_size("ins_1", 1), 0);  // Not begun: its agent sends from 0.
    // The next run, on another node, starts its output at 0.
    ASSERT_TRUE(logs.append_run("ins_1", 1, 0, "resumed at 2\n"));
    ASSERT_TRUE(logs.append_run("ins_1", 1, 0, "resumed at 2\n"));  // Again: once.
    EXPECT_EQ(logs.run_size("ins_1", 1), 13);
    EXPECT_EQ(logs.run_size("ins_1", -1), 13);  // An agent that names no run: the current one.
    // The first run's late words are dropped, and its agent is told it has nothing more to send.
    ASSERT_TRUE(logs.append_run("ins_1", 0, 16, "late\n"));
    EXPECT_EQ(logs.run_size("ins_1", 0), INT64_MAX);
  }
  // Reopened (allotd restarted): the runs are where they were.
  LogStore logs(dir.path());
  ASSERT_TRUE(logs.append_run("ins_1", 1, 13, "epoch 3\n"));
  EXPECT_EQ(logs.read("ins_1", 0, 1000)->data, "epoch 1\nepoch 2\nresumed at 2\nepoch 3\n");
  EXPECT_EQ(logs.run_size("ins_1", 1), 21);
}

}  // namespace
}  // namespace allot
