#include "api/log_store.h"

#include <fstream>
#include <limits>

#include <fmt/format.h>

namespace allot {

std::filesystem::path LogStore::path(const std::string& instance_id) const {
  return dir_ / (instance_id + ".log");
}

int64_t LogStore::size(const std::string& instance_id) const {
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(path(instance_id), ec);
  return ec ? 0 : static_cast<int64_t>(bytes);
}

Status LogStore::append(const std::string& instance_id, int64_t offset, std::string_view data) {
  const int64_t held = size(instance_id);
  if (offset > held) {
    return fail(ErrorCode::kConflict,
                fmt::format("log chunk at {} leaves a gap after {} bytes", offset, held));
  }
  const int64_t skip = held - offset;
  if (skip >= static_cast<int64_t>(data.size())) return {};
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  std::ofstream out(path(instance_id), std::ios::binary | std::ios::app);
  out.write(data.data() + skip, static_cast<std::streamsize>(data.size()) - skip);
  out.flush();
  if (!out) return fail(ErrorCode::kUnavailable, "cannot write the log file");
  return {};
}

LogStore::RunStart LogStore::run_start(const std::string& instance_id) const {
  RunStart start;
  std::ifstream in(dir_ / (instance_id + ".run"));
  if (!(in >> start.run >> start.base)) return RunStart{};
  return start;
}

Status LogStore::save_run_start(const std::string& instance_id, RunStart start) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  const auto final_path = dir_ / (instance_id + ".run");
  const auto temporary = dir_ / (instance_id + ".run.tmp");
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << start.run << ' ' << start.base << '\n';
    out.flush();
    if (!out) return fail(ErrorCode::kUnavailable, "cannot write the log's run file");
  }
  std::filesystem::rename(temporary, final_path, ec);
  if (ec) return fail(ErrorCode::kUnavailable, "cannot write the log's run file: " + ec.message());
  return {};
}

Status LogStore::append_run(const std::string& instance_id, int run, int64_t offset,
                            std::string_view data) {
  std::lock_guard lock(runs_);
  RunStart start = run_start(instance_id);
  if (run >= 0 && run < start.run) return {};
  if (run > start.run) {
    start = RunStart{.run = run, .base = size(instance_id)};
    if (auto saved = save_run_start(instance_id, start); !saved) return saved;
  }
  return append(instance_id, start.base + offset, data);
}

int64_t LogStore::run_size(const std::string& instance_id, int run) const {
  const RunStart start = run_start(instance_id);
  if (run < 0 || run == start.run) return size(instance_id) - start.base;
  if (run > start.run) return 0;
  return std::numeric_limits<int64_t>::max();
}

Result<LogChunk> LogStore::read(const std::string& instance_id, int64_t offset,
                                int64_t limit) const {
  LogChunk chunk{.offset = offset, .size = size(instance_id)};
  if (offset >= chunk.size) return chunk;
  std::ifstream in(path(instance_id), std::ios::binary);
  in.seekg(offset);
  chunk.data.resize(static_cast<size_t>(std::min(limit, chunk.size - offset)));
  in.read(chunk.data.data(), static_cast<std::streamsize>(chunk.data.size()));
  chunk.data.resize(static_cast<size_t>(in.gcount()));
  return chunk;
}

Result<LogChunk> LogStore::tail(const std::string& instance_id, int lines, int64_t limit) const {
  const int64_t held = size(instance_id);
  const int64_t start = std::max<int64_t>(0, held - limit);
  auto chunk = read(instance_id, start, limit);
  if (!chunk || lines <= 0) return chunk;
  // Keep the last `lines` lines (a final line without a newline counts).
  const std::string& data = chunk->data;
  size_t cut = data.size();
  if (cut > 0 && data[cut - 1] == '\n') --cut;
  for (int seen = 0; cut > 0; --cut) {
    if (data[cut - 1] == '\n' && ++seen == lines) break;
  }
  chunk->offset += static_cast<int64_t>(cut);
  chunk->data.erase(0, cut);
  return chunk;
}

}  // namespace allot
