#include "api/launch.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace allot {
namespace {

using nlohmann::json;

LaunchTemplate notebook() {
  return {.name = "jupyter",
          .description = "JupyterLab",
          .fields = {{"image", "quay.io/jupyter/base-notebook:1"},
                     {"command", {"start-notebook.py"}},
                     {"gpus", 1},
                     {"env", {{"MODE", "lab"}, {"LANG", "C"}}},
                     {"labels", {{"team", "ml"}}}}};
}

TEST(WithTemplate, TheBodysFieldsReplaceTheTemplatesAndEnvAndLabelsMergeByName) {
  const json launch = with_template(notebook(), {{"template", "jupyter"},
                                                 {"project_id", "prj_1"},
                                                 {"command", {"python", "serve.py"}},
                                                 {"env", {{"MODE", "batch"}, {"TOKEN", "t"}}},
                                                 {"labels", {{"run", "7"}}}});
  EXPECT_FALSE(launch.contains("template"));
  EXPECT_EQ(launch["project_id"], "prj_1");
  EXPECT_EQ(launch["image"], "quay.io/jupyter/base-notebook:1");
  EXPECT_EQ(launch["command"], json({"python", "serve.py"}));
  EXPECT_EQ(launch["env"], json({{"MODE", "batch"}, {"LANG", "C"}, {"TOKEN", "t"}}));
  EXPECT_EQ(launch["labels"], json({{"team", "ml"}, {"run", "7"}}));
  EXPECT_EQ(launch["gpus"], 1);
}

TEST(WithTemplate, AskingForAShareOfAGpuReplacesTheTemplatesWholeGpus) {
  const json launch = with_template(notebook(), {{"gpu_milli", 250}});
  EXPECT_FALSE(launch.contains("gpus"));
  EXPECT_EQ(launch["gpu_milli"], 250);
}

TEST(WithTemplate, AnEnvThatIsNotAnObjectReplacesTheTemplatesAndTheReaderRefusesIt) {
  json launch = with_template(notebook(), {{"env", "MODE=x"}});
  EXPECT_EQ(launch["env"], "MODE=x");
  JsonBody body = JsonBody::from_document(std::move(launch));
  auto read = read_launch(body);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code, ErrorCode::kInvalidType);
}

TEST(ReadLaunch, ReadsATemplatesLaunchIntoASpec) {
  JsonBody body = JsonBody::from_document(with_template(notebook(), {{"interactive", true}}));
  auto launch = read_launch(body);
  ASSERT_TRUE(launch) << launch.error().message;
  EXPECT_FALSE(launch->project_id);
  EXPECT_EQ(launch->spec.gpus, 1);
  EXPECT_EQ(launch->spec.image, "quay.io/jupyter/base-notebook:1");
  EXPECT_EQ(launch->spec.command, std::vector<std::string>{"start-notebook.py"});
  EXPECT_TRUE(launch->spec.interactive);
}

TEST(CheckTemplate, AcceptsOneWithoutACommand) {
  EXPECT_TRUE(check_template(notebook()));
  LaunchTemplate image_only{.name = "pytorch", .fields = {{"image", "pytorch/pytorch:2"}}};
  EXPECT_TRUE(check_template(image_only));
}

TEST(CheckTemplate, RefusesWhatNoLaunchCouldUseNamingTheTemplate) {
  struct Case {
    const char* name;
    json fields;
    const char* says;
  };
  const Case cases[] = {
      {"bad", {{"project_id", "prj_1"}}, "'project_id' cannot be set in a template"},
      {"bad", {{"template", "other"}}, "'template' cannot be set in a template"},
      {"bad", {{"colour", "red"}}, "unknown field 'colour'"},
      {"bad", {{"gpus", 9}}, "gpus must be 1 to 8"},
      {"bad", {{"gpus", 1}, {"gpu_milli", 500}}, "gpu"},
      {"bad", {{"command", json::array()}}, "command must not be empty"},
      {"bad", {{"image", "Not An Image"}}, "image"},
      {"bad", {{"env", {{"A=B", "x"}}}}, "env: 'A\\x3dB' is not a variable name"},
      {"bad", {{"nodes", 2}, {"gpu_milli", 500}}, "multi-node"},
      {"Upper", {{"gpus", 1}}, "lowercase"},
      {"with space", {{"gpus", 1}}, "lowercase"},
      {"-dash", {{"gpus", 1}}, "starting with a letter or digit"},
      {"", {{"gpus", 1}}, "1 to 63"},
  };
  for (const Case& c : cases) {
    const Status ok = check_template({.name = c.name, .fields = c.fields});
    ASSERT_FALSE(ok) << c.name << " " << c.fields.dump();
    EXPECT_NE(ok.error().message.find(fmt::format("template '{}'", c.name)), std::string::npos)
        << ok.error().message;
    EXPECT_NE(ok.error().message.find(c.says), std::string::npos) << ok.error().message;
  }
}

}  // namespace
}  // namespace allot

namespace allot {
namespace {

// launch_fields is read_launch's inverse: what it writes reads back as the same spec.
TEST(LaunchFields, ReadBackTheyMakeTheSameSpec) {
  InstanceSpec spec{.gpu_milli = 250,
                    .gpu_models = {"H100-80GB"},
                    .cpu_milli = 2'000,
                    .memory_mib = 4'096,
                    .region = "eu",
                    .price_class = PriceClass::kSpot,
                    .image = "localhost/app:1",
                    .command = {"python", "serve.py"},
                    .env = {{"MODE", "lab"}},
                    .labels = {{"team", "ml"}},
                    .max_run_s = 600,
                    .requeue = true,
                    .max_price_micros = 2'500'000,
                    .regions = {"eu", "us"},
                    .prefer = Prefer::kCarbon,
                    .idle = IdlePolicy{.threshold_pct = 5, .window_s = 1'800},
                    .volumes = {VolumeMount{.name = "ckpt", .path = "/ckpt", .read_only = true}}};
  JsonBody body = JsonBody::from_document(launch_fields(spec));
  auto read = read_launch(body);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->spec, spec) << launch_fields(spec).dump();
}

}  // namespace
}  // namespace allot
