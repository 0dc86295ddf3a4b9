// The CLI as a person reads it: what `allot run` and `allot ps` print, mistakes on the command line
// named with the nearest right word, the newest entries of a log, and records printed as tables.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/cli_fixture.h"

namespace allot::testing {
namespace {

using nlohmann::json;

class InstanceCliTest : public OperatorCliTest {
 protected:
  // The tenant "acme" with a project "vision", and a node "gpu-1" in region eu with free prices
  // to run its work; returns the project's id.
  std::string acme_project_and_node() {
    const std::string tenant = allot_json({"tenants", "create", "acme"}).value("id", "");
    std::string project =
        allot_json({"projects", "create", "vision", "--tenant", tenant}).value("id", "");
    join_node("gpu-1", "eu");
    daemon_.set_free_prices("eu");
    return project;
  }

  RunResult allot_without_key(const std::vector<std::string>& args) {
    return run_program(bin_dir() + "/src/cli/allot", args,
                       {"ALLOT_SERVER=" + daemon_.url(), "ALLOT_KEY=", "HOME=/nonexistent"});
  }
};

// The lines of `text`, without their ends.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  for (size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos;
       start = end + 1) {
    lines.push_back(text.substr(start, end - start));
  }
  return lines;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_F(InstanceCliTest, MistakesOnTheCommandLineNameTheNearestRightWord) {
  struct Case {
    std::vector<std::string> args;
    const char* says;
  };
  const Case cases[] = {
      {{"run", "--gpu", "2", "--", "true"},
       "error: unknown flag --gpu for 'allot run'; did you mean --gpus?"},
      {{"run", "--gpu-typ=H100", "--", "true"},
       "error: unknown flag --gpu-typ for 'allot run'; did you mean --gpu-type?"},
      {{"tenants", "lst"}, "error: unknown command 'lst' for 'allot tenants'; did you mean list?"},
      {{"tenant", "list"}, "error: unknown command 'tenant' for 'allot'; did you mean tenants?"},
      {{"frobnicate"}, "error: unknown command 'frobnicate' for 'allot' (it has: whoami, "},
      {{"ps", "--frobnicate"}, "error: unknown flag --frobnicate for 'allot ps'\n"},
      {{"tenants"}, "error: 'allot tenants' needs a command: list, get, create, set"},
      {{"run", "--max-run", "10 minutes", "--", "echo", "hi"},
       "--max-run: takes a duration such as 90s, 10m, 2h or 1d, not '10 minutes'"},
  };
  for (const Case& c : cases) {
    const RunResult result = allot(c.args);
    EXPECT_EQ(result.exit_code, 2) << c.says;
    EXPECT_TRUE(has(result.err, c.says)) << result.err;
    EXPECT_EQ(result.out, "") << c.says;
  }
  EXPECT_TRUE(allot({"--help"}).out.starts_with("allot: the Allot command-line client"));
  EXPECT_EQ(allot({"--help"}).exit_code, 0);
}

TEST_F(InstanceCliTest, AMissingKeySaysWhereAKeyComesFrom) {
  const RunResult result = allot_without_key({"whoami"});
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_TRUE(has(result.err, "error: no API key: set ALLOT_KEY or pass --key")) << result.err;
}

TEST_F(InstanceCliTest, RunSaysWhatItLaunchedAndWhereItRuns) {
  const std::string project = acme_project_and_node();
  // The operator's own tenant has no project: it is told how to name one.
  const RunResult no_project = allot({"run", "--gpus", "1", "--", "true"});
  EXPECT_EQ(no_project.exit_code, 5);
  EXPECT_TRUE(has(no_project.err, "'project_id' is required")) << no_project.err;
  EXPECT_TRUE(has(no_project.err, "pass --project")) << no_project.err;

  const RunResult placed =
      allot({"run", "--gpus", "1", "--gpu-type", "h100", "--project", project, "--", "sleep", "1"});
  ASSERT_EQ(placed.exit_code, 0) << placed.err;
  const std::vector<std::string> lines = lines_of(placed.out);
  ASSERT_EQ(lines.size(), 3u) << placed.out;
  EXPECT_TRUE(lines[0].starts_with("ID:")) << placed.out;
  EXPECT_TRUE(has(lines[0], "ins_")) << placed.out;
  EXPECT_TRUE(lines[1].starts_with("STATE:") && has(lines[1], "scheduled")) << placed.out;
  EXPECT_TRUE(lines[2].starts_with("NODE:") && has(lines[2], "gpu-1")) << placed.out;

  // Work that waits says why instead of where; JSON is the whole record.
  const json waiting =
      allot_json({"run", "--gpus", "2", "--gpu-type", "H100", "--project", project, "--", "true"});
  EXPECT_EQ(waiting["state"], "queued");
  EXPECT_EQ(waiting["spec"]["gpu_models"], json({"H100"}));
  // A duration as a person writes it, before the command.
  const json bounded = allot_json(
      {"run", "--gpus", "2", "--max-run", "10m", "--project", project, "--", "echo", "hi"});
  EXPECT_EQ(bounded["spec"]["max_run_s"], 600) << bounded.dump();
  EXPECT_TRUE(waiting.contains("events")) << waiting.dump();
  const RunResult queued = allot({"run", "--gpus", "2", "--project", project, "--", "true"});
  EXPECT_TRUE(has(queued.out, "STATE:  queued")) << queued.out;
  EXPECT_TRUE(has(queued.out, "REASON: ")) << queued.out;

  // GPU models are matched whatever their case; an unknown one is refused with the nearest.
  const RunResult unknown = allot({"run", "--gpu-type", "H10", "--project", project, "--", "true"});
  EXPECT_EQ(unknown.exit_code, 5);
  EXPECT_TRUE(has(unknown.err, "unknown GPU model 'H10'; did you mean H100?")) << unknown.err;
}

TEST_F(InstanceCliTest, PsShowsWorkInFlightNewestFirstWithTenantAndNodeNames) {
  const std::string project = acme_project_and_node();
  auto run = [&](const char* gpus) {
    return allot_json({"run", "--gpus", gpus, "--project", project, "--", "sleep", "60"})
        .value("id", "");
  };
  const std::string first = run("1");
  const std::string ended = run("2");  // Waits for the GPU the first holds, and is stopped.
  ASSERT_EQ(allot_json({"stop", ended})["state"], "stopped");
  // Stopped again, it says so in one line, and that is no failure.
  const RunResult again = allot({"stop", ended});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, ended + " has ended: stopped\n");
  const std::string last = run("1");

  const RunResult ps = allot({"ps"});
  ASSERT_EQ(ps.exit_code, 0) << ps.err;
  const std::vector<std::string> lines = lines_of(ps.out);
  ASSERT_EQ(lines.size(), 3u) << ps.out;
  EXPECT_TRUE(has(lines[0], "TENANT") && has(lines[0], "NODE")) << ps.out;
  EXPECT_TRUE(lines[1].starts_with(last)) << ps.out;
  EXPECT_TRUE(lines[2].starts_with(first)) << ps.out;
  EXPECT_TRUE(has(lines[1], "acme") && has(lines[1], "gpu-1")) << ps.out;

  const json all = allot_json({"ps", "--all"});
  ASSERT_EQ(all.size(), 3u) << all.dump();
  EXPECT_EQ(all[0]["id"], last);
  EXPECT_EQ(all[1]["id"], ended);
  EXPECT_EQ(all[2]["id"], first);
  const json newest = allot_json({"ps", "--limit", "1"});
  ASSERT_EQ(newest.size(), 1u);
  EXPECT_EQ(newest[0]["id"], last);
}

TEST_F(InstanceCliTest, LimitOnALogGivesItsNewestEntries) {
  for (const char* name : {"a", "b", "c", "d"}) allot_json({"tenants", "create", name});
  const json all = allot_json({"audit"});
  ASSERT_GE(all.size(), 4u);
  const json newest = allot_json({"audit", "--limit", "2"});
  ASSERT_EQ(newest.size(), 2u);
  EXPECT_EQ(newest[0]["seq"], all[all.size() - 2]["seq"]);
  EXPECT_EQ(newest[1]["seq"], all[all.size() - 1]["seq"]);
}

TEST_F(InstanceCliTest, RecordsWithListsPrintAsTablesNotJson) {
  const std::string project = acme_project_and_node();
  const std::string id =
      allot_json({"run", "--gpus", "1", "--project", project, "--", "sleep", "60"}).value("id", "");
  const RunResult described = allot({"describe", "instance", id});
  ASSERT_EQ(described.exit_code, 0) << described.err;
  EXPECT_FALSE(has(described.out, "{")) << described.out;
  EXPECT_FALSE(has(described.out, "[")) << described.out;
  EXPECT_TRUE(has(described.out, "SPEC.COMMAND:")) << described.out;
  EXPECT_TRUE(has(described.out, "sleep, 60")) << described.out;
  EXPECT_TRUE(has(described.out, "\nEVENTS:\nAT ")) << described.out;

  // The operator's books: an asset's node list and its schedules, month by month.
  const RunResult asset =
      allot({"finance", "assets", "add", "--name", "rack-1", "--node", "gpu-1", "--cost", "1200",
             "--life", "12", "--in-service", "2026-01-01T00:00:00Z"});
  ASSERT_EQ(asset.exit_code, 0) << asset.err;
  // Made, it prints the one line a person needs; shown, all of it.
  ASSERT_TRUE(asset.out.starts_with("created rack-1 (ast_")) << asset.out;
  const std::string asset_id = asset.out.substr(asset.out.find('(') + 1, 20);
  const RunResult shown = allot({"finance", "assets", "show", asset_id});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_FALSE(has(shown.out, "{")) << shown.out;
  EXPECT_FALSE(has(shown.out, "[")) << shown.out;
  EXPECT_TRUE(has(shown.out, "\nSCHEDULES.DEPRECIATION:\n")) << shown.out;
  EXPECT_TRUE(has(shown.out, "100.000000")) << shown.out;
  const RunResult pool = allot(
      {"pools", "create", "burst", "--model", "H100-80GB", "--provider", "static", "--max", "2"});
  ASSERT_EQ(pool.exit_code, 0) << pool.err;
  EXPECT_FALSE(has(pool.out, "{")) << pool.out;
  EXPECT_FALSE(has(pool.out, "[")) << pool.out;
}

}  // namespace
}  // namespace allot::testing
