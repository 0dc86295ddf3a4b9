// The request fields that say what GPUs a request asks for and where it may and would rather run,
// read the same way by POST /v1/instances and POST /v1/quote.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/request.h"
#include "core/model/cluster.h"

namespace allot {

struct PlacementFields {
  std::optional<int64_t> gpus;
  std::optional<int64_t> gpu_milli;
  std::optional<std::vector<std::string>> gpu_models;
  std::optional<std::string> price_class;
  std::optional<std::string> max_price;
  std::optional<std::vector<std::string>> regions;
  std::optional<std::string> prefer;
  std::optional<std::string> from;
};

// Reads gpus, gpu_milli, gpu_models, price_class, max_price, regions, prefer and from; errors
// come out of body.finish().
PlacementFields read_placement_fields(JsonBody& body);

// Puts the fields into `spec` (one whole GPU when neither gpus nor gpu_milli is given). Fails
// with kInvalidArgument on an unknown price class or preference and a malformed amount; the core
// checks the rest.
[[nodiscard]] Status apply_placement_fields(const PlacementFields& fields, InstanceSpec& spec);

}  // namespace allot
