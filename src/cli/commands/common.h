// What the CLI's commands share: the actions that call the server and show its answers, and the
// subcommands that several resources declare alike (a listing, a call on one item by its id).
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/session.h"

namespace allot::cli {

using Action = std::function<int(Session&)>;

// Runs one request and shows its answer.
Action show_call(
    std::string method, std::function<std::string()> target,
    std::function<nlohmann::json()> body = [] { return nlohmann::json(nullptr); });

// GETs an answer that is not JSON (CSV, HTML) and prints it exactly as served.
Action show_text(std::function<std::string()> target);

// Lists `target()` (every page, up to `limit` items) as a table of `columns`, or as JSON. With
// `newest`, the listing is a log read oldest first and `limit` keeps its newest items.
Action show_list(std::function<std::string()> target, const int& limit,
                 const std::vector<Column>& columns, bool newest = false);

// A query string from the options that are set, e.g. "?tenant_id=ten_...".
std::string query(std::initializer_list<std::pair<const char*, const std::string*>> params);

// Adds `value` to `body` as `field` when it was given.
void put(nlohmann::json& body, const char* field, const std::string& value);

// Adds a command that only groups subcommands: one of them must follow.
CLI::App* add_group(CLI::App& parent, const std::string& name, const std::string& description);

// Adds --limit to a listing command; 0 means every item.
CLI::Option* add_limit(CLI::App& command, int& limit);
// Adds --limit to a log's listing: the newest N; 0 means every item.
CLI::Option* add_newest_limit(CLI::App& command, int& limit);

// An option that becomes a named part of a request when given: a listing's query parameter or a
// body's field. A `required` one must be given; a `toggle` is a listing's flag instead, that asks
// with `name`=true; an `in_path` one (an item's id) goes in the path of a body's request instead;
// a `whole` one (a `required` body field) is read as a whole number and sent as one. An option
// with a `check` is held to it.
struct Param {
  std::string flag, name, help;
  bool required = false, toggle = false, in_path = false, whole = false;
  const CLI::Validator* check = nullptr;
};

// Which --limit a listing takes: none, at most N items, or a log's newest N.
enum class Limit { kNone, kFirst, kNewest };

// Adds a subcommand `name` of `parent` that shows `path` as a table of `columns`: its --limit (as
// `limit` says) first, then the query's `filters` in their order.
CLI::App* add_list(CLI::App& parent, const std::string& name, const std::string& description,
                   std::string path, std::vector<Param> filters, const std::vector<Column>& columns,
                   Action& action, Limit limit = Limit::kFirst);

// Adds a `list` subcommand of `path` to `parent`: --limit, --tenant (only that tenant's) and
// --all, which asks with `all_param`=true for `all_what` ("deleted ones") too.
CLI::App* add_tenant_list(CLI::App& parent, const std::string& description, std::string path,
                          std::string all_param, const std::string& all_what,
                          const std::vector<Column>& columns, Action& action);

// Adds a subcommand `name` of `parent` that takes an item's id and sends `method` (no body) to
// `path`/ID`suffix`, showing the answer.
CLI::App* add_id_call(CLI::App& parent, const std::string& name, const std::string& description,
                      const std::string& method, const std::string& path, Action& action,
                      const std::string& suffix = "");

// Adds a subcommand `name` of `parent` that sends `method` to `path` (then "/" and each `in_path`
// field's value, then `suffix`) with a body of the other `fields` (strings, their options declared
// in their order) and shows the answer.
CLI::App* add_body_call(CLI::App& parent, const std::string& name, const std::string& description,
                        std::string method, std::string path, std::vector<Param> fields,
                        Action& action, std::string suffix = "");

}  // namespace allot::cli
