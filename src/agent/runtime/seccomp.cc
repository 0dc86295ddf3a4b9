#include "agent/runtime/seccomp.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "agent/runtime/state_file.h"

namespace allot::agent {
namespace {

using nlohmann::json;

// Allowed when the first argument's CLONE_NEWUSER bit is clear.
json without_new_user(const char* name) {
  return {
      {"names", {name}},
      {"action", "SCMP_ACT_ALLOW"},
      {"args",
       {{{"index", 0}, {"value", CLONE_NEWUSER}, {"valueTwo", 0}, {"op", "SCMP_CMP_MASKED_EQ"}}}}};
}

// Takes the names out of every rule that allows them; false when a rule lists one under
// conditions this does not understand (then the profile is not changed blind).
bool take_out(json& syscalls, const std::vector<std::string>& names) {
  for (json& rule : syscalls) {
    if (!rule.is_object() || !rule.contains("names") || !rule["names"].is_array()) return false;
    json kept = json::array();
    for (const json& name : rule["names"]) {
      const bool listed =
          name.is_string() && std::ranges::find(names, name.get<std::string>()) != names.end();
      if (listed && rule.value("action", "") != "SCMP_ACT_ALLOW") return false;
      if (!listed) kept.push_back(name);
    }
    rule["names"] = std::move(kept);
  }
  return true;
}

}  // namespace

Result<std::string> write_seccomp_profile(const std::string& dir, const std::string& base_path) {
  std::ifstream in(base_path);
  std::stringstream text;
  text << in.rdbuf();
  json profile = json::parse(text.str(), nullptr, false);
  const bool usable = in && profile.is_object() &&
                      profile.value("defaultAction", "") == "SCMP_ACT_ERRNO" &&
                      profile.contains("syscalls") && profile["syscalls"].is_array();
  if (!usable || !take_out(profile["syscalls"], {"clone", "clone3", "unshare"})) {
    return fail(ErrorCode::kUnavailable,
                "cannot read podman's seccomp profile " + base_path +
                    " (an allow list, as containers-common ships it): containers would be able "
                    "to make user namespaces");
  }
  json& syscalls = profile["syscalls"];
  syscalls.push_back(without_new_user("clone"));
  syscalls.push_back(without_new_user("unshare"));
  syscalls.push_back({{"names", {"clone3"}}, {"action", "SCMP_ACT_ERRNO"}, {"errnoRet", ENOSYS}});
  std::error_code made;
  std::filesystem::create_directories(dir, made);
  std::string path = dir + "/seccomp.json";
  if (Status written = write_file_atomically(path, path + ".tmp", profile.dump(1), 0644);
      !written) {
    return std::unexpected(written.error());
  }
  return path;
}

}  // namespace allot::agent
