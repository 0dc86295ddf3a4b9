// Instances' output, as the agents ship it: one file per instance under the controller's data
// directory. Appends are idempotent by offset, so a chunk sent twice is written once. A requeued
// instance runs again, perhaps on another node, whose output starts at 0: each run's output
// follows the last one's in the file, and an agent's offsets count from its run's start (kept in
// a second file, `INSTANCE.run`).
#pragma once

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>

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
  // As append, for run `run` of the instance with `offset` from that run's start. A later run
  // than the file's starts where the file ends; an earlier one is over, and what it sends late
  // is dropped. A run below 0 (an agent that does not say) is the file's current one.
  [[nodiscard]] Status append_run(const std::string& instance_id, int run, int64_t offset,
                                  std::string_view data);
  // How many bytes of run `run` are held: from its start for the current run (or a run below 0),
  // 0 for a later one, and INT64_MAX for one that is over (its agent has nothing more to send).
  int64_t run_size(const std::string& instance_id, int run) const;
  // Up to `limit` bytes from `offset`.
  [[nodiscard]] Result<LogChunk> read(const std::string& instance_id, int64_t offset,
                                      int64_t limit) const;
  // The last `lines` lines (at most `limit` bytes).
  [[nodiscard]] Result<LogChunk> tail(const std::string& instance_id, int lines,
                                      int64_t limit) const;
  // How many bytes are held for the instance.
  int64_t size(const std::string& instance_id) const;

 private:
  struct RunStart {
    int run = 0;
    int64_t base = 0;  // Where the run's output starts in the file.
  };
  std::filesystem::path path(const std::string& instance_id) const;
  RunStart run_start(const std::string& instance_id) const;
  Status save_run_start(const std::string& instance_id, RunStart start);

  std::filesystem::path dir_;
  std::mutex runs_;  // One run change at a time.
};

}  // namespace allot
