#include "common/seal.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace allot {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + std::to_string(::getpid()))).string();
}

TEST(SealTest, OpensWhatItSealedForTheSameContextOnly) {
  const std::string path = temp_path("allot-seal-key-");
  std::filesystem::remove(path);
  auto sealer = Sealer::open_key_file(path);
  ASSERT_TRUE(sealer) << sealer.error().message;
  struct stat st{};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  auto sealed = sealer->seal("s3cret", "ten_a\nregistry.example");
  ASSERT_TRUE(sealed);
  EXPECT_EQ(sealed->find("s3cret"), std::string::npos);
  EXPECT_EQ(*sealer->open(*sealed, "ten_a\nregistry.example"), "s3cret");
  // Another tenant's row, another key, or one changed byte: it does not open.
  EXPECT_FALSE(sealer->open(*sealed, "ten_b\nregistry.example"));
  auto again = Sealer::open_key_file(path);  // The same key, read back.
  ASSERT_TRUE(again);
  EXPECT_EQ(*again->open(*sealed, "ten_a\nregistry.example"), "s3cret");
  std::string altered = *sealed;
  altered[20] = altered[20] == 'A' ? 'B' : 'A';
  EXPECT_FALSE(sealer->open(altered, "ten_a\nregistry.example"));
  const std::string other_path = path + "-other";
  auto other = Sealer::open_key_file(other_path);
  ASSERT_TRUE(other);
  EXPECT_FALSE(other->open(*sealed, "ten_a\nregistry.example"));

  ::chmod(path.c_str(), 0644);
  auto loose = Sealer::open_key_file(path);
  ASSERT_FALSE(loose);
  EXPECT_EQ(loose.error().code, ErrorCode::kInvalidArgument);
  std::filesystem::remove(path);
  std::filesystem::remove(other_path);
}

}  // namespace
}  // namespace allot
