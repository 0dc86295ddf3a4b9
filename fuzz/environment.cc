// The environment a workload is given (common/environment.h), over any bytes: the first byte is
// the separator of NAME=VALUE pairs in the rest (so that names and values may hold any byte, the
// NUL and line breaks the check refuses among them). Properties: nothing crashes or throws; an
// environment that passes has only [A-Za-z_][A-Za-z0-9_]* names of at most kMaxEnvNameBytes,
// values without NUL, CR or LF, at most kMaxEnvVariables variables and kMaxEnvBytes of values;
// one that passes the tenant's check passes the agent's and holds no reserved name.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

#include "check.h"
#include "common/environment.h"
#include "common/limits.h"

namespace allot {
namespace {

using fuzz::require;

std::map<std::string, std::string> split(std::string_view rest, char separator) {
  std::map<std::string, std::string> env;
  while (!rest.empty()) {
    const size_t end = std::min(rest.find(separator), rest.size());
    const std::string_view pair = rest.substr(0, end);
    const size_t eq = std::min(pair.find('='), pair.size());
    env[std::string(pair.substr(0, eq))] = std::string(pair.substr(std::min(eq + 1, pair.size())));
    rest.remove_prefix(std::min(end + 1, rest.size()));
  }
  return env;
}

bool is_name(std::string_view name) {
  const auto letter = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
  };
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (name.empty() || name.size() > limits::kMaxEnvNameBytes || !letter(name.front())) return false;
  return std::ranges::all_of(name, [&](char c) { return letter(c) || digit(c); });
}

void check_accepted(const std::map<std::string, std::string>& env) {
  require(env.size() <= limits::kMaxEnvVariables, "at most kMaxEnvVariables variables");
  size_t total = 0;
  for (const auto& [name, value] : env) {
    require(is_name(name), "a name is [A-Za-z_][A-Za-z0-9_]* within its limit");
    require(value.find_first_of(std::string_view("\0\r\n", 3)) == std::string::npos,
            "a value holds no NUL or line break");
    total += value.size();
  }
  require(total <= limits::kMaxEnvBytes, "at most kMaxEnvBytes of values");
}

}  // namespace
}  // namespace allot

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace allot;
  if (size == 0) return 0;
  const auto env = split(fuzz::bytes_of(data + 1, size - 1), static_cast<char>(data[0]));
  const bool agent_ok = check_environment(env).has_value();
  if (agent_ok) check_accepted(env);
  if (check_tenant_environment(env)) {
    fuzz::require(agent_ok, "the tenant's check is the agent's and more");
    for (const auto& [name, value] : env) {
      fuzz::require(!reserved_env_name(name), "a tenant sets no reserved name");
    }
  }
  return 0;
}
