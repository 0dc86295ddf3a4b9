// "Did you mean ...?": the known name nearest to a mistyped one, for error messages that name the
// mistake and suggest the fix (a CLI flag, a subcommand, a GPU model).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace allot {

// Whether `a` and `b` are the same ignoring ASCII case ("h100" and "H100").
bool equals_ignoring_case(std::string_view a, std::string_view b);

// The edit distance (insertions, deletions, substitutions) between `a` and `b`, ignoring ASCII
// case.
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `word`, or "" when none is near enough to be what was meant: one that
// starts with the word, else one within a third of the word's length (at least 1) edits. Ties go to
// the earlier candidate.
std::string nearest(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace allot
