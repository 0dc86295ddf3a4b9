#include "store/codecs/codec.h"

#include <algorithm>
#include <ranges>

#include <fmt/ranges.h>

namespace allot {

namespace {

auto column_names(std::string_view columns) {
  return std::views::split(columns, std::string_view(", ")) |
         std::views::transform([](auto name) { return std::string_view(name); });
}

}  // namespace

std::vector<DbValue> document_columns(const nlohmann::json& doc, std::string_view keys) {
  std::vector<DbValue> values;
  for (std::string_view key : column_names(keys)) {
    const nlohmann::json& value = doc.at(key);
    if (value.is_string()) {
      values.emplace_back(value.get<std::string>());
    } else {
      values.emplace_back(value.get<int64_t>());
    }
  }
  return values;
}

std::string upsert_statement(std::string_view table, std::string_view columns,
                             std::string_view conflict, std::string_view updated) {
  std::string sql = fmt::format("INSERT INTO {} ({}) VALUES ($1", table, columns);
  const auto params = std::ranges::count(columns, ',') + 1;
  for (int64_t n = 2; n <= params; ++n) sql += fmt::format(", ${}", n);
  sql += ")";
  if (conflict.empty()) return sql;
  sql += fmt::format(" ON CONFLICT ({}) DO UPDATE SET ", conflict);
  std::vector<std::string> sets;
  for (std::string_view column : column_names(updated)) {
    sets.push_back(fmt::format("{0} = excluded.{0}", column));
  }
  return sql + fmt::format("{}", fmt::join(sets, ", "));
}

}  // namespace allot
