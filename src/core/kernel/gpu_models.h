// The GPU models Allot knows (common/gpu_catalog.h), by catalog name ("H100-80GB") and family
// ("H100"), as requests name them. Requests may name either; a GPU matches a requested family when
// its model starts with "FAMILY-".
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace allot {

bool is_known_gpu_model(std::string_view model_or_family);
// Every catalog name, e.g. "H100-80GB".
std::span<const std::string_view> catalog_gpu_models();
// A full catalog name ("H100-80GB"), not a family.
bool is_catalog_gpu_model(std::string_view model);
bool gpu_model_matches(std::string_view requested, std::string_view gpu_model);

// The model or family as Allot spells it, whatever the case the request used ("h100" is "H100",
// "h100-80gb" is "H100-80GB"); nullopt when Allot knows no such model or family.
std::optional<std::string> canonical_gpu_model(std::string_view model_or_family);
// The known model or family nearest to one Allot does not know ("H10" is near "H100"), or "" when
// none is near enough to be what was meant.
std::string nearest_gpu_model(std::string_view unknown);

// A board's usual draw in watts: idle with nothing running, and busy at its power limit (its
// TDP), which is what sustained training draws.
struct GpuPowerW {
  int64_t idle_w = 0;
  int64_t busy_w = 0;
};
// The catalog model's draw (common/gpu_catalog.h); a model outside the catalog draws what an H100
// does, the most common board, rather than nothing.
GpuPowerW gpu_power_w(std::string_view model);

}  // namespace allot
