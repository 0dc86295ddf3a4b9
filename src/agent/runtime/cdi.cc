#include "agent/runtime/cdi.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "agent/runtime/state_file.h"

namespace allot::agent {
namespace {

using nlohmann::json;

std::string errno_text() { return std::generic_category().message(errno); }

// A node with the wanted numbers is kept; anything else at the path is replaced.
Status make_device_node(const std::string& path, unsigned minor) {
  struct stat st{};
  const dev_t wanted = makedev(kNvidiaDeviceMajor, minor);
  if (::lstat(path.c_str(), &st) == 0) {
    if (S_ISCHR(st.st_mode) && st.st_rdev == wanted) return {};
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
  if (::mknod(path.c_str(), S_IFCHR | 0666, wanted) != 0) {
    return fail(ErrorCode::kUnavailable, "cannot make the simulated GPU device " + path + ": " +
                                             errno_text() + " (the agent must run as root)");
  }
  return {};
}

}  // namespace

std::string cdi_device(std::string_view kind, std::string_view uuid) {
  std::string device(kind);
  device += '=';
  device += uuid;
  return device;
}

std::string simulated_cdi_path(const std::string& spec_dir, const std::string& owner) {
  return spec_dir + "/allot-sim-" + owner + ".json";
}

std::string simulated_cdi_kind(std::string_view owner) {
  return "allot.sim/gpu-" + std::string(owner);
}

Status write_simulated_cdi(const std::vector<GpuInfo>& gpus, const std::string& device_dir,
                           const std::string& spec_dir, const std::string& kind,
                           const std::string& owner) {
  std::error_code ec;
  std::filesystem::create_directories(device_dir, ec);
  if (!ec) std::filesystem::create_directories(spec_dir, ec);
  if (ec) return fail(ErrorCode::kUnavailable, "cannot create CDI directories: " + ec.message());
  json devices = json::array();
  for (const GpuInfo& gpu : gpus) {
    const std::string node = device_dir + "/nvidia" + std::to_string(gpu.index);
    if (Status made = make_device_node(node, static_cast<unsigned>(gpu.index)); !made) return made;
    // Bound in rather than a device node: a container in a user namespace of its own cannot be
    // given a node whose host path differs from its path (runc binds the path itself), and a
    // simulated GPU is never opened.
    devices.push_back(
        {{"name", gpu.uuid},
         {"containerEdits",
          {{"mounts", json::array({{{"hostPath", node},
                                    {"containerPath", "/dev/nvidia" + std::to_string(gpu.index)},
                                    {"options", {"bind", "rw"}}}})}}}});
  }
  const json spec = {{"cdiVersion", "0.5.0"}, {"kind", kind}, {"devices", devices}};
  const std::string path = simulated_cdi_path(spec_dir, owner);
  return write_file_atomically(path, path + ".tmp", spec.dump(2) + "\n", 0644);
}

CdiSpec read_cdi_spec(const std::string& text) {
  CdiSpec spec;
  const json doc = json::parse(text, nullptr, false);
  if (doc.is_object()) {
    spec.kind = doc.value("kind", "");
    for (const json& device : doc.value("devices", json::array())) {
      if (device.is_object()) spec.devices.push_back(device.value("name", ""));
    }
    return spec;
  }
  // YAML, as nvidia-ctk writes it: the top-level kind, and each device's name (a key of the
  // device's list item: "- name: X" or "  name: X" below its "- containerEdits:").
  static const std::regex kKind(R"(^kind:\s*["']?([^"'\s]+)["']?\s*$)");
  static const std::regex kName(R"(^(?:-\s+|  )name:\s*["']?([^"'\s]+)["']?\s*$)");
  std::istringstream lines(text);
  bool in_devices = false;
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    if (std::regex_match(line, match, kKind)) spec.kind = match[1];
    if (!line.empty() && line.front() != ' ' && line.front() != '-') {
      in_devices = line.starts_with("devices:");
    } else if (in_devices && std::regex_match(line, match, kName)) {
      spec.devices.push_back(match[1]);
    }
  }
  return spec;
}

Status check_nvidia_cdi(const std::vector<std::string>& uuids,
                        const std::vector<std::string>& spec_dirs) {
  std::set<std::string> named;
  bool found = false;
  for (const std::string& dir : spec_dirs) {
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      std::ifstream in(it->path());
      std::stringstream text;
      text << in.rdbuf();
      const CdiSpec spec = read_cdi_spec(text.str());
      if (spec.kind != kNvidiaCdiKind) continue;
      found = true;
      named.insert(spec.devices.begin(), spec.devices.end());
    }
  }
  if (!found) {
    return fail(ErrorCode::kUnavailable,
                "no CDI spec of kind nvidia.com/gpu in /etc/cdi or /var/run/cdi: run `nvidia-ctk "
                "cdi generate --output=/etc/cdi/nvidia.yaml` (NVIDIA Container Toolkit)");
  }
  for (const std::string& uuid : uuids) {
    if (!named.contains(uuid)) {
      return fail(ErrorCode::kUnavailable, "the nvidia.com/gpu CDI spec does not name GPU " + uuid +
                                               ": generate it again after driver or GPU changes");
    }
  }
  return {};
}

}  // namespace allot::agent
