#include "api/wire/wire.h"

#include <string>

#include <gtest/gtest.h>

#include "api/wire/cluster.h"
#include "api/wire/identity.h"

namespace allot {
namespace {

Node node_with_secrets() {
  Node node{.id = "nod_0000000000000001",
            .name = "gpu-1",
            .region = "eu",
            .backend = "simulated",
            .agent_version = "1",
            .credential_hash = std::string(64, 'c'),
            .joined_at_ms = 1'000,
            .last_heartbeat_ms = 2'000};
  node.images.push_back(NodeImage{.id = "sha256:aa", .names = {"busybox"}, .size_bytes = 1});
  node.images_at_ms = 2'000;
  return node;
}

TEST(Wire, ANodeShowsItsStateButNeverItsCredentialOrImages) {
  const nlohmann::json shown = to_json(node_with_secrets());
  EXPECT_EQ(shown.at("name"), "gpu-1");
  EXPECT_EQ(shown.at("state"), "ready");
  EXPECT_FALSE(shown.contains("credential_hash"));
  EXPECT_FALSE(shown.contains("images"));
  EXPECT_FALSE(shown.contains("image_store"));
  EXPECT_EQ(shown.dump().find(std::string(64, 'c')), std::string::npos);
}

TEST(Wire, AKeyNeverShowsItsHash) {
  const ApiKey key{.id = "key_1",
                   .user_id = "usr_1",
                   .tenant_id = "ten_1",
                   .name = "ci",
                   .prefix = "ak_1234",
                   .token_hash = std::string(64, 'h')};
  const nlohmann::json shown = to_json(key);
  EXPECT_EQ(shown.at("prefix"), "ak_1234");
  EXPECT_EQ(shown.dump().find(std::string(64, 'h')), std::string::npos);
}

TEST(Wire, PickKeepsOnlyTheNamedFieldsAndRefusesAMissingOne) {
  const nlohmann::json document = {{"id", "x"}, {"secret", "s"}, {"n", 1}};
  EXPECT_EQ(pick(document, {"id", "n"}), (nlohmann::json{{"id", "x"}, {"n", 1}}));
  EXPECT_THROW((void)pick(document, {"absent"}), nlohmann::json::exception);
}

TEST(Wire, TimesAreTextOrNullForNever) {
  EXPECT_TRUE(time_or_null(0).is_null());
  EXPECT_EQ(time_or_null(1'000), format_time(1'000));
}

}  // namespace
}  // namespace allot
