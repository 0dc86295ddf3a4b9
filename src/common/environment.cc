#include "common/environment.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/limits.h"

namespace allot {
namespace {

bool name_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }

// Names are shown back in errors: what is not a name character is printed escaped.
std::string shown(std::string_view name) {
  std::string out;
  for (const char c : name.substr(0, 64)) {
    if (name_char(c)) {
      out += c;
    } else {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    }
  }
  return name.size() > 64 ? out + "..." : out;
}

}  // namespace

bool reserved_env_name(std::string_view name) {
  return name.starts_with("ALLOT_") || name == "CUDA_VISIBLE_DEVICES" ||
         name == "NVIDIA_VISIBLE_DEVICES";
}

Status check_environment(const std::map<std::string, std::string>& env) {
  if (env.size() > limits::kMaxEnvVariables) {
    return fail(ErrorCode::kLimitExceeded,
                fmt::format("env: at most {} variables", limits::kMaxEnvVariables));
  }
  size_t total = 0;
  for (const auto& [name, value] : env) {
    const bool well_formed = !name.empty() && name.size() <= limits::kMaxEnvNameBytes &&
                             name_start(name.front()) && std::ranges::all_of(name, name_char);
    if (!well_formed) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("env: '{}' is not a variable name ([A-Za-z_][A-Za-z0-9_]*, at most "
                              "{} bytes)",
                              shown(name), limits::kMaxEnvNameBytes));
    }
    if (value.find_first_of(std::string_view("\0\n\r", 3)) != std::string::npos) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("env: the value of {} holds a NUL byte or a line break", name));
    }
    total += value.size();
  }
  if (total > limits::kMaxEnvBytes) {
    return fail(ErrorCode::kLimitExceeded,
                fmt::format("env: the values are over {} bytes in all", limits::kMaxEnvBytes));
  }
  return {};
}

Status check_tenant_environment(const std::map<std::string, std::string>& env) {
  if (auto ok = check_environment(env); !ok) return ok;
  for (const auto& [name, value] : env) {
    if (reserved_env_name(name)) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("env: {} is set by Allot and cannot be given", name));
    }
  }
  return {};
}

}  // namespace allot
