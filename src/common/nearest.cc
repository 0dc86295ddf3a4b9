#include "common/nearest.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <utility>

namespace allot {
namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool starts_with_ignoring_case(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() &&
         std::equal(prefix.begin(), prefix.end(), text.begin(),
                    [](char a, char b) { return lower(a) == lower(b); });
}

}  // namespace

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && starts_with_ignoring_case(a, b);
}

size_t edit_distance(std::string_view a, std::string_view b) {
  // One row of the Wagner-Fischer table at a time.
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      const size_t substitute = diagonal + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string nearest(std::string_view word, const std::vector<std::string>& candidates) {
  const size_t allowed = std::max<size_t>(1, word.size() / 3);
  // A name that the word begins ("--gpu-t" of "--gpu-type") is what was meant before any other,
  // however many letters are missing; among the rest, the fewest edits win.
  std::string best;
  std::pair<bool, size_t> best_rank{true, SIZE_MAX};
  for (const std::string& candidate : candidates) {
    const bool prefix = !word.empty() && starts_with_ignoring_case(candidate, word);
    const size_t distance = edit_distance(word, candidate);
    if (!prefix && distance > allowed) continue;
    const std::pair<bool, size_t> rank{!prefix, distance};
    if (rank < best_rank) {
      best = candidate;
      best_rank = rank;
    }
  }
  return best;
}

}  // namespace allot
