#include "core/kernel/gpu_models.h"

#include <algorithm>
#include <vector>

#include "common/gpu_catalog.h"
#include "common/nearest.h"

namespace allot {
namespace {

// Every catalog name, in catalog order.
std::vector<std::string_view> catalog_names() {
  std::vector<std::string_view> names;
  for (const GpuModelSpec& spec : gpu_catalog()) names.push_back(spec.model);
  return names;
}

}  // namespace

GpuPowerW gpu_power_w(std::string_view model) {
  const GpuModelSpec* spec = find_gpu_model(model);
  if (spec == nullptr) spec = find_gpu_model("H100-80GB");
  return {spec->idle_power_mw / 1'000, spec->max_power_mw / 1'000};
}

std::span<const std::string_view> catalog_gpu_models() {
  static const std::vector<std::string_view> names = catalog_names();
  return names;
}

bool gpu_model_matches(std::string_view requested, std::string_view gpu_model) {
  return gpu_model == requested ||
         (gpu_model.size() > requested.size() && gpu_model.starts_with(requested) &&
          gpu_model[requested.size()] == '-');
}

namespace {

// Every name a request may use: each family ("H100"), then each catalog model ("H100-80GB").
std::vector<std::string> known_names() {
  std::vector<std::string> names;
  for (const GpuModelSpec& spec : gpu_catalog()) {
    if (std::find(names.begin(), names.end(), spec.family) == names.end()) {
      names.emplace_back(spec.family);
    }
  }
  for (std::string_view model : catalog_gpu_models()) names.emplace_back(model);
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

bool is_catalog_gpu_model(std::string_view model) { return find_gpu_model(model) != nullptr; }

bool is_known_gpu_model(std::string_view model_or_family) {
  for (std::string_view model : catalog_gpu_models()) {
    if (gpu_model_matches(model_or_family, model)) return true;
  }
  return false;
}

}  // namespace allot
