// Resamples of a pod trace with a different mix of work, for checking that a placement policy's
// results carry over to workloads it was not tuned on (the way the openb traces gpushare40,
// multigpu30 and gpuspec33 are resamples of the default one). Deterministic for a seed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "sched/sched.h"

namespace allot::sim {

// The GPU pods' mix, each in percent of GPU pods; unset keeps the trace's own share. Kinds: a share
// of one GPU, one whole GPU, several whole GPUs (one whole GPU takes what share and multi leave).
// Constrained pods name GPU models; the kind and the constraint are drawn independently.
struct Mix {
  std::optional<double> share_pct;
  std::optional<double> multi_pct;
  std::optional<double> constrained_pct;
  // Every pod's CPU request, GPU pods and CPU-only pods alike, times this (rounded to whole milli,
  // at least 1 where it asked for any): CPU-bound mixes, where the nodes' CPU runs out before their
  // GPUs do.
  double cpu_scale = 1.0;
};

// As many pods as `trace` holds, drawn with replacement: each is CPU-only with the trace's
// CPU-only share, drawn from the trace's CPU-only pods; otherwise its kind and constraint are drawn
// by `mix` and it is drawn from the trace's GPU pods of that kind and constraint; then its CPU is
// scaled. Fails with kInvalidArgument when a percentage is outside 0..100, share and multi pass 100
// together, the CPU scale is not in (0, 10], or the mix asks for a kind and constraint of which the
// trace has no pod.
[[nodiscard]] Result<std::vector<sched::Request>> resample(const std::vector<sched::Request>& trace,
                                                           const Mix& mix, uint64_t seed);

// The pods as a pod list CSV that read_pods takes back: name,cpu_milli,memory_mib,num_gpu,
// gpu_milli,gpu_spec, names "resample-0000" on.
std::string pods_csv(const std::vector<sched::Request>& pods);

}  // namespace allot::sim
