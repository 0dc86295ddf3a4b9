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

  // A node of two H100s named `name` in `region` joins and is heard from, so that it takes work
  // as an agent's would; returns its id.
  std::string join_node(const std::string& name, const std::string& region) {
    using nlohmann::json;
    const ClientResponse token = daemon_.request("POST", "/v1/join-tokens",
                                                 json{{"name", name}}.dump(), daemon_.admin_key());
    EXPECT_EQ(token.status, 201) << token.body;
    json inventory = {{"name", name},
                      {"region", region},
                      {"cpu_milli", 64'000},
                      {"memory_mib", 262'144},
                      {"gpus", json::array()}};
    for (int i = 0; i < 2; ++i) {
      inventory["gpus"].push_back(
          {{"index", i}, {"uuid", name + "-" + std::to_string(i)}, {"model", "H100-80GB"}});
    }
    const ClientResponse joined = daemon_.request("POST", "/v1/agent/join", inventory.dump(),
                                                  json::parse(token.body).value("token", ""));
    EXPECT_EQ(joined.status, 201) << joined.body;
    const json node = json::parse(joined.body);
    const ClientResponse beat =
        daemon_.request("POST", "/v1/agent/heartbeat", json{{"node_id", node["node_id"]}}.dump(),
                        node.value("credential", ""));
    EXPECT_EQ(beat.status, 200) << beat.body;
    return node.value("node_id", "");
  }

  Daemon daemon_;
};

}  // namespace allot::testing
