// Reading a request strictly: its path and query, and a JSON body whose fields are checked for
// presence, type and strangers. The first problem found is the one reported.
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.h"

namespace allot {

struct Target {
  std::string path;
  std::vector<std::string> segments;  // "/v1/projects/x" -> {"v1", "projects", "x"}
  std::map<std::string, std::string, std::less<>> query;
};

// Splits and percent-decodes a request target. Fails with kInvalidArgument on bad escapes and on a
// query parameter given more than once.
[[nodiscard]] Result<Target> parse_target(std::string_view target);

// A JSON object body read field by field. After the reads, finish() reports the first error:
// malformed JSON, a missing field, a field of the wrong type, or a field nobody read.
class JsonBody {
 public:
  explicit JsonBody(std::string_view body);
  // A body already parsed (a launch made from a template, api/launch.h).
  static JsonBody from_document(nlohmann::json body);

  std::string required_string(const std::string& name);
  std::optional<std::string> optional_string(const std::string& name);
  std::optional<bool> optional_bool(const std::string& name);
  // A whole number within [min, max].
  std::optional<int64_t> optional_int(const std::string& name, int64_t min, int64_t max);
  std::optional<std::vector<std::string>> optional_strings(const std::string& name);
  std::optional<std::map<std::string, std::string>> optional_string_map(const std::string& name);
  // The field's raw JSON (arrays and objects of any shape), or null when absent.
  nlohmann::json optional_json(const std::string& name);

  // Several string fields read in order, as required_string and optional_string read each one:
  //   auto [name, email] = body.required_string_fields({"name", "email"});
  template <std::size_t N>
  std::array<std::string, N> required_string_fields(const char* const (&names)[N]) {
    std::array<std::string, N> values;
    std::size_t i = 0;
    for (const char* name : names) values.at(i++) = required_string(name);
    return values;
  }
  template <std::size_t N>
  std::array<std::optional<std::string>, N> optional_string_fields(const char* const (&names)[N]) {
    std::array<std::optional<std::string>, N> values;
    std::size_t i = 0;
    for (const char* name : names) values.at(i++) = optional_string(name);
    return values;
  }

  [[nodiscard]] Status finish();
  // The whole body as parsed; null when it was not JSON.
  const nlohmann::json& document() const { return json_; }

 private:
  const nlohmann::json* field(const std::string& name);
  void fail_once(ErrorCode code, std::string message);

  struct Parsed {};
  JsonBody(Parsed /*tag*/, nlohmann::json body);

  nlohmann::json json_;
  std::vector<std::string> read_;
  std::optional<Error> error_;
};

// A page of a listing: ?limit=N&after=ID.
struct Page {
  int limit = 0;
  std::string after;
};

// Reads limit and after, and refuses any query parameter not in `allowed` (which need not list
// limit and after).
[[nodiscard]] Result<Page> read_page(const Target& target,
                                     std::initializer_list<std::string_view> allowed);

// The value of ?key=, a filter that must be one of `choices` (a state's name, say): nullopt when
// absent, kInvalidArgument naming the choices when it is none of them.
[[nodiscard]] Result<std::optional<std::string>> read_choice(
    const Target& target, std::string_view key, std::span<const std::string_view> choices);

}  // namespace allot
