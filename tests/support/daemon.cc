#include "support/daemon.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/kernel/gpu_models.h"

extern char** environ;

namespace allot::testing {

pid_t spawn_program(const std::string& program, const std::vector<std::string>& args,
                    const std::vector<std::string>& extra_env, const std::filesystem::path& out,
                    const std::filesystem::path& err) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  std::vector<char*> argv{const_cast<char*>(program.c_str())};
  argv.reserve(args.size() + 2);
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  envp.reserve(env.size() + 1);
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const int out_fd = open(out.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    const int err_fd = open(err.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    const int null_fd = open("/dev/null", O_RDONLY);
    dup2(null_fd, 0);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    execve(program.c_str(), argv.data(), envp.data());
    _exit(127);
  }
  return pid;
}

int wait_for_exit(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
      return -1;
    }
    if (std::chrono::steady_clock::now() > deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::string bin_dir() {
  const char* dir = std::getenv("ALLOT_BIN_DIR");
  return dir == nullptr ? std::string("build/debug") : std::string(dir);
}

Daemon::Daemon(std::string postgres_url) : postgres_url_(std::move(postgres_url)) {}

Daemon::~Daemon() {
  if (pid_ > 0) kill();
}

bool Daemon::start(const std::vector<std::string>& extra_env) {
  const auto port_file = dir_.path() / "port";
  std::filesystem::remove(port_file);
  std::vector<std::string> args = {
      "--listen",    "127.0.0.1:" + listen_port_, "--data-dir",  (dir_.path() / "data").string(),
      "--port-file", port_file.string(),          "--log-level", "warn"};
  // Most tests run work as processes on the host, for any tenant.
  if (!process_runtime_tenants_.empty()) {
    args.insert(args.end(), {"--process-runtime-tenants", process_runtime_tenants_});
  }
  if (!postgres_url_.empty()) {
    args.insert(args.end(), {"--store", "postgres", "--postgres-url", postgres_url_});
  }
  args.insert(args.end(), extra_args_.begin(), extra_args_.end());
  // Agents that allotd starts itself (local pools) run work as processes.
  std::vector<std::string> env = {"ALLOT_RUNTIME=process"};
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  pid_ = spawn_program(bin_dir() + "/src/daemon/allotd", args, env, dir_.path() / "stdout",
                       dir_.path() / "stderr");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!std::filesystem::exists(port_file)) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_ || std::chrono::steady_clock::now() > deadline) {
      pid_ = -1;
      ADD_FAILURE() << "allotd did not start:\n" << output();
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  url_ = "http://127.0.0.1:" + read_file(port_file);
  while (!url_.empty() && url_.back() == '\n') url_.pop_back();
  const std::string out = read_file(dir_.path() / "stdout");
  if (const size_t at = out.find("allot_"); admin_key_.empty() && at != std::string::npos) {
    admin_key_ = out.substr(at, out.find('\n', at) - at);
  }
  client_ = std::move(HttpClient::connect_to(url_).value());
  return true;
}

bool Daemon::start_on_same_port() {
  listen_port_ = url_.substr(url_.rfind(':') + 1);
  const bool started = start();
  listen_port_ = "0";
  return started;
}

int Daemon::stop() {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGTERM);
  const int code = wait_for_exit(pid_, std::chrono::seconds(30));
  if (code == -1) ::kill(pid_, SIGKILL);
  pid_ = -1;
  client_.reset();
  return code;
}

void Daemon::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  wait_for_exit(pid_, std::chrono::seconds(30));
  pid_ = -1;
  client_.reset();
}

std::string Daemon::output() const {
  return read_file(dir_.path() / "stdout") + read_file(dir_.path() / "stderr");
}

void Daemon::set_free_prices(const std::string& region) {
  for (std::string_view model : catalog_gpu_models()) {
    for (const char* price_class : {"on-demand", "spot", "reserved"}) {
      const nlohmann::json body = {{"gpu_model", model},
                                   {"region", region},
                                   {"price_class", price_class},
                                   {"gpu_hour", "0"}};
      const ClientResponse response = request("PUT", "/v1/prices", body.dump(), admin_key_);
      EXPECT_EQ(response.status, 200) << response.body;
    }
  }
}

ClientResponse Daemon::request(const std::string& method, const std::string& target,
                               const std::string& body, const std::string& key) {
  auto response = client_->send(method, target, body, key);
  if (!response) {
    ADD_FAILURE() << method << " " << target << ": " << response.error().message;
    return {};
  }
  return *response;
}

RunResult run_program(const std::string& program, const std::vector<std::string>& args,
                      const std::vector<std::string>& extra_env, std::chrono::seconds limit) {
  TempDir dir;
  const pid_t pid = spawn_program(program, args, extra_env, dir.path() / "out", dir.path() / "err");
  RunResult result;
  result.exit_code = wait_for_exit(pid, limit);
  if (result.exit_code == -1) ::kill(pid, SIGKILL);
  result.out = read_file(dir.path() / "out");
  result.err = read_file(dir.path() / "err");
  return result;
}

RunResult allot_offline(const std::vector<std::string>& args, std::chrono::seconds limit) {
  return run_program(bin_dir() + "/src/cli/allot", args, {"HOME=/nonexistent"}, limit);
}

}  // namespace allot::testing
