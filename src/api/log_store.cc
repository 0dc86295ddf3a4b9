#include "api/log_store.h"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/limits.h"

namespace allot {

Result<int64_t> LogStore::size(const std::string& instance_id) {
  if (auto it = sizes_.find(instance_id); it != sizes_.end()) return it->second;
  auto held = store_.log_size(instance_id);
  if (!held) return std::unexpected(held.error());
  sizes_.emplace(instance_id, *held);
  return *held;
}

Result<std::optional<LogPiece>> LogStore::accept(const std::string& instance_id, int64_t offset,
                                                 std::string_view data, bool after_drop) {
  auto held = size(instance_id);
  if (!held) return std::unexpected(held.error());
  if (after_drop && offset > *held && !data.empty()) held = offset;
  if (offset < 0 || offset > *held) {
    return fail(ErrorCode::kConflict,
                fmt::format("log chunk at {} leaves a gap after {} bytes", offset, *held));
  }
  const int64_t skip = *held - offset;
  if (skip >= static_cast<int64_t>(data.size())) return std::nullopt;
  LogPiece piece{.instance_id = instance_id,
                 .offset = *held,
                 .data = std::string(data.substr(static_cast<size_t>(skip)))};
  sizes_[instance_id] = *held + static_cast<int64_t>(piece.data.size());
  pending_[instance_id].push_back(piece);
  return piece;
}

Result<LogChunk> LogStore::read(const std::string& instance_id, int64_t offset, int64_t limit) {
  auto chunk = read_held(instance_id, offset, limit);
  if (!chunk || !chunk->data.empty() || offset >= chunk->size || limit <= 0) return chunk;
  // Nothing at `offset`, yet the output goes on: a hole. The read goes on from its end.
  auto next = store_.next_log_start(instance_id, offset);
  if (!next) return std::unexpected(next.error());
  std::optional<int64_t> from = *next;
  if (auto it = pending_.find(instance_id); it != pending_.end()) {
    for (const LogPiece& piece : it->second) {
      if (piece.offset >= offset && (!from || piece.offset < *from)) from = piece.offset;
    }
  }
  if (!from || *from <= offset) return chunk;
  auto after = read_held(instance_id, *from, limit);
  if (after) after->dropped = *from - offset;
  return after;
}

Result<LogChunk> LogStore::read_held(const std::string& instance_id, int64_t offset,
                                     int64_t limit) {
  auto held = size(instance_id);
  if (!held) return std::unexpected(held.error());
  LogChunk chunk{.offset = offset, .size = *held};
  if (offset >= chunk.size || limit <= 0) return chunk;
  const int64_t end = std::min(chunk.size, offset + limit);
  auto pieces = store_.read_log(instance_id, offset, end);
  if (!pieces) return std::unexpected(pieces.error());
  if (auto it = pending_.find(instance_id); it != pending_.end()) {
    pieces->insert(pieces->end(), it->second.begin(), it->second.end());
  }
  for (const LogPiece& piece : *pieces) {
    // Each piece starts where the one before it ended; cut the first and last to [offset, end).
    const int64_t from = std::max(offset, piece.offset);
    const int64_t to = std::min(end, piece.offset + static_cast<int64_t>(piece.data.size()));
    if (from < to && from == offset + static_cast<int64_t>(chunk.data.size())) {
      chunk.data.append(piece.data, static_cast<size_t>(from - piece.offset),
                        static_cast<size_t>(to - from));
    }
  }
  return chunk;
}

Result<LogChunk> LogStore::tail(const std::string& instance_id, int lines, int64_t limit) {
  auto held = size(instance_id);
  if (!held) return std::unexpected(held.error());
  const int64_t start = std::max<int64_t>(0, *held - limit);
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

// Before logs moved into the store, each instance's output was a file, INSTANCE.log, in
// data_dir/logs. Each is taken in once, as pieces of a chunk's size, unless the store already
// holds output of that instance; the folder is then renamed so that it is not read again.
Status import_log_files(Store& store, const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return {};
  int imported = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.ends_with(".log")) continue;
    const std::string id = name.substr(0, name.size() - 4);
    auto held = store.log_size(id);
    if (!held) return std::unexpected(held.error());
    if (*held > 0) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::string piece(limits::kMaxLogChunkBytes, '\0');
    int64_t offset = 0;
    Batch batch;
    for (;;) {
      in.read(piece.data(), static_cast<std::streamsize>(piece.size()));
      const auto got = static_cast<size_t>(in.gcount());
      if (got > 0) {
        batch.logs.push_back(
            LogPiece{.instance_id = id, .offset = offset, .data = piece.substr(0, got)});
        offset += static_cast<int64_t>(got);
      }
      // A few MiB per transaction.
      if (batch.logs.size() >= 64 || (got == 0 && !batch.logs.empty())) {
        if (auto ok = store.commit(batch); !ok) return ok;
        batch.logs.clear();
      }
      if (got == 0) break;
    }
    ++imported;
  }
  std::filesystem::path done = dir;
  done += ".imported";
  std::filesystem::rename(dir, done, ec);
  spdlog::info("msg=\"instance logs taken into the store\" instances={} from=\"{}\"", imported,
               dir.string());
  return {};
}

}  // namespace allot
