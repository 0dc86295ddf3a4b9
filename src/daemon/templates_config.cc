#include "daemon/templates_config.h"

#include <fmt/format.h>

namespace allot {
namespace {

using nlohmann::json;

// TOML's strings, whole numbers, booleans, arrays and tables as JSON; a float or a date is
// refused, since no launch field takes one.
Result<json> to_json_value(const toml::node& node, const std::string& where) {
  if (const auto* text = node.as_string()) return json(text->get());
  if (const auto* number = node.as_integer()) return json(number->get());
  if (const auto* flag = node.as_boolean()) return json(flag->get());
  if (const auto* array = node.as_array()) {
    json out = json::array();
    for (const toml::node& item : *array) {
      auto value = to_json_value(item, where);
      if (!value) return value;
      out.push_back(std::move(*value));
    }
    return out;
  }
  if (const auto* table = node.as_table()) {
    json out = json::object();
    for (const auto& [key, item] : *table) {
      auto value = to_json_value(item, where + "." + std::string(key.str()));
      if (!value) return value;
      out[std::string(key.str())] = std::move(*value);
    }
    return out;
  }
  return fail(ErrorCode::kInvalidArgument,
              fmt::format("'{}' must be a string, a whole number, true or false, an array or "
                          "a table",
                          where));
}

}  // namespace

Result<LaunchTemplates> read_templates(const toml::node& node, std::string_view path) {
  auto wrong = [path](const std::string& why) {
    return fail(ErrorCode::kInvalidArgument, fmt::format("{}: {}", path, why));
  };
  const auto* tables = node.as_table();
  if (tables == nullptr) return wrong("'templates' must hold one [templates.NAME] table each");
  if (tables->size() > kMaxLaunchTemplates) {
    return wrong(fmt::format("at most {} templates", kMaxLaunchTemplates));
  }
  LaunchTemplates templates;
  for (const auto& [key, entry] : *tables) {
    const std::string name(key.str());
    const auto* table = entry.as_table();
    if (table == nullptr) return wrong(fmt::format("templates.{} must be a table", name));
    auto fields = to_json_value(*table, "templates." + name);
    if (!fields) return wrong(fields.error().message);
    LaunchTemplate launch_template{.name = name};
    if (fields->contains("description")) {
      if (!(*fields)["description"].is_string()) {
        return wrong(fmt::format("templates.{}.description must be a string", name));
      }
      launch_template.description = (*fields)["description"];
      fields->erase("description");
    }
    launch_template.fields = std::move(*fields);
    if (auto ok = check_template(launch_template); !ok) return wrong(ok.error().message);
    templates.emplace(name, std::move(launch_template));
  }
  return templates;
}

}  // namespace allot
