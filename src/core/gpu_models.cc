#include "core/gpu_models.h"

#include <array>

namespace allot {
namespace {

constexpr std::array<std::string_view, 8> kModels = {
    "A100-40GB",  "A100-80GB", "H100-80GB", "H200-141GB",
    "B200-180GB", "L4-24GB",   "L40S-48GB", "RTX4090-24GB",
};

}  // namespace

bool gpu_model_matches(std::string_view requested, std::string_view gpu_model) {
  return gpu_model == requested ||
         (gpu_model.size() > requested.size() && gpu_model.starts_with(requested) &&
          gpu_model[requested.size()] == '-');
}

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
