// Instances' output, as the agents ship it, kept in the store (instance_logs) so that whichever
// replica leads serves it. It shares the store's connection: core thread only. Appends are
// idempotent by offset: what is already held of a chunk is dropped, and a gap is refused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/error.h"
#include "store/store.h"

namespace allot {

struct LogChunk {
  int64_t offset = 0;  // Where `data` starts in the instance's output.
  std::string data;
  int64_t size = 0;  // The output's whole size so far.
  // Bytes before `offset`, from where the read asked, that are not held: dropped, the oldest
  // past the store's bound or what the agent could not ship in time.
  int64_t dropped = 0;
};

// Instances whose output size a LogStore keeps in memory, to check the offsets agents ship logs
// at, before it reads them from the store again.
inline constexpr size_t kLogSizesKept = 100'000;

class LogStore {
 public:
  // Knows the sizes of up to `sizes_kept` instances' output before it starts afresh (committed()).
  explicit LogStore(Store& store, size_t sizes_kept = kLogSizesKept)
      : store_(store), sizes_kept_(sizes_kept) {}

  // The part of `data`, which starts at `offset` of the instance's output, that is not held yet:
  // a piece for the batch being committed, or nullopt when every byte is held. A gap (an offset
  // beyond the end) is refused with kConflict unless `after_drop` (the agent dropped what lies
  // between, and says so). The size counts the piece at once.
  [[nodiscard]] Result<std::optional<LogPiece>> accept(const std::string& instance_id,
                                                       int64_t offset, std::string_view data,
                                                       bool after_drop = false);
  // Up to `limit` bytes from `offset`; where `offset` falls in a hole (dropped output), from the
  // next byte held, with `dropped` saying how many were skipped.
  [[nodiscard]] Result<LogChunk> read(const std::string& instance_id, int64_t offset,
                                      int64_t limit);
  // The last `lines` lines (at most `limit` bytes).
  [[nodiscard]] Result<LogChunk> tail(const std::string& instance_id, int lines, int64_t limit);
  // How many bytes are held for the instance.
  [[nodiscard]] Result<int64_t> size(const std::string& instance_id);
  // Forgets the pieces it accepted and the sizes it knows, which a failed commit may have left
  // ahead of the store.
  void forget() {
    sizes_.clear();
    pending_.clear();
  }
  // The batch that held the pieces accepted so far is durable: they are read from the store
  // from now on. The sizes it knows are forgotten too once they are more than it keeps, so that
  // they do not grow with every instance that ever ran.
  void committed() {
    pending_.clear();
    if (sizes_.size() > sizes_kept_) sizes_.clear();
  }
  size_t sizes_known() const { return sizes_.size(); }

 private:
  // What is held from `offset` on, contiguously: empty at a hole.
  [[nodiscard]] Result<LogChunk> read_held(const std::string& instance_id, int64_t offset,
                                           int64_t limit);

  Store& store_;
  size_t sizes_kept_;
  std::unordered_map<std::string, int64_t> sizes_;
  // Accepted pieces whose batch is not committed yet: a read in the same batch (answered only
  // once it commits) sees them, so that an instance's end never shows before its last output.
  std::unordered_map<std::string, std::vector<LogPiece>> pending_;
};

// Takes in the log files older versions kept, INSTANCE.log in `dir` (data_dir/logs), once: an
// instance whose output the store already holds is left; the folder is then renamed
// `logs.imported`.
[[nodiscard]] Status import_log_files(Store& store, const std::filesystem::path& dir);

}  // namespace allot
