// Launch templates as tenants and an operator meet them: allotd started with [templates.NAME]
// tables lists them to every signed-in caller, launches from them with the caller's fields on top,
// refuses a missing or malformed template without creating anything, and refuses to start on a
// template no launch could use. The allot CLI lists them and launches from them.
#include <chrono>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/fixture.h"
#include "support/temp_dir.h"

namespace allot::testing {
namespace {

using nlohmann::json;

constexpr const char* kTemplates =
    "[templates.jupyter]\n"
    "description = \"JupyterLab on one GPU\"\n"
    "image = \"quay.io/jupyter/base-notebook:1\"\n"
    "command = [\"start-notebook.py\", \"--ServerApp.token=\"]\n"
    "gpus = 1\n"
    "interactive = true\n"
    "env = { MODE = \"lab\", LANG = \"C\" }\n"
    "[templates.pytorch]\n"
    "description = \"PyTorch; bring your command\"\n"
    "image = \"docker.io/pytorch/pytorch:2\"\n"
    "gpu_milli = 500\n";

class TemplateApiTest : public ApiTest {
 protected:
  void SetUp() override {
    std::ofstream(config_.path() / "allotd.toml") << kTemplates;
    daemon_.set_extra_args({"--config", (config_.path() / "allotd.toml").string()});
    ApiTest::SetUp();
    daemon_.set_free_prices("default");
  }

  size_t instances(const std::string& key) {
    return call("GET", "/v1/instances?limit=1000", nullptr, key, 200)["items"].size();
  }

  RunResult allot(const std::vector<std::string>& args, const std::string& key) {
    return run_program(bin_dir() + "/src/cli/allot", args,
                       {"ALLOT_SERVER=" + daemon_.url(), "ALLOT_KEY=" + key, "HOME=/nonexistent"});
  }

  TempDir config_;
};

TEST_F(TemplateApiTest, EverySignedInCallerSeesTheTemplatesAndNoOneElse) {
  const json list = call("GET", "/v1/templates", nullptr, a_.member_key, 200);
  ASSERT_EQ(list["items"].size(), 2U) << list;
  EXPECT_EQ(list["items"][0]["name"], "jupyter");
  EXPECT_EQ(list["items"][0]["description"], "JupyterLab on one GPU");
  EXPECT_EQ(list["items"][0]["fields"]["gpus"], 1);
  EXPECT_EQ(list["items"][1]["name"], "pytorch");
  EXPECT_EQ(
      call("GET", "/v1/templates/pytorch", nullptr, b_.member_key, 200)["fields"]["gpu_milli"],
      500);
  const json missing = call("GET", "/v1/templates/nope", nullptr, a_.member_key, 404);
  EXPECT_EQ(missing["error"]["code"], "not_found");
  EXPECT_EQ(call("GET", "/v1/templates", nullptr, "", 401)["error"]["code"], "unauthenticated");
  EXPECT_EQ(call("GET", "/v1/templates", nullptr, "allot_0000000000000000000000000000000000000000",
                 401)["error"]["code"],
            "unauthenticated");
  // There is no way to change them over the API: they are the operator's config.
  call("POST", "/v1/templates", {{"name", "x"}}, op_key_, 405);
}

TEST_F(TemplateApiTest, ALaunchTakesTheTemplatesFieldsWithItsOwnOnTop) {
  const json made = call("POST", "/v1/instances",
                         {{"template", "jupyter"},
                          {"project_id", a_.project_id},
                          {"env", {{"MODE", "batch"}, {"SEED", "7"}}}},
                         a_.member_key, 201);
  const json& spec = made["spec"];
  EXPECT_EQ(spec["image"], "quay.io/jupyter/base-notebook:1");
  EXPECT_EQ(spec["command"], json({"start-notebook.py", "--ServerApp.token="}));
  EXPECT_EQ(spec["gpus"], 1);
  EXPECT_EQ(spec["interactive"], true);
  EXPECT_EQ(spec["env"], json({{"LANG", "C"}, {"MODE", "batch"}, {"SEED", "7"}}));
  // The instance says which template it came from, and keeps saying it.
  EXPECT_EQ(spec["from_template"], "jupyter");
  const std::string id = made["id"];
  EXPECT_EQ(
      call("GET", "/v1/instances/" + id, nullptr, a_.member_key, 200)["spec"]["from_template"],
      "jupyter");
  // Without a template it is empty; a request cannot claim one.
  const json plain = call("POST", "/v1/instances",
                          {{"project_id", a_.project_id}, {"command", {"python", "train.py"}}},
                          a_.member_key, 201);
  EXPECT_EQ(plain["spec"]["from_template"], "");
  const json forged = call("POST", "/v1/instances",
                           {{"project_id", a_.project_id},
                            {"command", {"python", "train.py"}},
                            {"from_template", "jupyter"}},
                           a_.member_key, 400);
  EXPECT_EQ(forged["error"]["code"], "unknown_field");

  const json shared = call("POST", "/v1/instances",
                           {{"template", "pytorch"},
                            {"project_id", a_.project_id},
                            {"command", {"python", "train.py"}},
                            {"gpus", 2}},
                           a_.member_key, 201);
  EXPECT_EQ(shared["spec"]["gpus"], 2);
  EXPECT_EQ(shared["spec"]["gpu_milli"], 0);
  EXPECT_EQ(shared["spec"]["image"], "docker.io/pytorch/pytorch:2");
}

TEST_F(TemplateApiTest, AMissingOrMalformedTemplateIsRefusedAndNothingIsCreated) {
  const std::string before = snapshot();
  const Refusal cases[] = {
      {{{"template", "nope"}, {"project_id", a_.project_id}, {"command", {"x"}}}, 404, "not_found"},
      {{{"template", 5}, {"project_id", a_.project_id}, {"command", {"x"}}}, 400, "invalid_type"},
      {{{"template", "pytorch"}, {"project_id", a_.project_id}}, 400, "missing_field"},
      {{{"template", "jupyter"}, {"project_id", a_.project_id}, {"gpus", 9}},
       400,
       "invalid_argument"},
      {{{"template", "jupyter"}, {"project_id", a_.project_id}, {"colour", "red"}},
       400,
       "unknown_field"},
      // Another tenant's project is not found, template or not.
      {{{"template", "jupyter"}, {"project_id", b_.project_id}}, 404, "not_found"},
  };
  for (const Refusal& c : cases) {
    const json answer = call("POST", "/v1/instances", c.body, a_.member_key, c.status);
    EXPECT_EQ(answer["error"]["code"], c.code) << c.body;
  }
  const json says =
      call("POST", "/v1/instances", {{"template", "pytorch"}, {"project_id", a_.project_id}},
           a_.member_key, 400);
  EXPECT_NE(says["error"]["message"].get<std::string>().find("template 'pytorch'"),
            std::string::npos);
  // A name far longer than any template's is not echoed back.
  const json huge = call("POST", "/v1/instances",
                         {{"template", std::string(100'000, 'x')}, {"project_id", a_.project_id}},
                         a_.member_key, 404);
  EXPECT_LT(huge.dump().size(), 1'000U);
  EXPECT_EQ(instances(a_.member_key), 0U);
  EXPECT_EQ(instances(b_.member_key), 0U);
  EXPECT_EQ(snapshot(), before);
}

TEST_F(TemplateApiTest, TheCliListsTheTemplatesAndLaunchesFromOne) {
  const RunResult table = allot({"templates"}, a_.member_key);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("jupyter"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("JupyterLab on one GPU"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("500 milli"), std::string::npos) << table.out;
  const RunResult listed = allot({"-o", "json", "templates"}, a_.member_key);
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  const json items = json::parse(listed.out, nullptr, false);
  ASSERT_TRUE(items.is_array()) << listed.out;
  ASSERT_FALSE(items.empty());
  for (const json& item : items) {
    EXPECT_EQ(item.size(), 3U) << item.dump();  // name, description, fields: the API's.
  }

  const RunResult run = allot({"-o", "json", "run", "--project", a_.project_id, "--template",
                               "pytorch", "--", "python", "train.py"},
                              a_.member_key);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json made = json::parse(run.out, nullptr, false);
  EXPECT_EQ(made["spec"]["gpu_milli"], 500) << run.out;
  EXPECT_EQ(made["spec"]["command"], json({"python", "train.py"}));
  const RunResult shown =
      allot({"run", "--project", a_.project_id, "--template", "jupyter"}, a_.member_key);
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("TEMPLATE"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("jupyter"), std::string::npos) << shown.out;

  // Neither a command nor a template: the CLI says what is missing and sends nothing.
  const RunResult bare = allot({"run", "--project", a_.project_id}, a_.member_key);
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_NE(bare.err.find("a command is required"), std::string::npos) << bare.err;
  const RunResult unknown =
      allot({"run", "--project", a_.project_id, "--template", "nope", "--", "x"}, a_.member_key);
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("no template 'nope'"), std::string::npos) << unknown.err;
  EXPECT_EQ(instances(a_.member_key), 2U);
}

TEST(TemplateConfig, AllotdRefusesToStartOnATemplateNoLaunchCouldUse) {
  TempDir dir;
  std::ofstream(dir.path() / "allotd.toml") << "[templates.gpu-hog]\ngpus = 64\n";
  const RunResult started = run_program(
      bin_dir() + "/src/daemon/allotd",
      {"--config", (dir.path() / "allotd.toml").string(), "--listen", "127.0.0.1:0", "--data-dir",
       (dir.path() / "data").string()},
      {"ALLOT_ADMIN_KEY=allot_00000000000000000000000000000000000000aa"}, std::chrono::seconds(30));
  EXPECT_NE(started.exit_code, 0);
  EXPECT_EQ(started.exit_code == -1, false) << "allotd started on a bad template";
  EXPECT_NE((started.out + started.err).find("template 'gpu-hog': gpus must be 1 to 8"),
            std::string::npos)
      << started.out << started.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "data" / "allot.db"));
}

}  // namespace
}  // namespace allot::testing
