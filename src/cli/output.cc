#include "cli/output.h"

#include <algorithm>

namespace allot::cli {
namespace {

std::string cell(const nlohmann::json& value) {
  if (value.is_null() || (value.is_string() && value.get<std::string>().empty())) return "-";
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

std::string upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return text;
}

}  // namespace

void print_table(std::ostream& out, const nlohmann::json& items,
                 const std::vector<Column>& columns) {
  std::vector<std::vector<std::string>> rows;
  rows.reserve(items.size() + 1);
  std::vector<std::string> header;
  header.reserve(columns.size());
  for (const Column& column : columns) header.push_back(upper(column.header));
  rows.push_back(header);
  for (const auto& item : items) {
    std::vector<std::string> row;
    row.reserve(columns.size());
    for (const Column& column : columns) {
      row.push_back(cell(item.contains(column.field) ? item[column.field] : nullptr));
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
  // Nested objects print as PARENT.FIELD lines, so that every value stands on its own line.
  std::vector<std::pair<std::string, std::string>> lines;
  for (const auto& [key, value] : object.items()) {
    if (value.is_array() && !value.empty() && value.front().is_object()) {
      // A list of records (an instance's events): one line each, its fields as key=value.
      for (const auto& item : value) {
        std::string text;
        for (const auto& [field, field_value] : item.items()) {
          if (field.ends_with("_ms")) continue;  // The readable time is there too.
          text += (text.empty() ? "" : "  ") + field + "=" + cell(field_value);
        }
        lines.emplace_back(upper(key), std::move(text));
      }
      continue;
    }
    if (!value.is_object()) {
      lines.emplace_back(upper(key), cell(value));
      continue;
    }
    for (const auto& [inner, inner_value] : value.items()) {
      std::string label = key;
      label += '.';
      label += inner;
      lines.emplace_back(upper(std::move(label)), cell(inner_value));
    }
  }
  size_t width = 0;
  for (const auto& [label, text] : lines) width = std::max(width, label.size());
  for (const auto& [label, text] : lines) {
    out << label << ":" << std::string(width - label.size() + 1, ' ') << text << "\n";
  }
}

}  // namespace allot::cli
