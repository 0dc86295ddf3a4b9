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

}  // namespace
}  // namespace allot
