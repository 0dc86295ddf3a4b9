// The simulated backend's fault injection: a text file that tests and operators edit while the
// agent runs. Internal to the agent's GPU component.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace allot::agent {

struct Faults {
  std::vector<std::pair<int, int>> xids;  // (GPU index, XID code), in file order.
  std::vector<int> lost;                  // GPU indexes.
  std::map<int, int> utilization_pct;     // GPU index -> the utilisation it reports instead.
};

// Reads "xid INDEX CODE", "lost INDEX" and "util INDEX PCT" lines ('#' starts a comment; of
// several util lines for one GPU, the last counts). Each poll re-reads the file
// and returns every "lost" line and only the "xid" lines not returned before. A line counts once it
// ends with a newline, so a line caught half-written is taken at a later poll, whole. Malformed
// lines are ignored: a sample never fails.
class FaultFile {
 public:
  explicit FaultFile(std::string path) : path_(std::move(path)) {}

  // A missing or unreadable file means no faults.
  Faults poll();

 private:
  std::string path_;
  // Consumed XID lines by position and text, so that an appended copy of a line fires again.
  std::set<std::pair<size_t, std::string>> consumed_;
};

}  // namespace allot::agent
