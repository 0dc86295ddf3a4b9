#include "agent/runtime/userns.h"

#include <fstream>
#include <string>

namespace allot::agent {
namespace {

// Whether the file ends without a line break, so that a line added must begin with one.
bool ends_mid_line(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in || in.tellg() <= 0) return false;
  in.seekg(-1, std::ios::end);
  return in.get() != '\n';
}

bool has_range(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("containers:")) return true;
  }
  return false;
}

}  // namespace

Status ensure_container_id_ranges(const std::string& subuid, const std::string& subgid) {
  for (const std::string& path : {subuid, subgid}) {
    if (has_range(path)) continue;
    const bool mid_line = ends_mid_line(path);
    std::ofstream out(path, std::ios::app);
    out << (mid_line ? "\n" : "") << kContainersIdRange << '\n';
    out.flush();
    if (!out) {
      return fail(ErrorCode::kUnavailable,
                  "cannot give containers their own uids: " + path + " is not writable (run the " +
                      "agent as root, or add '" + std::string(kContainersIdRange) + "' to it)");
    }
  }
  return {};
}

}  // namespace allot::agent
