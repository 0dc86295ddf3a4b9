// Instances' output, as the agents ship it: one file per instance under the controller's data
// directory. Appends are idempotent by offset, so a chunk sent twice is written once.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "common/error.h"

namespace allot {

struct LogChunk {
  int64_t offset = 0;  // Where `data` starts in the instance's output.
  std::string data;
  int64_t size = 0;  // The output's whole size so far.
};

class LogStore {
 public:
  explicit LogStore(std::filesystem::path dir) : dir_(std::move(dir)) {}

  // Writes `data`, which starts at `offset` of the instance's output. Bytes already held are
  // skipped; a gap (offset beyond the end) is refused with kConflict.
  [[nodiscard]] Status append(const std::string& instance_id, int64_t offset,
                              std::string_view data);
  // Up to `limit` bytes from `offset`.
  [[nodiscard]] Result<LogChunk> read(const std::string& instance_id, int64_t offset,
                                      int64_t limit) const;
  // The last `lines` lines (at most `limit` bytes).
  [[nodiscard]] Result<LogChunk> tail(const std::string& instance_id, int lines,
                                      int64_t limit) const;
  // How many bytes are held for the instance.
  int64_t size(const std::string& instance_id) const;

 private:
  std::filesystem::path path(const std::string& instance_id) const;
  std::filesystem::path dir_;
};

}  // namespace allot
