#include "cli/output.h"

#include <algorithm>

#include <fmt/format.h>
#include <boost/algorithm/string/case_conv.hpp>

namespace allot::cli {
namespace {

std::string cell(const nlohmann::json& value) {
  if (value.is_null() || (value.is_string() && value.get<std::string>().empty())) return "-";
  if (value.is_string()) return value.get<std::string>();
  if ((value.is_array() || value.is_object()) && value.empty()) return "-";
  if (value.is_array() || value.is_object()) {
    // A list as "a, b"; a record inside a table's cell as "key=value key=value".
    std::string text;
    for (const auto& [key, inner] : value.items()) {
      if (!text.empty()) text += value.is_array() ? ", " : " ";
      text += value.is_array() ? cell(inner) : key + "=" + cell(inner);
    }
    return text;
  }
  return value.dump();
}

std::string cell(const nlohmann::json& value, Unit unit) {
  if (unit == Unit::kThousandths && value.is_number_integer()) {
    return thousandths(value.get<int64_t>());
  }
  return cell(value);
}

bool is_record_list(const nlohmann::json& value) {
  return value.is_array() && !value.empty() && value.front().is_object();
}

// A table's columns for a list of records: every field that any of them has, in the order first
// seen, less the millisecond times (the readable time is there too).
std::vector<Column> columns_of(const nlohmann::json& records) {
  std::vector<Column> columns;
  for (const auto& record : records) {
    for (const auto& [field, value] : record.items()) {
      if (field.ends_with("_ms")) continue;
      const bool seen = std::any_of(columns.begin(), columns.end(),
                                    [&](const Column& column) { return column.field == field; });
      if (!seen) columns.push_back({field, field});
    }
  }
  return columns;
}

struct Flat {
  std::vector<std::pair<std::string, std::string>> lines;  // LABEL: value.
  std::vector<std::pair<std::string, const nlohmann::json*>> tables;
};

// Nested objects flatten to PARENT.FIELD lines, so that every value stands on its own line; lists
// of records (an instance's events, an asset's schedules) become tables after the lines.
void flatten(const nlohmann::json& object, const std::string& prefix, Flat& flat) {
  for (const auto& [key, value] : object.items()) {
    std::string label = prefix;
    if (!label.empty()) label += '.';
    label += key;
    if (is_record_list(value)) {
      flat.tables.emplace_back(boost::algorithm::to_upper_copy(label), &value);
    } else if (value.is_object() && !value.empty()) {
      flatten(value, label, flat);
    } else {
      flat.lines.emplace_back(boost::algorithm::to_upper_copy(label), cell(value));
    }
  }
}

}  // namespace

std::string thousandths(int64_t value) {
  const uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value) : value;
  std::string text = (value < 0 ? "-" : "") + std::to_string(magnitude / 1000);
  if (magnitude % 1000 == 0) return text;
  std::string fraction = fmt::format("{:03}", magnitude % 1000);
  while (fraction.back() == '0') fraction.pop_back();
  return text + "." + fraction;
}

void print_table(std::ostream& out, const nlohmann::json& items,
                 const std::vector<Column>& columns) {
  std::vector<std::vector<std::string>> rows;
  rows.reserve(items.size() + 1);
  std::vector<std::string> header;
  header.reserve(columns.size());
  for (const Column& column : columns)
    header.push_back(boost::algorithm::to_upper_copy(column.header));
  rows.push_back(header);
  for (const auto& item : items) {
    std::vector<std::string> row;
    row.reserve(columns.size());
    for (const Column& column : columns) {
      row.push_back(cell(item.contains(column.field) ? item[column.field] : nullptr, column.unit));
    }
    rows.push_back(std::move(row));
  }
  std::vector<size_t> widths(columns.size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    out << line << "\n";
  }
}

void print_object(std::ostream& out, const nlohmann::json& object) {
  Flat flat;
  flatten(object, "", flat);
  size_t width = 0;
  for (const auto& [label, text] : flat.lines) width = std::max(width, label.size());
  for (const auto& [label, text] : flat.lines) {
    out << label << ":" << std::string(width - label.size() + 1, ' ') << text << "\n";
  }
  for (const auto& [label, records] : flat.tables) {
    out << "\n" << label << ":\n";
    print_table(out, *records, columns_of(*records));
  }
}

}  // namespace allot::cli
