// Idle stop from the command line: a project's policy (projects idle set|show|clear) and the
// PCT:WINDOW[:notify] form that both `projects idle set` and `run --idle-stop` take.
#include <charconv>
#include <iostream>

#include "cli/commands.h"

namespace allot::cli {
namespace {

using nlohmann::json;

// A whole number from the whole text, or nullopt.
std::optional<int64_t> whole(std::string_view text) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<int64_t> window_seconds(std::string_view text) {
  int64_t unit = 1;
  if (!text.empty()) {
    switch (text.back()) {
      case 's':
        unit = 1;
        break;
      case 'm':
        unit = 60;
        break;
      case 'h':
        unit = 3'600;
        break;
      case 'd':
        unit = 86'400;
        break;
      default:
        unit = 0;
    }
    if (unit != 0) text.remove_suffix(1);
  }
  const auto number = whole(text);
  if (!number || *number < 0 || *number > INT64_MAX / 86'400) return std::nullopt;
  return *number * (unit == 0 ? 1 : unit);
}

CLI::Validator duration_seconds() {
  return {[](std::string& text) -> std::string {
            const auto seconds = window_seconds(text);
            if (!seconds) return "takes a duration such as 90s, 10m, 2h or 1d, not '" + text + "'";
            text = std::to_string(*seconds);
            return {};
          },
          "DURATION", "duration"};
}

std::optional<json> parse_idle_spec(const std::string& spec, std::string& error) {
  const size_t first = spec.find(':');
  const size_t second = first == std::string::npos ? first : spec.find(':', first + 1);
  const std::string action = second == std::string::npos ? "stop" : spec.substr(second + 1);
  const auto pct = whole(std::string_view(spec).substr(0, first));
  const auto window =
      first == std::string::npos
          ? std::nullopt
          : window_seconds(std::string_view(spec).substr(first + 1, second - first - 1));
  if (!pct || !window || (action != "stop" && action != "notify")) {
    error =
        "an idle policy is PCT:WINDOW[:notify], e.g. 10:30m or 5:3600:notify, not '" + spec + "'";
    return std::nullopt;
  }
  return json{{"threshold_pct", *pct}, {"window_s", *window}, {"action", action}};
}

void add_project_idle_commands(CLI::App& projects, Action& action) {
  static std::string id, spec;  // Live as long as the program: the actions read them.
  CLI::App* idle = add_group(projects, "idle", "the project's idle-stop policy");
  CLI::App* show = idle->add_subcommand("show", "show the project's policy");
  show->add_option("id", id, "the project's id")->required();
  show->callback(
      [&action] { action = show_call("GET", [] { return "/v1/projects/" + id + "/idle"; }); });
  CLI::App* set = idle->add_subcommand(
      "set", "stop (or notify the owner of) work whose GPUs stay under PCT % for WINDOW");
  set->add_option("id", id, "the project's id")->required();
  set->add_option("policy", spec, "PCT:WINDOW[:notify], e.g. 10:30m (WINDOW in s, m, h or d)")
      ->required();
  set->callback([&action] {
    action = [](Session& session) {
      std::string error;
      const auto body = parse_idle_spec(spec, error);
      if (!body) {
        std::cerr << "error: " << error << "\n";
        return static_cast<int>(kUsage);
      }
      return show_call(
          "PUT", [] { return "/v1/projects/" + id + "/idle"; }, [body] { return *body; })(session);
    };
  });
  CLI::App* clear = idle->add_subcommand("clear", "remove the project's policy");
  clear->add_option("id", id, "the project's id")->required();
  clear->callback(
      [&action] { action = show_call("DELETE", [] { return "/v1/projects/" + id + "/idle"; }); });
}

}  // namespace allot::cli
