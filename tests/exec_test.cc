// `allot exec` and `allot shell` under a real allotd and agent: a command's output, input and exit
// code carried through allotd and the node's tunnel; a terminal when asked for; every session in
// the audit log; and who may not: another tenant, a tenant the operator has turned exec off for,
// an instance that does not run.
#include <fmt/format.h>

#include "support/cluster.h"

namespace allot::testing {
namespace {

using nlohmann::json;

class ExecTest : public ClusterTest {
 protected:
  ExecTest() { agent_count_ = 1; }

  void SetUp() override {
    ClusterTest::SetUp();
    if (HasFatalFailure()) return;
    id_ = launch({{"gpus", 1}, {"interactive", true}, {"command", {"sleep", "600"}}});
    ASSERT_TRUE(instance_reaches(id_, "running")) << instance(id_).dump();
  }

  // `allot exec` through a shell, so that a test can give it stdin.
  RunResult exec_with_input(const std::string& input, const std::string& args,
                            const std::string& key) {
    return run_program(
        "/bin/sh",
        {"-c", fmt::format("printf '{}' | {}/src/cli/allot exec {}", input, bin_dir(), args)},
        {"ALLOT_SERVER=" + daemon_.url(), "ALLOT_KEY=" + key, "HOME=/nonexistent"});
  }

  json audit_of(const std::string& method) {
    json out = json::array();
    const json audit = as_operator("GET", "/v1/audit?limit=1000", nullptr, 200);
    for (const json& entry : audit["items"]) {
      if (entry.value("method", "") == method && entry.value("target_id", "") == id_) {
        out.push_back(entry);
      }
    }
    return out;
  }

  std::string id_;
};

TEST_F(ExecTest, ExecReturnsTheCommandsOutputAndExitCodeAndIsAudited) {
  // The tunnel opens a moment after the agent joins: the first exec may wait for it.
  RunResult run;
  ASSERT_TRUE(eventually([&] {
    run = cli({"exec", id_, "--", "sh", "-c", "echo out; echo err >&2; exit 3"}, member_key_);
    return run.exit_code == 3;
  })) << run.exit_code
      << run.out << run.err;
  EXPECT_EQ(run.out, "out\n");
  EXPECT_EQ(run.err, "err\n");

  // stdin goes in, and its end ends `cat`.
  const RunResult cat = exec_with_input("hello\\nworld\\n", id_ + " -- cat", member_key_);
  EXPECT_EQ(cat.exit_code, 0) << cat.err;
  EXPECT_EQ(cat.out, "hello\nworld\n");

  // With a terminal: the command has one, of the size asked for.
  const RunResult tty = cli({"exec", "-t", id_, "--", "sh", "-c", "tty; stty size"}, member_key_);
  EXPECT_EQ(tty.exit_code, 0) << tty.err;
  EXPECT_NE(tty.out.find("/dev/pts/"), std::string::npos) << tty.out;
  EXPECT_NE(tty.out.find("24 80"), std::string::npos) << tty.out;

  // Each session: its start (101) and its end (the exit code), who and on what; not its content.
  ASSERT_TRUE(eventually([&] { return audit_of("EXEC").size() >= 6; })) << audit_of("EXEC").dump();
  const json entries = audit_of("EXEC");
  int starts = 0;
  int threes = 0;
  for (const json& entry : entries) {
    starts += entry["status"] == 101 ? 1 : 0;
    threes += entry["status"] == 3 ? 1 : 0;
    EXPECT_FALSE(entry.value("user_id", "").empty()) << entry.dump();
    EXPECT_EQ(entry.dump().find("echo out"), std::string::npos);
  }
  EXPECT_GE(starts, 3);
  EXPECT_EQ(threes, 1) << entries.dump();
}

TEST_F(ExecTest, ExecIsRefusedToStrangersWhereTurnedOffAndOnWorkThatDoesNotRun) {
  // Another tenant's key: as if there were no such instance.
  const std::string stranger = stranger_key();
  const RunResult theirs = cli({"exec", id_, "--", "id"}, stranger);
  EXPECT_EQ(theirs.exit_code, 4) << theirs.err;
  EXPECT_EQ(cli({"exec", "ins_0000000000000000", "--", "id"}, member_key_).exit_code, 4);
  EXPECT_EQ(cli({"exec", id_, "--", "id"}, "").exit_code, 3);

  // A bad request to the API itself: no upgrade, no command, not a list of strings.
  EXPECT_EQ(call("GET", "/v1/instances/" + id_ + "/exec?command=%5B%22id%22%5D", nullptr,
                 400)["error"]["code"],
            "invalid_argument");
  EXPECT_EQ(call("GET", "/v1/instances/" + id_ + "/exec", nullptr, 400)["error"]["code"],
            "missing_field");
  EXPECT_EQ(
      call("GET", "/v1/instances/" + id_ + "/exec?command=%5B1%5D", nullptr, 400)["error"]["code"],
      "invalid_argument");

  // The operator turns exec off for the tenant: refused, and back on: allowed.
  const std::string tenant_id = instance(id_)["tenant_id"];
  EXPECT_EQ(as_operator("PATCH", "/v1/tenants/" + tenant_id, {{"exec", false}}, 200)["exec"],
            false);
  const RunResult off = cli({"exec", id_, "--", "true"}, member_key_);
  EXPECT_EQ(off.exit_code, 3) << off.err;
  EXPECT_NE(off.err.find("turned exec off"), std::string::npos) << off.err;
  // A tenant's own admin cannot turn it back on.
  call("PATCH", "/v1/tenants/" + tenant_id, {{"exec", true}}, 403);
  as_operator("PATCH", "/v1/tenants/" + tenant_id, {{"exec", true}}, 200);
  EXPECT_TRUE(
      eventually([&] { return cli({"exec", id_, "--", "true"}, member_key_).exit_code == 0; }));

  // Work that has ended has nothing to exec into.
  call("POST", "/v1/instances/" + id_ + "/stop", nullptr, 200);
  ASSERT_TRUE(instance_reaches(id_, "stopped"));
  const RunResult stopped = cli({"exec", id_, "--", "true"}, member_key_);
  EXPECT_EQ(stopped.exit_code, 5) << stopped.err;
}

}  // namespace
}  // namespace allot::testing
