#include "agent/gpu/fault_file.h"

#include <charconv>
#include <fstream>
#include <optional>
#include <string_view>

namespace allot::agent {
namespace {

// A faults file is a handful of lines written by hand or by a test; reading at most 1 MiB per
// sample bounds the work one sample can be made to do.
constexpr size_t kMaxFaultsFileBytes = 1 << 20;
// GPU indexes and XID codes are small (NVIDIA's XID list stays below 200); the bound rejects
// garbage without overflow.
constexpr int kMaxNumber = 1'000'000;

std::vector<std::string_view> words_of(std::string_view line) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

std::optional<int> parse_int(std::string_view text, int max) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0 || value > max) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

Faults FaultFile::poll() {
  Faults faults;
  std::ifstream in(path_, std::ios::binary);
  if (!in) return faults;
  std::string text;
  text.resize(kMaxFaultsFileBytes);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));

  size_t line_no = 0;
  size_t start = 0;
  for (size_t newline = text.find('\n'); newline != std::string::npos;
       start = newline + 1, newline = text.find('\n', start), ++line_no) {
    std::string_view line = std::string_view(text).substr(start, newline - start);
    line = line.substr(0, line.find('#'));
    const std::vector<std::string_view> words = words_of(line);
    if (words.size() == 3 && words[0] == "util") {
      const auto index = parse_int(words[1], kMaxNumber);
      const auto pct = parse_int(words[2], 100);
      if (index && pct) faults.utilization_pct[*index] = *pct;
    } else if (words.size() == 2 && words[0] == "lost") {
      if (auto index = parse_int(words[1], kMaxNumber)) faults.lost.push_back(*index);
    } else if (words.size() == 3 && words[0] == "xid") {
      const auto index = parse_int(words[1], kMaxNumber);
      const auto code = parse_int(words[2], kMaxNumber);
      if (index && code && consumed_.emplace(line_no, std::string(line)).second) {
        faults.xids.emplace_back(*index, *code);
      }
    }
  }
  return faults;
}

}  // namespace allot::agent
