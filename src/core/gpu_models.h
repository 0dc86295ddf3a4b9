// The GPU models Allot knows, by catalog name ("H100-80GB") and family ("H100"). Requests may
// name either; a GPU matches a requested family when its model starts with "FAMILY-".
#pragma once

#include <string_view>

namespace allot {

bool is_known_gpu_model(std::string_view model_or_family);
// A full catalog name ("H100-80GB"), not a family.
bool is_catalog_gpu_model(std::string_view model);
bool gpu_model_matches(std::string_view requested, std::string_view gpu_model);

}  // namespace allot
