#include "cli/commands/common.h"

#include <iostream>
#include <memory>

#include "common/url.h"

namespace allot::cli {
namespace {

using nlohmann::json;

// Appends `name`=`value` to the query string `out` when the value is set.
void add_param(std::string& out, const std::string& name, const std::string& value) {
  if (value.empty()) return;
  out += (out.empty() ? "?" : "&") + name + "=" + percent_encode(value);
}

// What was given for one Param's option.
struct Given {
  Param param;
  std::string value;
  int64_t number = 0;  // A `whole` param's value.
  bool on = false;

  // The value a request sends: a toggle's "true" when on; "" when not given.
  [[nodiscard]] std::string text() const { return param.toggle ? (on ? "true" : "") : value; }
};

// Declares each param's option on `command`. The options write into the list returned, which the
// actions read after parsing.
std::shared_ptr<std::vector<Given>> add_params(CLI::App& command, std::vector<Param> params) {
  auto given = std::make_shared<std::vector<Given>>();
  given->reserve(params.size());  // The options point into it: it never grows again.
  for (Param& param : params) {
    Given& one = given->emplace_back(Given{.param = std::move(param)});
    if (one.param.toggle) {
      command.add_flag(one.param.flag, one.on, one.param.help);
      continue;
    }
    CLI::Option* option = one.param.whole
                              ? command.add_option(one.param.flag, one.number, one.param.help)
                              : command.add_option(one.param.flag, one.value, one.param.help);
    option->required(one.param.required);
    if (one.param.check != nullptr) option->check(*one.param.check);
  }
  return given;
}

}  // namespace

Action show_list(std::function<std::string()> target, const int& limit,
                 const std::vector<Column>& columns, bool newest) {
  return [target = std::move(target), &limit, &columns, newest](Session& session) {
    json items;
    const int code =
        newest ? session.list_newest(target(), limit, items) : session.list(target(), limit, items);
    if (code == kOk) session.show_list(items, columns);
    return code;
  };
}

std::string query(std::initializer_list<std::pair<const char*, const std::string*>> params) {
  std::string out;
  for (const auto& [name, value] : params) add_param(out, name, *value);
  return out;
}

Action show_call(std::string method, std::function<std::string()> target,
                 std::function<json()> body) {
  return [method = std::move(method), target = std::move(target),
          body = std::move(body)](Session& session) {
    json answer;
    const std::string path = target();
    const int code = session.call(method, path, body(), answer);
    if (code != kOk) return code;
    // A POST that made a named object (its id new to the path) prints the line a person needs.
    const bool created = method == "POST" && answer.is_object() && answer.contains("name") &&
                         answer.contains("id") && answer["id"].is_string() &&
                         path.find(answer["id"].get<std::string>()) == std::string::npos;
    if (created) {
      session.show_created(answer);
    } else {
      session.show(answer);
    }
    return code;
  };
}

Action show_text(std::function<std::string()> target) {
  return [target = std::move(target)](Session& session) {
    std::string body;
    const int code = session.fetch_text(target(), body);
    if (code == kOk) std::cout << body;
    return code;
  };
}

void put(json& body, const char* field, const std::string& value) {
  if (!value.empty()) body[field] = value;
}

CLI::App* add_group(CLI::App& parent, const std::string& name, const std::string& description) {
  return parent.add_subcommand(name, description)->require_subcommand(1);
}

CLI::Option* add_limit(CLI::App& command, int& limit) {
  return command.add_option("--limit", limit, "show at most this many (default: all)")
      ->check(CLI::NonNegativeNumber);
}

CLI::Option* add_newest_limit(CLI::App& command, int& limit) {
  return command.add_option("--limit", limit, "show only the newest N (default: all)")
      ->check(CLI::NonNegativeNumber);
}

CLI::App* add_list(CLI::App& parent, const std::string& name, const std::string& description,
                   std::string path, std::vector<Param> filters, const std::vector<Column>& columns,
                   Action& action, Limit limit) {
  auto most = std::make_shared<int>(0);  // The action reads it after parsing.
  CLI::App* list = parent.add_subcommand(name, description);
  if (limit == Limit::kFirst) add_limit(*list, *most);
  if (limit == Limit::kNewest) add_newest_limit(*list, *most);
  auto given = add_params(*list, std::move(filters));
  list->callback([given, most, path = std::move(path), &columns, &action, limit] {
    auto target = [given, path] {
      std::string out;
      for (const Given& one : *given) add_param(out, one.param.name, one.text());
      return path + out;
    };
    action = show_list(target, *most, columns, limit == Limit::kNewest);
  });
  return list;
}

CLI::App* add_tenant_list(CLI::App& parent, const std::string& description, std::string path,
                          std::string all_param, const std::string& all_what,
                          const std::vector<Column>& columns, Action& action) {
  return add_list(
      parent, "list", description, std::move(path),
      {{.flag = "--tenant", .name = "tenant_id", .help = "only this tenant's"},
       {.flag = "--all", .name = std::move(all_param), .help = all_what + " too", .toggle = true}},
      columns, action);
}

CLI::App* add_id_call(CLI::App& parent, const std::string& name, const std::string& description,
                      const std::string& method, const std::string& path, Action& action,
                      const std::string& suffix) {
  auto id = std::make_shared<std::string>();  // The action reads it after parsing.
  CLI::App* command = parent.add_subcommand(name, description);
  command->add_option("id", *id, "its id")->required();
  command->callback([id, method, path, suffix, &action] {
    action = show_call(method, [id, path, suffix] { return path + "/" + *id + suffix; });
  });
  return command;
}

CLI::App* add_body_call(CLI::App& parent, const std::string& name, const std::string& description,
                        std::string method, std::string path, std::vector<Param> fields,
                        Action& action, std::string suffix) {
  CLI::App* command = parent.add_subcommand(name, description);
  auto given = add_params(*command, std::move(fields));
  command->callback([given, method = std::move(method), path = std::move(path),
                     suffix = std::move(suffix), &action] {
    action = show_call(
        method,
        [given, path, suffix] {
          std::string target = path;
          for (const Given& one : *given) {
            if (one.param.in_path) target += "/" + one.value;
          }
          return target + suffix;
        },
        [given] {
          json body = json::object();
          for (const Given& one : *given) {
            if (one.param.in_path) continue;
            if (one.param.whole) {
              body[one.param.name] = one.number;
            } else if (one.param.required) {
              body[one.param.name] = one.value;
            } else {
              put(body, one.param.name.c_str(), one.value);
            }
          }
          return body;
        });
  });
  return command;
}

}  // namespace allot::cli
