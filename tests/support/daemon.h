// Runs allotd as a real process for a test: on a free loopback port, in a temporary data dir,
// with SQLite or PostgreSQL. The same data survives stop()/kill() and start() again.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "client/http_client.h"
#include "support/temp_dir.h"

namespace allot::testing {

// The directory holding the built programs (the test command sets ALLOT_BIN_DIR).
std::string bin_dir();

class Daemon {
 public:
  // `postgres_url` empty: SQLite in a temporary directory.
  explicit Daemon(std::string postgres_url = {});
  ~Daemon();

  // Flags added to every start, e.g. {"--heartbeat-timeout-ms", "2000"}.
  void set_extra_args(std::vector<std::string> args) { extra_args_ = std::move(args); }
  // The port to listen on ("0", the default: any free one).
  void set_listen_port(std::string port) { listen_port_ = std::move(port); }
  // allotd's process_runtime_tenants; "all" unless a test says otherwise (empty: the default).
  void set_process_runtime_tenants(std::string who) { process_runtime_tenants_ = std::move(who); }

  // Starts allotd and waits until it listens. Returns false (and fails the test) otherwise.
  bool start(const std::vector<std::string>& extra_env = {});
  // Starts allotd again on the port it had, so that running agents find it where they left it.
  bool start_on_same_port();
  // SIGTERM, then waits; returns the exit status (-1 if it did not exit in time).
  int stop();
  // SIGKILL, then reaps it.
  void kill();

  const std::string& url() const { return url_; }
  // Where a SQLite daemon keeps its database (allot.db).
  std::filesystem::path data_dir() const { return dir_.path() / "data"; }
  // The operator admin key printed at the first start.
  const std::string& admin_key() const { return admin_key_; }
  pid_t pid() const { return pid_; }
  // What allotd printed on stdout and stderr.
  std::string output() const;

  // A request with the given key; fails the test if the server cannot be reached.
  ClientResponse request(const std::string& method, const std::string& target,
                         const std::string& body, const std::string& key);

  // Work is placed only where a price covers it. Prices every catalog GPU model of `region` at 0
  // (an explicit free price) in every class, for tests that are not about money; fails the test
  // on any refusal.
  void set_free_prices(const std::string& region);

 private:
  TempDir dir_;
  std::string postgres_url_;
  std::vector<std::string> extra_args_;
  std::string process_runtime_tenants_ = "all";
  pid_t pid_ = -1;
  std::string listen_port_ = "0";
  std::string url_;
  std::string admin_key_;
  std::unique_ptr<HttpClient> client_;
};

// Starts a program with its stdout and stderr appended to files; returns its pid.
pid_t spawn_program(const std::string& program, const std::vector<std::string>& args,
                    const std::vector<std::string>& extra_env, const std::filesystem::path& out,
                    const std::filesystem::path& err);
// Waits for a process up to `timeout`: its exit code, 128+signal, or -1 on timeout.
int wait_for_exit(pid_t pid, std::chrono::milliseconds timeout);

// Runs a program to its end with arguments and extra environment; returns its exit code and
// stdout.
struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
// Runs a program to its end, killed after `limit` (exit_code -1 then).
RunResult run_program(const std::string& program, const std::vector<std::string>& args,
                      const std::vector<std::string>& extra_env = {},
                      std::chrono::seconds limit = std::chrono::seconds(60));
// Runs the allot CLI with no server and no home directory, for its offline commands (`sim`).
RunResult allot_offline(const std::vector<std::string>& args,
                        std::chrono::seconds limit = std::chrono::seconds(60));

}  // namespace allot::testing
