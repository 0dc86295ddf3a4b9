#include "api/log_store.h"

#include <fstream>

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
