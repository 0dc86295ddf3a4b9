// Volumes as tenants and a careless or hostile caller meet them through the API: made, listed,
// mounted by launches and deleted; every bad size, name, region, backend, path, second writer and
// deletion of a mounted volume refused with its code and nothing changed; another tenant's volume
// not there at all. The allot CLI makes, lists and deletes them and mounts them with --volume.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/fixture.h"

namespace allot::testing {
namespace {

using nlohmann::json;

class VolumeApiTest : public ApiTest {
 protected:
  void SetUp() override {
    daemon_.set_extra_args({"--max-volume-gb", "500"});
    ApiTest::SetUp();
    daemon_.set_free_prices("default");
  }

  json make(const json& body, const std::string& key, int status) {
    return call("POST", "/v1/volumes", body, key, status);
  }

  // A launch that mounts `volumes`; no node is there, so it stays queued.
  json launch(const json& volumes, const std::string& key, int status) {
    return call("POST", "/v1/instances", {{"gpus", 1}, {"command", {"true"}}, {"volumes", volumes}},
                key, status);
  }

  RunResult allot(const std::vector<std::string>& args, const std::string& key) {
    return run_program(bin_dir() + "/src/cli/allot", args,
                       {"ALLOT_SERVER=" + daemon_.url(), "ALLOT_KEY=" + key, "HOME=/nonexistent"});
  }
};

TEST_F(VolumeApiTest, AVolumeIsMadeMountedByALaunchAndDeletedOnceNothingMountsIt) {
  const json made = make({{"name", "ckpt"}, {"size_gb", 100}}, a_.member_key, 201);
  EXPECT_TRUE(made["id"].get<std::string>().starts_with("vol_")) << made;
  EXPECT_EQ(made["tenant_id"], a_.tenant_id);
  EXPECT_EQ(made["project_id"], a_.project_id);
  EXPECT_EQ(made["region"], "default");  // The only region there is.
  EXPECT_EQ(made["backend"], "local");   // No NFS export is declared.
  EXPECT_EQ(made["size_gb"], 100);
  EXPECT_TRUE(made["node_id"].is_null());
  EXPECT_EQ(made["mounted_by"], json::array());
  const std::string id = made["id"];

  // Mounted by name; the instance records the volume's id and is held to its region.
  const json ins = launch({{{"volume", "ckpt"}, {"path", "/data"}}}, a_.member_key, 201);
  ASSERT_EQ(ins["spec"]["volumes"].size(), 1U) << ins;
  EXPECT_EQ(ins["spec"]["volumes"][0]["volume_id"], id);
  EXPECT_EQ(ins["spec"]["volumes"][0]["name"], "ckpt");
  EXPECT_EQ(ins["spec"]["volumes"][0]["path"], "/data");
  EXPECT_EQ(ins["spec"]["volumes"][0]["read_only"], false);
  EXPECT_EQ(ins["spec"]["regions"], json::array({"default"}));
  const json shown = call("GET", "/v1/volumes/ckpt", nullptr, a_.member_key, 200);
  EXPECT_EQ(shown["mounted_by"], json::array({ins["id"]}));
  EXPECT_EQ(call("GET", "/v1/volumes/" + id, nullptr, a_.admin_key, 200)["name"], "ckpt");

  // A second writer of a local volume is refused; a reader is not.
  const std::string before = snapshot();
  const json second = launch({{{"volume", "ckpt"}, {"path", "/data"}}}, a_.member_key, 409);
  EXPECT_EQ(second["error"]["code"], "conflict") << second;
  EXPECT_EQ(snapshot(), before);
  const json reader =
      launch({{{"volume", id}, {"path", "/in"}, {"read_only", true}}}, a_.member_key, 201);

  // Deleting a mounted volume is refused; once its instances are stopped it goes, and its name is
  // free again.
  const json mounted = call("DELETE", "/v1/volumes/ckpt", nullptr, a_.member_key, 409);
  EXPECT_EQ(mounted["error"]["code"], "conflict") << mounted;
  call("POST", "/v1/instances/" + ins["id"].get<std::string>() + "/stop", nullptr, a_.member_key,
       200);
  call("DELETE", "/v1/volumes/ckpt", nullptr, a_.member_key, 409);  // The reader still mounts it.
  call("POST", "/v1/instances/" + reader["id"].get<std::string>() + "/stop", nullptr, a_.member_key,
       200);
  const json gone = call("DELETE", "/v1/volumes/ckpt", nullptr, a_.member_key, 200);
  EXPECT_FALSE(gone["deleted_at"].is_null()) << gone;
  EXPECT_EQ(call("GET", "/v1/volumes", nullptr, a_.member_key, 200)["items"].size(), 0U);
  call("GET", "/v1/volumes/" + id, nullptr, a_.member_key, 404);
  EXPECT_NE(make({{"name", "ckpt"}, {"size_gb", 1}}, a_.member_key, 201)["id"], id);
}

TEST_F(VolumeApiTest, EveryBadVolumeIsRefusedWithItsCodeAndChangesNothing) {
  make({{"name", "data"}, {"size_gb", 10}}, a_.member_key, 201);
  const std::string before = snapshot();
  const Refusal cases[] = {
      {{{"name", "x"}}, 400, "missing_field"},
      {{{"size_gb", 1}}, 400, "missing_field"},
      {{{"name", "x"}, {"size_gb", 0}}, 400, "invalid_argument"},
      {{{"name", "x"}, {"size_gb", -5}}, 400, "invalid_argument"},
      {{{"name", "x"}, {"size_gb", "10G"}}, 400, "invalid_type"},
      {{{"name", "x"}, {"size_gb", 501}}, 422, "limit_exceeded"},  // The operator's 500 GB.
      {{{"name", "Big Data"}, {"size_gb", 1}}, 400, "invalid_argument"},
      {{{"name", "../etc"}, {"size_gb", 1}}, 400, "invalid_argument"},
      {{{"name", std::string(64, 'a')}, {"size_gb", 1}}, 400, "invalid_argument"},
      {{{"name", "data"}, {"size_gb", 1}}, 409, "already_exists"},
      {{{"name", "x"}, {"size_gb", 1}, {"region", "mars"}}, 400, "invalid_argument"},
      {{{"name", "x"}, {"size_gb", 1}, {"backend", "nfs"}}, 400, "invalid_argument"},
      {{{"name", "x"}, {"size_gb", 1}, {"backend", "s3"}}, 400, "invalid_argument"},
      {{{"name", "x"}, {"size_gb", 1}, {"project_id", b_.project_id}}, 404, "not_found"},
      {{{"name", "x"}, {"size_gb", 1}, {"colour", "red"}}, 400, "unknown_field"},
  };
  for (const Refusal& c : cases) {
    const json answer = make(c.body, a_.member_key, c.status);
    EXPECT_EQ(answer["error"]["code"], c.code) << c.body << answer;
  }
  EXPECT_EQ(snapshot(), before);
  // The limit message names the setting, so that an operator knows what to raise.
  const json over = make({{"name", "x"}, {"size_gb", 501}}, a_.member_key, 422);
  EXPECT_NE(over["error"]["message"].get<std::string>().find("max_volume_gb"), std::string::npos);
}

TEST_F(VolumeApiTest, EveryBadMountIsRefusedWithItsCodeAndChangesNothing) {
  make({{"name", "data"}, {"size_gb", 10}}, a_.member_key, 201);
  make({{"name", "more"}, {"size_gb", 10}}, a_.member_key, 201);
  const std::string before = snapshot();
  const Refusal cases[] = {
      {{{{"volume", "nope"}, {"path", "/data"}}}, 404, "not_found"},
      {{{{"volume", "data"}, {"path", "data"}}}, 400, "invalid_argument"},
      {{{{"volume", "data"}, {"path", "/"}}}, 400, "invalid_argument"},
      {{{{"volume", "data"}, {"path", "/data/../etc"}}}, 400, "invalid_argument"},
      {{{{"volume", "data"}, {"path", "/proc/x"}}}, 400, "invalid_argument"},
      {{{{"volume", "data"}, {"path", "/run/allot"}}}, 400, "invalid_argument"},
      {{{{"volume", "data"}, {"path", "/data,ro=false"}}}, 400, "invalid_argument"},
      {{{{"volume", "data"}, {"path", "/data/"}}}, 400, "invalid_argument"},
      {{{{"volume", "data"}, {"path", "/a"}}, {{"volume", "data"}, {"path", "/b"}}},
       400,
       "invalid_argument"},
      {{{{"volume", "data"}, {"path", "/a"}}, {{"volume", "more"}, {"path", "/a/b"}}},
       400,
       "invalid_argument"},
      {{{{"volume", "data"}}}, 400, "missing_field"},
      {{{{"volume", "data"}, {"path", "/data"}, {"mode", "rw"}}}, 400, "unknown_field"},
      {{"data:/data"}, 400, "invalid_type"},
      {"data", 400, "invalid_type"},
  };
  for (const Refusal& c : cases) {
    const json answer = launch(c.body, a_.member_key, c.status);
    EXPECT_EQ(answer["error"]["code"], c.code) << c.body << answer;
  }
  // A gang cannot share a local volume; a limit to another region leaves the volume out.
  json gang = call("POST", "/v1/instances",
                   {{"gpus", 1},
                    {"nodes", 2},
                    {"command", {"true"}},
                    {"volumes", {{{"volume", "data"}, {"path", "/data"}}}}},
                   a_.member_key, 400);
  EXPECT_EQ(gang["error"]["code"], "invalid_argument") << gang;
  json elsewhere = call("POST", "/v1/instances",
                        {{"gpus", 1},
                         {"regions", {"eu"}},
                         {"command", {"true"}},
                         {"volumes", {{{"volume", "data"}, {"path", "/data"}}}}},
                        a_.member_key, 400);
  EXPECT_EQ(elsewhere["error"]["code"], "invalid_argument") << elsewhere;
  EXPECT_EQ(snapshot(), before);
}

TEST_F(VolumeApiTest, AnotherTenantsVolumeIsNotThere) {
  const json theirs = make({{"name", "secret"}, {"size_gb", 10}}, b_.member_key, 201);
  const std::string id = theirs["id"];
  const std::string before = snapshot();
  for (const std::string& key : {id, std::string("secret")}) {
    EXPECT_EQ(call("GET", "/v1/volumes/" + key, nullptr, a_.admin_key, 404)["error"]["code"],
              "not_found");
    call("DELETE", "/v1/volumes/" + key, nullptr, a_.admin_key, 404);
    const json mount = launch({{{"volume", key}, {"path", "/data"}}}, a_.member_key, 404);
    EXPECT_EQ(mount["error"]["code"], "not_found") << mount;
  }
  EXPECT_EQ(call("GET", "/v1/volumes", nullptr, a_.admin_key, 200)["items"].size(), 0U);
  // Naming their tenant finds no tenant.
  call("GET", "/v1/volumes?tenant_id=" + b_.tenant_id, nullptr, a_.admin_key, 404);
  // Without a key nothing is listed or made.
  EXPECT_EQ(daemon_.request("GET", "/v1/volumes", "", "").status, 401);
  EXPECT_EQ(daemon_.request("POST", "/v1/volumes", R"({"name":"x","size_gb":1})", "").status, 401);
  EXPECT_EQ(snapshot(), before);
  // The operator sees every tenant's.
  EXPECT_EQ(call("GET", "/v1/volumes/" + id, nullptr, op_key_, 200)["tenant_id"], b_.tenant_id);
}

TEST_F(VolumeApiTest, TheCliMakesListsMountsAndDeletesVolumes) {
  const RunResult bad = allot({"volumes", "create", "ckpt", "--size", "100GiB"}, a_.member_key);
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("100G or 2T"), std::string::npos) << bad.err;
  const RunResult made = allot({"volumes", "create", "ckpt", "--size", "0.2T"}, a_.member_key);
  EXPECT_NE(made.exit_code, 0) << made.out;
  const RunResult ok = allot({"volumes", "create", "ckpt", "--size", "200G"}, a_.member_key);
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  const RunResult list = allot({"volumes", "list"}, a_.member_key);
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("ckpt"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("200"), std::string::npos) << list.out;
  const RunResult run =
      allot({"-o", "json", "run", "--gpus", "1", "--volume", "ckpt:/ckpt:ro", "--", "true"},
            a_.member_key);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json launched = json::parse(run.out);
  EXPECT_EQ(launched["spec"]["volumes"][0]["path"], "/ckpt") << launched;
  EXPECT_EQ(launched["spec"]["volumes"][0]["read_only"], true) << launched;
  const RunResult malformed =
      allot({"run", "--gpus", "1", "--volume", "ckpt", "--", "true"}, a_.member_key);
  EXPECT_NE(malformed.exit_code, 0);
  EXPECT_NE(malformed.err.find("NAME:/PATH"), std::string::npos) << malformed.err;
  const RunResult busy = allot({"volumes", "delete", "ckpt"}, a_.member_key);
  EXPECT_NE(busy.exit_code, 0);
  EXPECT_NE(busy.err.find("conflict"), std::string::npos) << busy.err;
  call("POST", "/v1/instances/" + launched["id"].get<std::string>() + "/stop", nullptr,
       a_.member_key, 200);
  EXPECT_EQ(allot({"volumes", "delete", "ckpt"}, a_.member_key).exit_code, 0);
}

}  // namespace
}  // namespace allot::testing
