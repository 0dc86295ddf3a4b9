#include "common/environment.h"

#include <gtest/gtest.h>

namespace allot {
namespace {

using Env = std::map<std::string, std::string>;

TEST(EnvironmentTest, PlainNamesAndValuesPass) {
  EXPECT_TRUE(check_tenant_environment({}));
  EXPECT_TRUE(check_tenant_environment(Env{{"MODE", "batch"}, {"_x1", ""}, {"a", "= spaces ok"}}));
}

TEST(EnvironmentTest, ANameWithALineBreakIsRefusedSoItCannotStartAVariableOfItsOwn) {
  const Status ok = check_environment(Env{{"ZZ\nNVIDIA_VISIBLE_DEVICES", "all"}});
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(ok.error().message.find("ZZ\\x0aNVIDIA"), std::string::npos) << ok.error().message;
}

TEST(EnvironmentTest, NamesOutsideTheShellAlphabetAreRefused) {
  for (const char* name : {"", "1ABC", "A-B", "A=B", "A B", "Ä", "A.B"}) {
    EXPECT_FALSE(check_environment(Env{{name, "v"}})) << name;
  }
  EXPECT_FALSE(check_environment(Env{{std::string("A\0B", 3), "v"}}));
  EXPECT_FALSE(check_environment(Env{{std::string(257, 'A'), "v"}}));
}

TEST(EnvironmentTest, ValuesWithNulOrLineBreaksAreRefused) {
  EXPECT_FALSE(check_environment(Env{{"A", "x\ny"}}));
  EXPECT_FALSE(check_environment(Env{{"A", "x\ry"}}));
  EXPECT_FALSE(check_environment(Env{{"A", std::string("x\0y", 3)}}));
}

TEST(EnvironmentTest, AllotsOwnVariablesCannotBeGivenByATenant) {
  for (const char* name :
       {"ALLOT_INSTANCE_ID", "ALLOT_GANG_RANK", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"}) {
    EXPECT_TRUE(check_environment(Env{{name, "0"}})) << name;
    const Status ok = check_tenant_environment(Env{{name, "0"}});
    ASSERT_FALSE(ok) << name;
    EXPECT_NE(ok.error().message.find("set by Allot"), std::string::npos);
  }
}

TEST(EnvironmentTest, SizesAreBounded) {
  Env many;
  for (int i = 0; i < 257; ++i) many["V" + std::to_string(i)] = "x";
  EXPECT_EQ(check_environment(many).error().code, ErrorCode::kLimitExceeded);
  EXPECT_EQ(check_environment(Env{{"A", std::string(65 << 10, 'x')}}).error().code,
            ErrorCode::kLimitExceeded);
}

}  // namespace
}  // namespace allot
