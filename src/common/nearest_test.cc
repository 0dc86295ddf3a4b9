#include "common/nearest.h"

#include <gtest/gtest.h>

namespace allot {
namespace {

TEST(Nearest, CountsEditsIgnoringCase) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("--gpu", "--gpus"), 1u);
  EXPECT_EQ(edit_distance("h100", "H100"), 0u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(Nearest, SuggestsTheClosestNameOrNothing) {
  const std::vector<std::string> flags = {"--gpus", "--gpu-type", "--milli", "--project"};
  EXPECT_EQ(nearest("--gpu", flags), "--gpus");
  EXPECT_EQ(nearest("--projet", flags), "--project");
  EXPECT_EQ(nearest("--gpu-t", flags), "--gpu-type");  // A prefix of a longer name.
  EXPECT_EQ(nearest("--frobnicate", flags), "");
  EXPECT_EQ(nearest("H10", {"A100", "H100", "H200"}), "H100");
  EXPECT_EQ(nearest("anything", {}), "");
}

}  // namespace
}  // namespace allot
