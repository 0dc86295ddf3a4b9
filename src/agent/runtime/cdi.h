// GPUs for containers as CDI devices (the Container Device Interface): podman reads device specs
// from /etc/cdi and /var/run/cdi and gives a container only the device nodes of the devices it
// names. Real nodes use the spec NVIDIA's toolkit writes (kind nvidia.com/gpu, devices by UUID).
// Simulated GPUs get real character device nodes (NVIDIA's major number, 195) made here, and a
// spec of their own, so that a container on a machine without GPUs sees exactly its GPUs' nodes.
#pragma once

#include <string>
#include <vector>

#include "agent/gpu/gpu.h"
#include "common/error.h"

namespace allot::agent {

inline constexpr std::string_view kNvidiaCdiKind = "nvidia.com/gpu";
// "allot.sim/gpu-OWNER": each agent's simulated GPUs are a class of their own, so that two agents
// on one host (tests, demos) never name the same CDI device.
std::string simulated_cdi_kind(std::string_view owner);
inline constexpr unsigned kNvidiaDeviceMajor = 195;

// Makes `device_dir`/nvidiaN (char 195:N) for each GPU of index N and writes the spec
// `spec_dir`/allot-sim-OWNER.json naming each by UUID, of `kind`. kUnavailable when a node or the
// spec cannot be made (mknod needs root).
[[nodiscard]] Status write_simulated_cdi(const std::vector<GpuInfo>& gpus,
                                         const std::string& device_dir, const std::string& spec_dir,
                                         const std::string& kind, const std::string& owner);

// Where write_simulated_cdi puts the spec: the agent removes it when it stops (a restarted agent
// writes it again; running containers no longer need it).
std::string simulated_cdi_path(const std::string& spec_dir, const std::string& owner);

// What a CDI spec file says: its kind and its devices' names.
struct CdiSpec {
  std::string kind;
  std::vector<std::string> devices;
};
// Reads a spec in JSON or in the YAML that nvidia-ctk writes; empty when it is neither.
CdiSpec read_cdi_spec(const std::string& text);

// Whether a spec under one of `spec_dirs` declares kind nvidia.com/gpu and names every one of
// `uuids` as a device; kUnavailable says what is missing, for the operator.
[[nodiscard]] Status check_nvidia_cdi(const std::vector<std::string>& uuids,
                                      const std::vector<std::string>& spec_dirs);

// "KIND=UUID" for podman's --device.
std::string cdi_device(std::string_view kind, std::string_view uuid);

}  // namespace allot::agent
