#include "core/cluster/gpu_models.h"

#include <algorithm>
#include <array>
#include <vector>

#include "common/nearest.h"

namespace allot {
namespace {

constexpr std::array<std::string_view, 8> kModels = {
    "A100-40GB",  "A100-80GB", "H100-80GB", "H200-141GB",
    "B200-180GB", "L4-24GB",   "L40S-48GB", "RTX4090-24GB",
};

struct ModelPower {
  std::string_view model;
  GpuPowerW power;
};

// Idle draw as measured on such boards with nothing running, and busy draw at the board's power
// limit.
constexpr std::array<ModelPower, 8> kPower = {{
    {"A100-40GB", {50, 400}},
    {"A100-80GB", {60, 400}},
    {"H100-80GB", {80, 700}},
    {"H200-141GB", {80, 700}},
    {"B200-180GB", {120, 1'000}},
    {"L4-24GB", {15, 72}},
    {"L40S-48GB", {40, 350}},
    {"RTX4090-24GB", {25, 450}},
}};

}  // namespace

GpuPowerW gpu_power_w(std::string_view model) {
  for (const ModelPower& p : kPower) {
    if (p.model == model) return p.power;
  }
  return {80, 700};
}

std::span<const std::string_view> catalog_gpu_models() { return kModels; }

bool gpu_model_matches(std::string_view requested, std::string_view gpu_model) {
  return gpu_model == requested ||
         (gpu_model.size() > requested.size() && gpu_model.starts_with(requested) &&
          gpu_model[requested.size()] == '-');
}

namespace {

// Every name a request may use: each family ("H100"), then each catalog model ("H100-80GB").
std::vector<std::string> known_names() {
  std::vector<std::string> names;
  for (std::string_view model : kModels) {
    const std::string family(model.substr(0, model.find('-')));
    if (std::find(names.begin(), names.end(), family) == names.end()) names.push_back(family);
  }
  for (std::string_view model : kModels) names.emplace_back(model);
  return names;
}

}  // namespace

std::optional<std::string> canonical_gpu_model(std::string_view model_or_family) {
  for (const std::string& name : known_names()) {
    if (equals_ignoring_case(name, model_or_family)) {
      return name;
    }
  }
  return std::nullopt;
}

std::string nearest_gpu_model(std::string_view unknown) { return nearest(unknown, known_names()); }

bool is_catalog_gpu_model(std::string_view model) {
  for (std::string_view known : kModels) {
    if (known == model) return true;
  }
  return false;
}

bool is_known_gpu_model(std::string_view model_or_family) {
  for (std::string_view model : kModels) {
    if (gpu_model_matches(model_or_family, model)) return true;
  }
  return false;
}

}  // namespace allot
