// Reading a scenario's JSON (scenario.cc, scenario_books.cc): each field is read with its place in
// the document, so that every error can name it, e.g. "events[3].gpus: ...".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/money.h"

namespace allot::sim {

inline Error bad(const std::string& where, std::string_view what) {
  return Error{ErrorCode::kInvalidArgument, fmt::format("{}: {}", where, what)};
}

// Ten years of virtual time.
inline constexpr int64_t kMaxSeconds = int64_t{10} * 366 * 86'400;

// Reads fields of one JSON object, naming the field in every error.
class Fields {
 public:
  Fields(const nlohmann::json& doc, std::string where) : doc_(doc), where_(std::move(where)) {}

  std::string at(std::string_view key) const { return fmt::format("{}.{}", where_, key); }
  const std::string& where() const { return where_; }
  bool has(std::string_view key) const { return doc_.contains(key); }
  const nlohmann::json& doc() const { return doc_; }

  Result<std::string> text(std::string_view key, std::optional<std::string> fallback = {}) const;

  Result<int64_t> integer(std::string_view key, std::optional<int64_t> fallback, int64_t min,
                          int64_t max) const;

  // An amount: a decimal string such as "2.50"; more than zero unless `zero_ok`.
  Result<int64_t> amount(std::string_view key, bool zero_ok = false) const;

  // An exact decimal string such as "1.25" as a whole number of 1/10^decimals (decimals 0 to 6),
  // e.g. "1.25" with 3 decimals is 1,250. Never negative; absent: `fallback`, or required.
  Result<int64_t> scaled(std::string_view key, int decimals, std::optional<int64_t> fallback) const;

  Result<bool> flag(std::string_view key) const;

 private:
  const nlohmann::json& doc_;
  std::string where_;
};

// Declares `var` from a Result, or returns its error. `var` names a variable, so it cannot be
// parenthesized.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define TRY(var, expr)                                             \
  auto var##_result = (expr);                                      \
  if (!var##_result) return std::unexpected(var##_result.error()); \
  auto var = *var##_result
// NOLINTEND(bugprone-macro-parentheses)

// Calls each(item, index) for every item of the list doc[key] (absent: none), stopping at the first
// error.
template <typename Each>
Status each_of(const nlohmann::json& doc, std::string_view key, Each each) {
  if (!doc.contains(key)) return {};
  if (!doc.at(key).is_array()) return std::unexpected(bad(std::string(key), "must be a list"));
  for (size_t i = 0; i < doc.at(key).size(); ++i) {
    if (auto ok = each(doc.at(key)[i], i); !ok) return ok;
  }
  return {};
}

}  // namespace allot::sim
