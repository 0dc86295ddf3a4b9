// services: a tenant's endpoints served over replicas, at /s/SERVICE/ on allotd.
#include <charconv>
#include <iostream>

#include "cli/commands.h"
#include "cli/output.h"
#include "common/url.h"

namespace allot::cli {
namespace {

using nlohmann::json;

const std::vector<Column> kServiceColumns = {{"name", "name"},
                                             {"id", "id"},
                                             {"model", "model"},
                                             {"revision", "revision"},
                                             {"desired", "desired"},
                                             {"ready", "ready_replicas"},
                                             {"per request", "price_per_request"},
                                             {"per 1k tokens", "price_per_1k_tokens"},
                                             {"url", "url"}};

const std::vector<Column> kReplicaColumns = {
    {"replica", "instance_id"}, {"revision", "revision"},    {"state", "state"},
    {"ready", "ready"},         {"in flight", "in_flight"},  {"served", "served"},
    {"draining", "draining"},   {"last probe", "last_probe"}};

const std::vector<Column> kKeyColumns = {
    {"name", "name"},         {"id", "id"},         {"caller", "caller_tenant_id"},
    {"billed", "billed"},     {"prefix", "prefix"}, {"created", "created_at"},
    {"revoked", "revoked_at"}};

struct Options {
  std::string name, image, replicas, target_rps, target_concurrency, scale_to_zero_after, readiness,
      model, project, ready_timeout, port, shared, price_per_request, price_per_1k_tokens;
  PlacementOptions placement;
  std::vector<std::string> env, command;
  bool spot_fallback = false;
};

// "MIN:MAX" or a fixed "N".
bool parse_replicas(const std::string& text, json& body) {
  const size_t colon = text.find(':');
  const std::string low = text.substr(0, colon);
  const std::string high = colon == std::string::npos ? low : text.substr(colon + 1);
  int min = 0;
  int max = 0;
  const bool ok =
      std::from_chars(low.data(), low.data() + low.size(), min).ptr == low.data() + low.size() &&
      std::from_chars(high.data(), high.data() + high.size(), max).ptr ==
          high.data() + high.size() &&
      !low.empty() && !high.empty();
  if (!ok) {
    std::cerr << "error: --replicas takes MIN:MAX or N, e.g. 1:8, not '" << text << "'\n";
    return false;
  }
  body["min_replicas"] = min;
  body["max_replicas"] = max;
  return true;
}

bool put_whole(json& body, const char* field, const char* flag, const std::string& text) {
  if (text.empty()) return true;
  int64_t value = 0;
  if (std::from_chars(text.data(), text.data() + text.size(), value).ptr !=
      text.data() + text.size()) {
    std::cerr << "error: " << flag << " takes a whole number, not '" << text << "'\n";
    return false;
  }
  body[field] = value;
  return true;
}

bool put_seconds(json& body, const char* field, const char* flag, const std::string& text) {
  if (text.empty()) return true;
  const auto seconds = window_seconds(text);
  if (!seconds) {
    std::cerr << "error: " << flag << " takes a duration such as 90s, 10m or 1h, not '" << text
              << "'\n";
    return false;
  }
  body[field] = *seconds;
  return true;
}

// The body of a create (`creating`) or an update from the options given.
std::optional<json> service_body(const Options& o, bool creating) {
  json body = json::object();
  if (creating) body["name"] = o.name;
  put(body, "project_id", o.project);
  put(body, "readiness", o.readiness);
  put(body, "model", o.model);
  if (o.spot_fallback) body["spot_fallback"] = true;
  put(body, "price_per_request", o.price_per_request);
  put(body, "price_per_1k_tokens", o.price_per_1k_tokens);
  if (o.shared == "yes" || o.shared == "no") {
    body["shared"] = o.shared == "yes";
  } else if (!o.shared.empty()) {
    std::cerr << "error: --shared takes yes or no, not '" << o.shared << "'\n";
    return std::nullopt;
  }
  if (!o.replicas.empty() && !parse_replicas(o.replicas, body)) return std::nullopt;
  if (!put_whole(body, "port", "--port", o.port) ||
      !put_whole(body, "target_rps", "--target-rps", o.target_rps) ||
      !put_whole(body, "target_concurrency", "--target-concurrency", o.target_concurrency) ||
      !put_seconds(body, "scale_to_zero_after_s", "--scale-to-zero-after", o.scale_to_zero_after) ||
      !put_seconds(body, "ready_timeout_s", "--ready-timeout", o.ready_timeout)) {
    return std::nullopt;
  }
  json replica = json::object();
  put_placement(o.placement, replica);
  put(replica, "image", o.image);
  if (!o.command.empty()) replica["command"] = o.command;
  json env;
  if (!pairs(o.env, "--env", env)) return std::nullopt;
  if (!env.empty()) replica["env"] = env;
  if (creating || !replica.empty()) body["replica"] = replica;
  return body;
}

// A field that may be missing or null, as text.
std::string text_of(const json& s, const char* field, const char* otherwise = "-") {
  const auto it = s.find(field);
  return it != s.end() && it->is_string() ? it->get<std::string>() : otherwise;
}

// What a caller of another tenant's shared service sees of it: how to reach it, and its prices.
void print_shared_service(const json& s) {
  std::cout << "service " << text_of(s, "name") << " (" << text_of(s, "id") << "), "
            << "another tenant's, shared\n"
            << "url:       " << text_of(s, "url") << "\n"
            << "model:     " << text_of(s, "model") << "\n"
            << "price:     " << text_of(s, "price_per_request", "0") << " per request and "
            << text_of(s, "price_per_1k_tokens", "0") << " per 1,000 tokens\n";
}

// A service as people read it: its settings, then its replicas as a table.
void print_service(const json& s) {
  if (!s.contains("replicas")) return print_shared_service(s);
  const json none = json::object();
  const json& rollout = s.contains("rollout") && s["rollout"].is_object() ? s["rollout"] : none;
  const json& traffic = s.contains("traffic") && s["traffic"].is_object() ? s["traffic"] : none;
  std::cout << "service " << s.value("name", "") << " (" << s.value("id", "") << ")\n"
            << "url:       " << s.value("url", "") << "\n"
            << "model:     " << text_of(s, "model") << "\n"
            << "replicas:  " << s.value("desired", 0) << " wanted, " << s.value("min_replicas", 0)
            << " to " << s.value("max_replicas", 0) << " (" << s.value("scale_reason", "") << ")\n"
            << "revision:  " << s.value("revision", 0) << ", rollout " << rollout.value("state", "")
            << ": " << rollout.value("reason", "") << "\n"
            << "traffic:   " << traffic.value("rps", 0.0) << " req/s, "
            << traffic.value("in_flight", 0) << " in flight, " << traffic.value("held", 0)
            << " waiting\n"
            << "restarts:  " << s.value("restarts", 0) << "\n"
            << "callers:   "
            << (s.value("shared", false) ? "other tenants may call it, paying "
                                         : "its own tenant's keys only; other tenants would pay ")
            << s.value("price_per_request", "0") << " per request and "
            << s.value("price_per_1k_tokens", "0") << " per 1,000 tokens\n\n";
  print_table(std::cout, s["replicas"], kReplicaColumns);
}

Action service_call(std::string method, std::function<std::string()> target,
                    std::function<std::optional<json>()> body) {
  return [method = std::move(method), target = std::move(target),
          body = std::move(body)](Session& session) -> int {
    const std::optional<json> sent = body();
    if (!sent) return kUsage;
    json answer;
    const int code = session.try_call(method, target(), *sent, answer);
    if (code != kOk) {
      session.report(answer);
      return code;
    }
    if (session.json_output()) {
      std::cout << answer.dump(2) << "\n";
    } else {
      print_service(answer);
    }
    return kOk;
  };
}

void add_shape_options(CLI::App& command, Options& o) {
  // --model names the model the service serves here, not a GPU model (--gpu-type).
  add_placement_options(command, o.placement, true, false);
  command.add_option("--image", o.image, "the OCI image each replica runs");
  command.add_option("--port", o.port, "the port replicas serve HTTP on");
  command.add_option("--replicas", o.replicas, "MIN:MAX replicas, e.g. 1:8, or a fixed N");
  command.add_option("--target-rps", o.target_rps, "requests per second one replica carries");
  command.add_option("--target-concurrency", o.target_concurrency,
                     "requests one replica answers at once");
  command.add_option("--scale-to-zero-after", o.scale_to_zero_after,
                     "no replicas after this long without a request (10m, 1h)");
  command.add_option("--readiness", o.readiness,
                     "the path that answers 2xx when a replica is ready");
  command.add_option("--ready-timeout", o.ready_timeout,
                     "a new replica not ready by then stops the rollout (default 5m)");
  command.add_option("--model", o.model, "the model name /v1/chat/completions routes here by");
  command.add_option("--env", o.env, "KEY=VALUE, repeatable")->allow_extra_args(false);
  command.add_option("--shared", o.shared,
                     "yes: other tenants may make caller keys to it and pay per use; no: not");
  command.add_option("--price-per-request", o.price_per_request,
                     "what another tenant's caller pays per answered request, e.g. 0.001");
  command.add_option("--price-per-1k-tokens", o.price_per_1k_tokens,
                     "what another tenant's caller pays per 1,000 tokens, e.g. 0.002");
  command.add_option("command", o.command, "the command each replica runs, after --");
}

}  // namespace

void add_service_commands(CLI::App& app, Action& action) {
  static Options o;  // Lives as long as the program: the actions read it after parsing.

  CLI::App* services = add_group(
      app, "services", "endpoints served over replicas: create, list, show, update, delete");
  CLI::App* create = services->add_subcommand("create", "make a service");
  create->add_option("name", o.name, "its name")->required();
  create->add_option("--project", o.project, "project id (default: the only one)");
  create->add_flag("--spot-fallback", o.spot_fallback,
                   "spot replicas that cannot get spot capacity start on-demand");
  add_shape_options(*create, o);
  create->callback([&action] {
    action = service_call(
        "POST", [] { return std::string("/v1/services"); }, [] { return service_body(o, true); });
  });
  CLI::App* update = services->add_subcommand(
      "update", "change a service: a new image, command, port or readiness rolls out");
  update->add_option("name", o.name, "the service's name or id")->required();
  add_shape_options(*update, o);
  update->callback([&action] {
    action = service_call(
        "PATCH", [] { return "/v1/services/" + percent_encode(o.name); },
        [] { return service_body(o, false); });
  });
  CLI::App* show = services->add_subcommand("show", "one service, with its replicas");
  show->add_option("name", o.name, "the service's name or id")->required();
  show->callback([&action] {
    action = service_call(
        "GET", [] { return "/v1/services/" + percent_encode(o.name); },
        [] { return std::optional<json>(nullptr); });
  });
  CLI::App* remove = services->add_subcommand("delete", "delete a service and stop its replicas");
  remove->add_option("name", o.name, "the service's name or id")->required();
  remove->callback([&action] {
    action = show_call("DELETE", [] { return "/v1/services/" + percent_encode(o.name); });
  });
  static std::string key_name, key_id;
  CLI::App* keys =
      add_group(*services, "keys", "keys for a service's callers: create, list, revoke");
  CLI::App* key_create = keys->add_subcommand(
      "create",
      "a key for one caller, shown once; to another tenant's shared service (by id), a caller key "
      "your tenant pays for");
  key_create->add_option("service", o.name, "the service's name or id")->required();
  key_create->add_option("name", key_name, "the caller's name")->required();
  key_create->callback([&action] {
    action = show_call(
        "POST", [] { return "/v1/services/" + percent_encode(o.name) + "/keys"; },
        [] { return json{{"name", key_name}}; });
  });
  CLI::App* key_list = keys->add_subcommand("list", "the service's keys, revoked ones too");
  key_list->add_option("service", o.name, "the service's name or id")->required();
  key_list->callback([&action] {
    static const int kAll = 0;
    action = show_list([] { return "/v1/services/" + percent_encode(o.name) + "/keys"; }, kAll,
                       kKeyColumns);
  });
  CLI::App* key_revoke = keys->add_subcommand("revoke", "stop a key working, at once");
  key_revoke->add_option("service", o.name, "the service's name or id")->required();
  key_revoke->add_option("key", key_id, "the key's id")->required();
  key_revoke->callback([&action] {
    action = show_call("DELETE", [] {
      return "/v1/services/" + percent_encode(o.name) + "/keys/" + percent_encode(key_id);
    });
  });
  static std::string margin_from, margin_to;
  CLI::App* margin = services->add_subcommand(
      "margin", "what other tenants' callers paid for a service against its GPU cost");
  margin->add_option("service", o.name, "the service's name or id")->required();
  margin->add_option("--from", margin_from, "RFC 3339 time or YYYY-MM (default: this month)");
  margin->add_option("--to", margin_to, "RFC 3339 time or YYYY-MM (default: now)");
  margin->callback([&action] {
    action = show_call("GET", [] {
      std::string target = "/v1/services/" + percent_encode(o.name) + "/margin";
      std::string sep = "?";
      for (const auto& [name, value] : {std::pair{"from", &margin_from}, {"to", &margin_to}}) {
        if (value->empty()) continue;
        target += sep + name + "=" + percent_encode(*value);
        sep = "&";
      }
      return target;
    });
  });
  add_list(
      *services, "list", "the services", "/v1/services",
      {{.flag = "--tenant", .name = "tenant_id", .help = "only this tenant's (operator admins)"},
       {.flag = "--project", .name = "project_id", .help = "only this project's"},
       {.flag = "--shared",
        .name = "shared",
        .help = "instead: other tenants' services shared with yours, to make keys for and call",
        .toggle = true}},
      kServiceColumns, action);
}

}  // namespace allot::cli
