// Readers for the Alibaba openb trace (see shared/data/README.md): the node list becomes the
// scheduler's NodeViews, the pod list its Requests. Every malformed input is rejected, never
// guessed at, because a silently skipped row would change what the experiment measures.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "sched/sched.h"

namespace allot::sim {

// Upper bounds that keep a corrupt file from asking for absurd amounts of memory or overflowing
// the GPU milli sums; the real trace is far below each (8 GPUs a node and a pod, ~10k pods).
inline constexpr int kMaxGpusPerNode = 1024;
inline constexpr int kMaxGpusPerPod = 1024;
inline constexpr size_t kMaxRows = 10'000'000;

// Parses `sn,cpu_milli,memory_mib,gpu,model` (columns in any order, extra ones ignored). Each
// node gets `gpu` whole free GPUs of `model`, free CPU and memory equal to its capacity, and no
// region. `file` names the input in error messages, which read "FILE:LINE: field 'NAME': why".
[[nodiscard]] Result<std::vector<sched::NodeView>> parse_nodes(std::string_view text,
                                                               std::string_view file);

// Parses the pod list: cpu_milli, memory_mib, num_gpu and gpu_milli are required; gpu_spec
// (a `|`-separated list of models, empty for any) is optional because the multigpu30 trace omits
// it. num_gpu == 1 with gpu_milli < 1000 is a share of one GPU, num_gpu >= 1 otherwise whole GPUs,
// num_gpu == 0 CPU only. A model in gpu_spec that is not in `known_models` is an error, since
// such a pod could never be placed and would only inflate the unallocated share.
[[nodiscard]] Result<std::vector<sched::Request>> parse_pods(
    std::string_view text, std::string_view file, const std::set<std::string>& known_models);

// A pod of the trace with the span of seconds it lived, for demand over time.
struct TimedPod {
  sched::Request request;
  int64_t creation_s = 0;
  int64_t deletion_s = 0;  // Not before creation_s.
};

// Parses the pod list as parse_pods does, and creation_time and deletion_time as well (both
// required, in seconds; the multigpu30 trace has neither and is refused). Models in gpu_spec are
// taken as written: demand for a model is worth counting even where no node has it.
[[nodiscard]] Result<std::vector<TimedPod>> parse_timed_pods(std::string_view text,
                                                             std::string_view file);

// The same, reading the file at `path` (named in errors as given).
[[nodiscard]] Result<std::vector<sched::NodeView>> read_nodes(const std::string& path);
[[nodiscard]] Result<std::vector<sched::Request>> read_pods(
    const std::string& path, const std::set<std::string>& known_models);
[[nodiscard]] Result<std::vector<TimedPod>> read_timed_pods(const std::string& path);

// Every GPU model present on some node.
std::set<std::string> models_of(const std::vector<sched::NodeView>& nodes);

// GPU milli a request asks for: whole GPUs count 1000 each.
int64_t gpu_milli_of(const sched::Request& request);

}  // namespace allot::sim
