#include "api/request.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/json_depth.h"
#include "common/limits.h"

namespace allot {
namespace {

Result<std::string> percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%') {
      unsigned value = 0;
      if (i + 2 >= text.size()) {
        return fail(ErrorCode::kInvalidArgument, "bad percent escape in the URL");
      }
      auto [end, ec] = std::from_chars(text.data() + i + 1, text.data() + i + 3, value, 16);
      if (ec != std::errc{} || end != text.data() + i + 3) {
        return fail(ErrorCode::kInvalidArgument, "bad percent escape in the URL");
      }
      out += static_cast<char>(value);
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace

Result<Target> parse_target(std::string_view target) {
  Target out;
  const size_t question = target.find('?');
  out.path = std::string(target.substr(0, question));
  std::string_view path = out.path;
  while (!path.empty()) {
    path.remove_prefix(path.front() == '/' ? 1 : 0);
    const size_t slash = path.find('/');
    auto segment = percent_decode(path.substr(0, slash));
    if (!segment) return std::unexpected(segment.error());
    if (!segment->empty()) out.segments.push_back(std::move(*segment));
    path = slash == std::string_view::npos ? std::string_view{} : path.substr(slash);
  }
  if (question == std::string_view::npos) return out;
  std::string_view query = target.substr(question + 1);
  while (!query.empty()) {
    const size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    auto key = percent_decode(pair.substr(0, eq));
    auto value = percent_decode(eq == std::string_view::npos ? "" : pair.substr(eq + 1));
    if (!key) return std::unexpected(key.error());
    if (!value) return std::unexpected(value.error());
    // One value per name: a repeated parameter would mean whichever one a route happened to read.
    if (out.query.contains(*key)) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("query parameter '{}' is given more than once", *key));
    }
    out.query.emplace(std::move(*key), std::move(*value));
  }
  return out;
}

JsonBody::JsonBody(std::string_view body) : JsonBody(Parsed{}, parse_outside_json(body)) {}

JsonBody JsonBody::from_document(nlohmann::json body) { return {Parsed{}, std::move(body)}; }

JsonBody::JsonBody(Parsed /*tag*/, nlohmann::json body) : json_(std::move(body)) {
  if (json_.is_discarded()) {
    fail_once(ErrorCode::kMalformedJson,
              "the body is not valid JSON, or nests arrays and objects more than 64 deep");
  } else if (!json_.is_object()) {
    fail_once(ErrorCode::kMalformedJson, "the body must be a JSON object");
  }
}

void JsonBody::fail_once(ErrorCode code, std::string message) {
  if (!error_) error_ = Error{code, std::move(message)};
}

const nlohmann::json* JsonBody::field(const std::string& name) {
  read_.push_back(name);
  if (error_ || !json_.is_object()) return nullptr;
  auto it = json_.find(name);
  if (it == json_.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string JsonBody::required_string(const std::string& name) {
  auto value = optional_string(name);
  if (!value) {
    fail_once(ErrorCode::kMissingField, fmt::format("'{}' is required", name));
    return {};
  }
  return *value;
}

std::optional<std::string> JsonBody::optional_string(const std::string& name) {
  const nlohmann::json* value = field(name);
  if (value == nullptr) return std::nullopt;
  if (!value->is_string()) {
    fail_once(ErrorCode::kInvalidType, fmt::format("'{}' must be a string", name));
    return std::nullopt;
  }
  return value->get<std::string>();
}

std::optional<bool> JsonBody::optional_bool(const std::string& name) {
  const nlohmann::json* value = field(name);
  if (value == nullptr) return std::nullopt;
  if (!value->is_boolean()) {
    fail_once(ErrorCode::kInvalidType, fmt::format("'{}' must be true or false", name));
    return std::nullopt;
  }
  return value->get<bool>();
}

std::optional<int64_t> JsonBody::optional_int(const std::string& name, int64_t min, int64_t max) {
  const nlohmann::json* value = field(name);
  if (value == nullptr) return std::nullopt;
  if (!value->is_number_integer()) {
    fail_once(ErrorCode::kInvalidType, fmt::format("'{}' must be a whole number", name));
    return std::nullopt;
  }
  const auto number = value->get<int64_t>();
  if (number < min || number > max) {
    fail_once(ErrorCode::kInvalidArgument,
              fmt::format("'{}' must be from {} to {}", name, min, max));
    return std::nullopt;
  }
  return number;
}

std::optional<std::vector<std::string>> JsonBody::optional_strings(const std::string& name) {
  const nlohmann::json* value = field(name);
  if (value == nullptr) return std::nullopt;
  std::vector<std::string> out;
  const bool ok = value->is_array() && std::all_of(value->begin(), value->end(),
                                                   [](const auto& v) { return v.is_string(); });
  if (!ok) {
    fail_once(ErrorCode::kInvalidType, fmt::format("'{}' must be an array of strings", name));
    return std::nullopt;
  }
  for (const auto& item : *value) out.push_back(item.get<std::string>());
  return out;
}

std::optional<std::map<std::string, std::string>> JsonBody::optional_string_map(
    const std::string& name) {
  const nlohmann::json* value = field(name);
  if (value == nullptr) return std::nullopt;
  std::map<std::string, std::string> out;
  const bool ok = value->is_object() && std::all_of(value->begin(), value->end(),
                                                    [](const auto& v) { return v.is_string(); });
  if (!ok) {
    fail_once(ErrorCode::kInvalidType,
              fmt::format("'{}' must be an object of string values", name));
    return std::nullopt;
  }
  for (const auto& [key, item] : value->items()) out[key] = item.get<std::string>();
  return out;
}

nlohmann::json JsonBody::optional_json(const std::string& name) {
  const nlohmann::json* value = field(name);
  return value == nullptr ? nlohmann::json(nullptr) : *value;
}

Status JsonBody::finish() {
  if (error_) return std::unexpected(*error_);
  for (const auto& [name, value] : json_.items()) {
    if (std::find(read_.begin(), read_.end(), name) == read_.end()) {
      return fail(ErrorCode::kUnknownField, fmt::format("unknown field '{}'", name));
    }
  }
  return {};
}

Result<Page> read_page(const Target& target, std::initializer_list<std::string_view> allowed) {
  Page page{.limit = limits::kDefaultPageSize};
  for (const auto& [key, value] : target.query) {
    if (key == "after") {
      page.after = value;
    } else if (key == "limit") {
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), page.limit);
      if (ec != std::errc{} || end != value.data() + value.size() || page.limit < 1 ||
          page.limit > limits::kMaxPageSize) {
        return fail(ErrorCode::kInvalidArgument,
                    fmt::format("limit must be a whole number from 1 to {}", limits::kMaxPageSize));
      }
    } else if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      return fail(ErrorCode::kUnknownField, fmt::format("unknown query parameter '{}'", key));
    }
  }
  return page;
}

Result<std::optional<std::string>> read_choice(const Target& target, std::string_view key,
                                               std::span<const std::string_view> choices) {
  auto it = target.query.find(key);
  if (it == target.query.end()) return std::nullopt;
  if (std::ranges::find(choices, std::string_view(it->second)) != choices.end()) {
    return it->second;
  }
  return fail(ErrorCode::kInvalidArgument,
              fmt::format("{} must be one of {}", key, fmt::join(choices, ", ")));
}

}  // namespace allot
