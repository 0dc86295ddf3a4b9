#include "common/image_ref.h"

#include <gtest/gtest.h>

namespace allot {
namespace {

TEST(ImageRefTest, ReadsRegistryRepositoryTagAndDigest) {
  struct Case {
    std::string_view text;
    std::string_view registry;
    std::string_view repository;
    std::string_view tag;
    std::string_view full;
  };
  for (const Case& c : {
           Case{"busybox", "docker.io", "busybox", "latest", "docker.io/library/busybox:latest"},
           Case{"127.0.0.1:5000/team/trainer:v1.2", "127.0.0.1:5000", "team/trainer", "v1.2",
                "127.0.0.1:5000/team/trainer:v1.2"},
       }) {
    auto ref = parse_image_ref(c.text);
    ASSERT_TRUE(ref) << ref.error().message;
    EXPECT_EQ(ref->registry, c.registry) << c.text;
    EXPECT_EQ(ref->repository, c.repository) << c.text;
    EXPECT_EQ(ref->tag, c.tag) << c.text;
    EXPECT_EQ(ref->full(), c.full) << c.text;
  }

  auto local = parse_image_ref("localhost/allot-demo");
  ASSERT_TRUE(local);
  EXPECT_EQ(local->registry, "localhost");

  const std::string digest = "sha256:" + std::string(64, 'a');
  auto pinned = parse_image_ref("ghcr.io/org/app@" + digest);
  ASSERT_TRUE(pinned);
  EXPECT_EQ(pinned->digest, digest);
  EXPECT_EQ(pinned->tag, "");
}

TEST(ImageRefTest, RefusesMalformedReferences) {
  for (const char* bad : {"", "Busybox", "a//b", "-a", "a..b", "a:", "a:-x", "host:99999x/a",
                          "a@sha256:12", "a b", "a;rm -rf /", "--privileged", "a/b/", "/a"}) {
    auto ref = parse_image_ref(bad);
    ASSERT_FALSE(ref) << bad;
    EXPECT_EQ(ref.error().code, ErrorCode::kInvalidArgument) << bad;
  }
  EXPECT_FALSE(parse_image_ref(std::string(600, 'a')));
}

}  // namespace
}  // namespace allot
