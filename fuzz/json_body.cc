// The JSON bodies of routes, over any bytes: JsonBody's readers of every kind (api/request.h), the
// typed fields of api/fields.h over every string in the body, and the launch of POST /v1/instances
// (api/launch.h), as sent and as made from a template. Properties: nothing crashes or throws; a
// body read without error is a JSON object; money and decimals survive being written back and
// read again.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "api/fields.h"
#include "api/launch.h"
#include "api/request.h"
#include "check.h"

namespace allot {
namespace {

using fuzz::require;
using nlohmann::json;

// One reader of each kind, under the names the seeds use.
void read_every_kind(std::string_view bytes) {
  JsonBody body(bytes);
  (void)body.required_string("name");
  (void)body.optional_string("description");
  (void)body.optional_bool("enabled");
  (void)body.optional_int("limit", 1, 1000);
  (void)body.optional_int("offset", INT64_MIN, INT64_MAX);
  (void)body.optional_strings("tags");
  (void)body.optional_string_map("labels");
  (void)body.optional_json("extra");
  (void)body.optional_string_fields({"amount", "at"});
  if (body.finish()) require(body.document().is_object(), "a body read whole is an object");
}

// Each string as money, a scaled decimal, a time and a month.
void read_typed(const std::string& text) {
  if (auto micros = read_money("amount", text)) {
    auto again = read_money("amount", money_text(*micros));
    require(again && *again == *micros, "money survives being written back");
  }
  (void)read_time("at", text);
  (void)read_month("month", text);
  for (const int decimals : {0, 3, 6}) {
    auto value = parse_scaled("value", text, decimals, /*allow_negative=*/true);
    if (!value) continue;
    // Written back and read again, it is the same number.
    auto again = parse_scaled("value", format_scaled(*value, decimals), decimals, true);
    require(again && *again == *value, "a scaled decimal survives being written back");
  }
}

void read_strings(const json& document, int depth) {
  if (depth > 8) return;
  if (document.is_string()) read_typed(document.get<std::string>());
  if (document.is_array() || document.is_object()) {
    for (const json& item : document) read_strings(item, depth + 1);
  }
}

// A launch as sent, and as made from a template that the body overrides.
void read_launches(std::string_view bytes) {
  JsonBody body(bytes);
  (void)read_launch(body);
  if (!body.document().is_object()) return;
  const LaunchTemplate base{
      .name = "fuzz",
      .fields = {{"gpus", 1}, {"image", "busybox"}, {"env", {{"A", "1"}}}, {"command", {"true"}}}};
  JsonBody merged = JsonBody::from_document(with_template(base, body.document()));
  (void)read_launch(merged);
  (void)check_template(LaunchTemplate{.name = "fuzz", .fields = body.document()});
}

}  // namespace
}  // namespace allot

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace allot;
  const std::string_view bytes = fuzz::bytes_of(data, size);
  read_every_kind(bytes);
  const JsonBody whole(bytes);
  read_strings(whole.document(), 0);
  read_launches(bytes);
  return 0;
}
