#include "sim/resample.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "sim/replay.h"

namespace allot::sim {
namespace {

constexpr double kMaxCpuScale = 10;

enum Kind : size_t { kShare = 0, kOne = 1, kMulti = 2, kKinds = 3 };
constexpr std::array<std::string_view, kKinds> kKindNames = {"share", "one-GPU", "multi-GPU"};

Kind kind_of(const sched::Request& pod) {
  if (pod.gpus > 1) return kMulti;
  return pod.gpus == 1 ? kOne : kShare;
}

bool is_gpu(const sched::Request& pod) { return pod.gpus > 0 || pod.gpu_milli > 0; }

// A uniform draw from [0, 1) with 53 random bits, the same on every standard library.
double draw_unit(std::mt19937_64& rng) {
  constexpr uint64_t kBits = uint64_t{1} << 53;
  return static_cast<double>(draw_below(rng, kBits)) / static_cast<double>(kBits);
}

// Index of the weight that `u` in [0, sum of weights) falls in.
size_t pick(const std::array<double, kKinds>& weights, double u) {
  for (size_t k = 0; k + 1 < weights.size(); ++k) {
    if (u < weights[k]) return k;
    u -= weights[k];
  }
  return weights.size() - 1;
}

Status check_pct(const std::optional<double>& pct, std::string_view name) {
  if (!pct || (*pct >= 0 && *pct <= 100)) return {};
  return fail(ErrorCode::kInvalidArgument,
              fmt::format("--{} {}: want a percentage from 0 to 100", name, *pct));
}

// Pods of the trace by kind and by constraint (0: any model, 1: names models), as indices.
struct Pools {
  std::vector<size_t> cpu;
  std::array<std::array<std::vector<size_t>, 2>, kKinds> gpu;
  size_t gpu_pods = 0;
  size_t constrained = 0;

  explicit Pools(const std::vector<sched::Request>& trace) {
    for (size_t i = 0; i < trace.size(); ++i) {
      const sched::Request& pod = trace[i];
      if (!is_gpu(pod)) {
        cpu.push_back(i);
        continue;
      }
      const size_t named = pod.models.empty() ? 0 : 1;
      gpu[kind_of(pod)][named].push_back(i);
      ++gpu_pods;
      constrained += named;
    }
  }

  size_t count(size_t kind) const { return gpu[kind][0].size() + gpu[kind][1].size(); }
};

// The kind of pod the trace lacks to draw `kind` pods under `mix`, in words; empty if none.
std::string lacking(const Pools& pools, size_t kind, const Mix& mix) {
  if (!mix.constrained_pct) return pools.count(kind) == 0 ? std::string(kKindNames[kind]) : "";
  const double constrained = *mix.constrained_pct / 100.0;
  if (constrained < 1 && pools.gpu[kind][0].empty()) {
    return fmt::format("unconstrained {}", kKindNames[kind]);
  }
  if (constrained > 0 && pools.gpu[kind][1].empty()) {
    return fmt::format("model-constrained {}", kKindNames[kind]);
  }
  return "";
}

}  // namespace

Result<std::vector<sched::Request>> resample(const std::vector<sched::Request>& trace,
                                             const Mix& mix, uint64_t seed) {
  for (const auto& [pct, name] :
       {std::pair{mix.share_pct, "share"}, std::pair{mix.multi_pct, "multi"},
        std::pair{mix.constrained_pct, "constrained"}}) {
    if (Status status = check_pct(pct, name); !status) return std::unexpected(status.error());
  }
  if (!(mix.cpu_scale > 0 && mix.cpu_scale <= kMaxCpuScale)) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("--cpu-scale {}: want a factor above 0 and at most {}", mix.cpu_scale,
                            kMaxCpuScale));
  }
  const Pools pools(trace);
  if (pools.gpu_pods == 0) return fail(ErrorCode::kInvalidArgument, "the trace has no GPU pods");
  const auto trace_pct = [&](size_t kind) {
    return 100.0 * static_cast<double>(pools.count(kind)) / static_cast<double>(pools.gpu_pods);
  };
  std::array<double, kKinds> weights{};
  weights[kShare] = mix.share_pct.value_or(trace_pct(kShare));
  weights[kMulti] = mix.multi_pct.value_or(trace_pct(kMulti));
  weights[kOne] = 100.0 - weights[kShare] - weights[kMulti];
  if (weights[kOne] < -1e-9) {
    return fail(ErrorCode::kInvalidArgument, fmt::format("share {} % and multi {} % pass 100 %",
                                                         weights[kShare], weights[kMulti]));
  }
  weights[kOne] = std::max(0.0, weights[kOne]);
  for (size_t kind = 0; kind < kKinds; ++kind) {
    if (std::string what = lacking(pools, kind, mix); weights[kind] > 0 && !what.empty()) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("the trace has no {} pods to draw from", what));
    }
  }
  const double constrained = mix.constrained_pct.value_or(0) / 100.0;
  std::mt19937_64 rng(seed);
  const double cpu_share =
      static_cast<double>(pools.cpu.size()) / static_cast<double>(trace.size());
  std::vector<sched::Request> out;
  out.reserve(trace.size());
  for (size_t i = 0; i < trace.size(); ++i) {
    if (draw_unit(rng) < cpu_share) {
      out.push_back(trace[pools.cpu[draw_below(rng, pools.cpu.size())]]);
      continue;
    }
    const size_t kind = pick(weights, draw_unit(rng) * 100.0);
    if (!mix.constrained_pct) {
      // Any constraint, as often as the trace has it for this kind.
      const std::vector<size_t>& any = pools.gpu[kind][0];
      const std::vector<size_t>& named = pools.gpu[kind][1];
      const size_t at = draw_below(rng, any.size() + named.size());
      out.push_back(trace[at < any.size() ? any[at] : named[at - any.size()]]);
      continue;
    }
    const std::vector<size_t>& pool = pools.gpu[kind][draw_unit(rng) < constrained ? 1 : 0];
    out.push_back(trace[pool[draw_below(rng, pool.size())]]);
  }
  if (mix.cpu_scale != 1.0) {
    for (sched::Request& pod : out) {
      if (pod.cpu_milli == 0) continue;
      pod.cpu_milli =
          std::max<int64_t>(1, std::llround(static_cast<double>(pod.cpu_milli) * mix.cpu_scale));
    }
  }
  return out;
}

std::string pods_csv(const std::vector<sched::Request>& pods) {
  std::string text = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n";
  for (size_t i = 0; i < pods.size(); ++i) {
    const sched::Request& pod = pods[i];
    const int num_gpu = pod.gpus > 0 ? pod.gpus : (pod.gpu_milli > 0 ? 1 : 0);
    const int gpu_milli = pod.gpus > 0 ? 1000 : pod.gpu_milli;
    std::string spec;
    for (const std::string& model : pod.models) spec += (spec.empty() ? "" : "|") + model;
    text += fmt::format("resample-{:04d},{},{},{},{},{}\n", i, pod.cpu_milli, pod.memory_mib,
                        num_gpu, gpu_milli, spec);
  }
  return text;
}

}  // namespace allot::sim
