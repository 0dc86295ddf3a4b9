#include "agent/gpu/gpu.h"

#include <algorithm>
#include <string>
#include <vector>

#include "common/gpu_catalog.h"

namespace allot::agent {
namespace {

// A reported size within 10% of a catalog size is that size: drivers and board variants (SXM,
// PCIe) differ by a few hundred MiB, while the next size of a family is far more than 10% away.
int64_t abs_diff(int64_t a, int64_t b) { return a > b ? a - b : b - a; }

bool memory_fits(int64_t reported_bytes, int64_t catalog_bytes) {
  return abs_diff(reported_bytes, catalog_bytes) <= catalog_bytes / 10;
}

std::vector<std::string_view> split_name(std::string_view name) {
  std::vector<std::string_view> tokens;
  size_t start = 0;
  for (size_t i = 0; i <= name.size(); ++i) {
    if (i == name.size() || name[i] == ' ' || name[i] == '-' || name[i] == '_') {
      if (i > start) tokens.push_back(name.substr(start, i - start));
      start = i + 1;
    }
  }
  return tokens;
}

// The family a driver name belongs to, or "" when no token names one. Whole tokens are compared,
// so "L40S" is not taken for "L4" and "GH200" not for "H200".
std::string family_of(std::string_view name) {
  const std::vector<std::string_view> tokens = split_name(name);
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::string token(tokens[i]);
    // GeForce boards are named "GeForce RTX 4090": the family spans two tokens.
    if (token == "RTX" && i + 1 < tokens.size()) token += tokens[i + 1];
    for (const GpuModelSpec& model : gpu_catalog()) {
      if (token == model.family) return token;
    }
  }
  return "";
}

}  // namespace

std::string canonical_model(std::string_view name, int64_t memory_bytes) {
  const std::string family = family_of(name);
  if (family.empty() || memory_bytes <= 0) return "";
  const GpuModelSpec* best = nullptr;
  int64_t best_diff = 0;
  for (const GpuModelSpec& model : gpu_catalog()) {
    if (model.family != family || !memory_fits(memory_bytes, model.memory_bytes)) continue;
    const int64_t diff = abs_diff(memory_bytes, model.memory_bytes);
    if (best == nullptr || diff < best_diff) {
      best = &model;
      best_diff = diff;
    }
  }
  return best == nullptr ? "" : std::string(best->model);
}

int64_t EnergyAccumulator::add_reading(int64_t raw_mj) {
  raw_mj = std::max<int64_t>(raw_mj, 0);
  if (!started_) {
    started_ = true;
  } else if (raw_mj >= last_raw_mj_) {
    total_mj_ += raw_mj - last_raw_mj_;
  } else {
    // The counter went back: the driver reloaded and counts from zero again, so all of the new
    // reading is energy spent since the restart. What was spent between the last reading and the
    // reload is lost; nothing can recover it.
    total_mj_ += raw_mj;
  }
  last_raw_mj_ = raw_mj;
  return total_mj_;
}

}  // namespace allot::agent
