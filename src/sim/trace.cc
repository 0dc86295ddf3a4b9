#include "sim/trace.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include <fmt/format.h>

namespace allot::sim {
namespace {

// The pod list is about 0.6 MB; a gigabyte means the wrong file, not a bigger trace.
constexpr std::streamsize kMaxFileBytes = std::streamsize{1} << 30;

std::unexpected<Error> invalid(std::string message) {
  return fail(ErrorCode::kInvalidArgument, std::move(message));
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t at = text.find(separator); at != std::string_view::npos;
       at = text.find(separator, start)) {
    parts.push_back(text.substr(start, at - start));
    start = at + 1;
  }
  parts.push_back(text.substr(start));
  return parts;
}

// One data row with its line number, read by column name so that errors can say exactly where.
class Row {
 public:
  Row(std::string_view file, size_t line, const std::map<std::string, size_t, std::less<>>& header,
      std::vector<std::string_view> fields)
      : file_(file), line_(line), header_(header), fields_(std::move(fields)) {}

  size_t line() const { return line_; }

  // The field's text; empty when the column is absent (callers check required columns first).
  std::string_view text(std::string_view column) const {
    const auto it = header_.find(column);
    return it == header_.end() ? std::string_view{} : fields_[it->second];
  }

  // A whole number from 0 to `max`.
  Result<int64_t> number(std::string_view column, int64_t max) const {
    const std::string_view field = text(column);
    int64_t value = 0;
    const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
    if (field.empty() || error != std::errc() || end != field.data() + field.size() || value < 0 ||
        value > max) {
      return this->error(
          column, fmt::format("bad number '{}' (want a whole number from 0 to {})", field, max));
    }
    return value;
  }

  std::unexpected<Error> error(std::string_view column, std::string_view why) const {
    return invalid(fmt::format("{}:{}: field '{}': {}", file_, line_, column, why));
  }

 private:
  std::string_view file_;
  size_t line_;
  const std::map<std::string, size_t, std::less<>>& header_;
  std::vector<std::string_view> fields_;
};

// Calls `visit` on each data row of a headed CSV file (no quoting: the trace has none). Blank
// lines are skipped; a row with fewer fields than the header names the first one it lacks.
template <typename Visit>
Status for_each_row(std::string_view text, std::string_view file,
                    const std::vector<std::string_view>& required, Visit&& visit) {
  std::vector<std::string_view> lines = split(text, '\n');
  for (std::string_view& line : lines) {
    if (line.ends_with('\r')) line.remove_suffix(1);
  }
  if (lines.empty() || lines.front().empty()) return invalid(fmt::format("{}:1: no header", file));
  if (lines.size() > kMaxRows + 1) {
    return invalid(fmt::format("{}: over {} rows", file, kMaxRows));
  }
  std::map<std::string, size_t, std::less<>> header;
  const std::vector<std::string_view> names = split(lines.front(), ',');
  for (size_t i = 0; i < names.size(); ++i) {
    if (!header.emplace(std::string(names[i]), i).second) {
      return invalid(fmt::format("{}:1: field '{}': named twice in the header", file, names[i]));
    }
  }
  for (std::string_view column : required) {
    if (!header.contains(column)) {
      return invalid(fmt::format("{}:1: field '{}': missing from the header", file, column));
    }
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    std::vector<std::string_view> fields = split(lines[i], ',');
    if (fields.size() < names.size()) {
      return invalid(fmt::format("{}:{}: field '{}': missing ({} fields, the header has {})", file,
                                 i + 1, names[fields.size()], fields.size(), names.size()));
    }
    if (fields.size() > names.size()) {
      return invalid(fmt::format("{}:{}: {} fields, the header has {}", file, i + 1, fields.size(),
                                 names.size()));
    }
    if (Status status = visit(Row(file, i + 1, header, std::move(fields))); !status) {
      return status;
    }
  }
  return {};
}

// The cpu_milli and memory_mib fields that nodes and pods both have.
struct CpuMemory {
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
};

Result<CpuMemory> cpu_memory_of(const Row& row) {
  const int64_t max = std::numeric_limits<int64_t>::max() / 2;
  Result<int64_t> cpu = row.number("cpu_milli", max);
  if (!cpu) return std::unexpected(cpu.error());
  Result<int64_t> memory = row.number("memory_mib", max);
  if (!memory) return std::unexpected(memory.error());
  return CpuMemory{.cpu_milli = *cpu, .memory_mib = *memory};
}

Result<sched::NodeView> node_of(const Row& row) {
  sched::NodeView node;
  node.id = std::string(row.text("sn"));
  if (node.id.empty()) return row.error("sn", "empty");
  Result<CpuMemory> size = cpu_memory_of(row);
  if (!size) return std::unexpected(size.error());
  Result<int64_t> gpus = row.number("gpu", kMaxGpusPerNode);
  if (!gpus) return std::unexpected(gpus.error());
  const std::string model(row.text("model"));
  if (*gpus > 0 && model.empty()) return row.error("model", "empty on a node with GPUs");
  node.cpu_milli = node.free_cpu_milli = size->cpu_milli;
  node.memory_mib = node.free_memory_mib = size->memory_mib;
  for (int i = 0; i < *gpus; ++i) {
    node.gpus.push_back(sched::GpuSlot{.index = i, .model = model});
  }
  return node;
}

// The allowed models of a gpu_spec field, each once, in the order given. With no
// `known_models` (nullptr) any model name is taken as written.
Result<std::vector<std::string>> models_of_spec(const Row& row,
                                                const std::set<std::string>* known_models) {
  std::vector<std::string> models;
  const std::string_view spec = row.text("gpu_spec");
  if (spec.empty()) return models;
  for (std::string_view model : split(spec, '|')) {
    if (model.empty()) return row.error("gpu_spec", fmt::format("empty model in '{}'", spec));
    if (known_models != nullptr && !known_models->contains(std::string(model))) {
      return row.error("gpu_spec", fmt::format("model '{}' is on no node", model));
    }
    // The trace repeats models ("V100M16|V100M32|V100M32"); once is enough.
    if (std::find(models.begin(), models.end(), model) == models.end()) models.emplace_back(model);
  }
  return models;
}

Result<sched::Request> request_of(const Row& row, const std::set<std::string>* known_models) {
  sched::Request request;
  Result<CpuMemory> size = cpu_memory_of(row);
  if (!size) return std::unexpected(size.error());
  Result<int64_t> num_gpu = row.number("num_gpu", kMaxGpusPerPod);
  if (!num_gpu) return std::unexpected(num_gpu.error());
  Result<int64_t> gpu_milli = row.number("gpu_milli", 1000);
  if (!gpu_milli) return std::unexpected(gpu_milli.error());
  Result<std::vector<std::string>> models = models_of_spec(row, known_models);
  if (!models) return std::unexpected(models.error());
  // A share on a pod without GPUs, or a GPU pod that asks for nothing, is a contradiction the
  // trace never contains; accepting either would make the GPU milli sums disagree with placement.
  if (*num_gpu == 0 && *gpu_milli != 0) return row.error("gpu_milli", "not 0 with num_gpu 0");
  if (*num_gpu > 0 && *gpu_milli == 0) return row.error("gpu_milli", "0 on a GPU pod");
  request.cpu_milli = size->cpu_milli;
  request.memory_mib = size->memory_mib;
  if (*num_gpu == 1 && *gpu_milli < 1000) {
    request.gpu_milli = static_cast<int>(*gpu_milli);
  } else {
    request.gpus = static_cast<int>(*num_gpu);
  }
  // A CPU-only pod uses no GPU, so a model constraint on it would only wrongly narrow its nodes.
  if (*num_gpu > 0) request.models = std::move(*models);
  return request;
}

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return invalid(fmt::format("{}: cannot open", path));
  // Checked before reading, so that a wrong path to a huge file fails fast instead of filling
  // memory (a pipe or /dev/null reports no size and is read as it comes).
  in.seekg(0, std::ios::end);
  if (in && in.tellg() > kMaxFileBytes) {
    return invalid(fmt::format("{}: over {} bytes", path, kMaxFileBytes));
  }
  in.clear();
  in.seekg(0, std::ios::beg);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return invalid(fmt::format("{}: read failed", path));
  return std::move(text).str();
}

}  // namespace

Result<std::vector<sched::NodeView>> parse_nodes(std::string_view text, std::string_view file) {
  std::vector<sched::NodeView> nodes;
  std::map<std::string, size_t, std::less<>> lines_by_id;
  Status status = for_each_row(
      text, file, {"sn", "cpu_milli", "memory_mib", "gpu", "model"}, [&](const Row& row) -> Status {
        Result<sched::NodeView> node = node_of(row);
        if (!node) return std::unexpected(node.error());
        if (auto [it, fresh] = lines_by_id.emplace(node->id, row.line()); !fresh) {
          return row.error("sn", fmt::format("'{}' also on line {}", node->id, it->second));
        }
        nodes.push_back(std::move(*node));
        return {};
      });
  if (!status) return std::unexpected(status.error());
  return nodes;
}

Result<std::vector<sched::Request>> parse_pods(std::string_view text, std::string_view file,
                                               const std::set<std::string>& known_models) {
  std::vector<sched::Request> pods;
  Status status = for_each_row(text, file, {"cpu_milli", "memory_mib", "num_gpu", "gpu_milli"},
                               [&](const Row& row) -> Status {
                                 Result<sched::Request> pod = request_of(row, &known_models);
                                 if (!pod) return std::unexpected(pod.error());
                                 pods.push_back(std::move(*pod));
                                 return {};
                               });
  if (!status) return std::unexpected(status.error());
  return pods;
}

Result<std::vector<TimedPod>> parse_timed_pods(std::string_view text, std::string_view file) {
  std::vector<TimedPod> pods;
  const int64_t max = std::numeric_limits<int64_t>::max() / 2;
  Status status = for_each_row(
      text, file,
      {"cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "creation_time", "deletion_time"},
      [&](const Row& row) -> Status {
        Result<sched::Request> request = request_of(row, nullptr);
        if (!request) return std::unexpected(request.error());
        Result<int64_t> created = row.number("creation_time", max);
        if (!created) return std::unexpected(created.error());
        Result<int64_t> deleted = row.number("deletion_time", max);
        if (!deleted) return std::unexpected(deleted.error());
        if (*deleted < *created) {
          return row.error("deletion_time",
                           fmt::format("{} is before creation_time {}", *deleted, *created));
        }
        pods.push_back(TimedPod{std::move(*request), *created, *deleted});
        return {};
      });
  if (!status) return std::unexpected(status.error());
  return pods;
}

Result<std::vector<sched::NodeView>> read_nodes(const std::string& path) {
  Result<std::string> text = read_file(path);
  if (!text) return std::unexpected(text.error());
  return parse_nodes(*text, path);
}

Result<std::vector<sched::Request>> read_pods(const std::string& path,
                                              const std::set<std::string>& known_models) {
  Result<std::string> text = read_file(path);
  if (!text) return std::unexpected(text.error());
  return parse_pods(*text, path, known_models);
}

Result<std::vector<TimedPod>> read_timed_pods(const std::string& path) {
  Result<std::string> text = read_file(path);
  if (!text) return std::unexpected(text.error());
  return parse_timed_pods(*text, path);
}

std::set<std::string> models_of(const std::vector<sched::NodeView>& nodes) {
  std::set<std::string> models;
  for (const sched::NodeView& node : nodes) {
    for (const sched::GpuSlot& gpu : node.gpus) models.insert(gpu.model);
  }
  return models;
}

int64_t gpu_milli_of(const sched::Request& request) {
  return int64_t{request.gpus} * 1000 + request.gpu_milli;
}

}  // namespace allot::sim
