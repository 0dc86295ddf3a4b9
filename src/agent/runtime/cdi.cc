#include "agent/runtime/cdi.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
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
    devices.push_back(
        {{"name", gpu.uuid},
         {"containerEdits",
          {{"deviceNodes", json::array({{{"path", "/dev/nvidia" + std::to_string(gpu.index)},
                                         {"hostPath", node},
                                         {"permissions", "rw"}}})}}}});
  }
  const json spec = {{"cdiVersion", "0.5.0"}, {"kind", kind}, {"devices", devices}};
  const std::string path = simulated_cdi_path(spec_dir, owner);
  return write_file_atomically(path, path + ".tmp", spec.dump(2) + "\n", 0644);
}

Status check_nvidia_cdi(const std::vector<std::string>& uuids,
                        const std::vector<std::string>& spec_dirs) {
  std::string seen;
  for (const std::string& dir : spec_dirs) {
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      std::ifstream in(it->path());
      std::stringstream text;
      text << in.rdbuf();
      if (text.str().find(kNvidiaCdiKind) != std::string::npos) seen += text.str();
    }
  }
  if (seen.empty()) {
    return fail(ErrorCode::kUnavailable,
                "no CDI spec of kind nvidia.com/gpu in /etc/cdi or /var/run/cdi: run `nvidia-ctk "
                "cdi generate --output=/etc/cdi/nvidia.yaml` (NVIDIA Container Toolkit)");
  }
  for (const std::string& uuid : uuids) {
    if (seen.find(uuid) == std::string::npos) {
      return fail(ErrorCode::kUnavailable, "the nvidia.com/gpu CDI spec does not name GPU " + uuid +
                                               ": generate it again after driver or GPU changes");
    }
  }
  return {};
}

}  // namespace allot::agent
