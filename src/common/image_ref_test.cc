#include "common/image_ref.h"

#include <gtest/gtest.h>

namespace allot {
namespace {

TEST(ImageRefTest, ReadsRegistryRepositoryTagAndDigest) {
  auto plain = parse_image_ref("busybox");
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_EQ(plain->registry, "docker.io");
  EXPECT_EQ(plain->repository, "busybox");
  EXPECT_EQ(plain->tag, "latest");
  EXPECT_EQ(plain->full(), "docker.io/library/busybox:latest");

  auto full = parse_image_ref("127.0.0.1:5000/team/trainer:v1.2");
  ASSERT_TRUE(full) << full.error().message;
  EXPECT_EQ(full->registry, "127.0.0.1:5000");
  EXPECT_EQ(full->repository, "team/trainer");
  EXPECT_EQ(full->tag, "v1.2");
  EXPECT_EQ(full->full(), "127.0.0.1:5000/team/trainer:v1.2");

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
