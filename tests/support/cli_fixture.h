// A running allotd and the allot CLI run against it with the operator admin's key, for tests of
// the operator's commands.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/daemon.h"

namespace allot::testing {

class OperatorCliTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(daemon_.start()); }

  RunResult allot(const std::vector<std::string>& args) {
    return run_program(
        bin_dir() + "/src/cli/allot", args,
        {"ALLOT_SERVER=" + daemon_.url(), "ALLOT_KEY=" + daemon_.admin_key(), "HOME=/nonexistent"});
  }

  // Runs with -o json, expects success and parses what it printed.
  nlohmann::json allot_json(std::vector<std::string> args) {
    args.insert(args.begin(), {"-o", "json"});
    const RunResult result = allot(args);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return nlohmann::json::parse(result.out, nullptr, false);
  }

  Daemon daemon_;
};

}  // namespace allot::testing
