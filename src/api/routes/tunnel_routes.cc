// The routes of the nodes' tunnels (api/tunnel_hub.h): an agent's control connection and the
// streams it dials back; a tenant's port-forwards and exec sessions through them; and the list of
// an instance's published ports with their signed links.
#include <algorithm>
#include <boost/algorithm/string/predicate.hpp>
#include <charconv>

#include <fmt/format.h>

#include "api/port_access.h"
#include "api/port_proxy.h"
#include "api/routes/cluster.h"
#include "api/routes_util.h"
#include "client/frames.h"
#include "common/clock.h"
#include "common/json_depth.h"
#include "core/kernel/validate.h"

namespace allot {

using nlohmann::json;

namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::awaitable;

bool asks_upgrade(const Exchange& exchange, std::string_view protocol) {
  return boost::algorithm::iequals(exchange.request[http::field::upgrade], protocol);
}

awaitable<bool> refuse_plain(Exchange& exchange, std::string_view protocol) {
  HttpResponse refused = error_reply(
      Error{ErrorCode::kInvalidArgument,
            fmt::format("this endpoint upgrades the connection: send Connection: Upgrade and "
                        "Upgrade: {}",
                        protocol)});
  co_await exchange.answer(std::move(refused));
  co_return false;
}

awaitable<bool> control_relay(TunnelHub& hub, std::string node_id, Exchange& exchange) {
  if (!asks_upgrade(exchange, kTunnelProtocol))
    co_return co_await refuse_plain(exchange, kTunnelProtocol);
  co_return co_await hub.serve_control(std::move(node_id), exchange);
}

awaitable<bool> dial_back_relay(TunnelHub& hub, std::string node_id, std::string stream_id,
                                std::string refusal, Exchange& exchange) {
  if (refusal.empty() && !asks_upgrade(exchange, kStreamProtocol)) {
    co_return co_await refuse_plain(exchange, kStreamProtocol);
  }
  co_return co_await hub.serve_dial_back(std::move(node_id), std::move(stream_id),
                                         std::move(refusal), exchange);
}

awaitable<bool> forward_relay(TunnelHub& hub, std::string node_id, std::string instance_id,
                              int port, Exchange& exchange) {
  if (!asks_upgrade(exchange, kStreamProtocol))
    co_return co_await refuse_plain(exchange, kStreamProtocol);
  co_return co_await forward_tcp(hub, std::move(node_id), std::move(instance_id), port, exchange);
}

awaitable<bool> exec_relay(TunnelHub& hub, std::string node_id, json what,
                           std::function<void(int, std::string)> audit, Exchange& exchange) {
  if (!asks_upgrade(exchange, kExecProtocol))
    co_return co_await refuse_plain(exchange, kExecProtocol);
  co_return co_await relay_exec(hub, std::move(node_id), std::move(what), exchange,
                                std::move(audit));
}

awaitable<bool> browser_relay(TunnelHub& hub, std::string node_id, json what,
                              std::function<void(int, std::string)> audit, Exchange& exchange) {
  if (!boost::beast::websocket::is_upgrade(exchange.request)) {
    co_return co_await refuse_plain(exchange, "websocket");
  }
  co_return co_await relay_browser_exec(hub, std::move(node_id), std::move(what), exchange,
                                        std::move(audit));
}

HttpResponse relayed(std::function<awaitable<bool>(Exchange&)> relay) {
  HttpResponse response;
  response.authenticated = true;
  response.relay = std::move(relay);
  return response;
}

// GET /v1/agent/tunnel: the agent's control connection.
Result<HttpResponse> open_tunnel(Call& call) {
  return relayed([hub = &call.tunnels, node = call.caller.node_id](Exchange& exchange) {
    return control_relay(*hub, node, exchange);
  });
}

// GET /v1/agent/tunnel/{stream}[?refused=WHY]: a stream the agent dialled back.
Result<HttpResponse> dial_back(Call& call) {
  const std::string& stream = call.params.front();
  if (stream.size() > 64 || !stream.starts_with("str_")) {
    return fail(ErrorCode::kInvalidId, "a stream id is str_ and hex digits");
  }
  std::string refusal;
  if (auto found = call.target.query.find("refused"); found != call.target.query.end()) {
    refusal = found->second.substr(0, 500);
    if (refusal.empty()) refusal = "the agent could not reach the port";
  }
  return relayed(
      [hub = &call.tunnels, node = call.caller.node_id, stream, refusal](Exchange& exchange) {
        return dial_back_relay(*hub, node, stream, refusal, exchange);
      });
}

Result<int> path_port(const std::string& text) {
  int64_t port = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || port < 1 ||
      port > 65535) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("'{}' is not a port (1 to 65535)", text.substr(0, 16)));
  }
  return static_cast<int>(port);
}

// An instance the caller may reach into: theirs, not as a viewer, and running.
Result<const Instance*> reachable(const Instance* instance, const Caller& caller,
                                  const std::string& id) {
  if (instance == nullptr || !may_see_tenant(caller, instance->tenant_id)) {
    return fail(ErrorCode::kNotFound, "no instance " + id);
  }
  ALLOT_TRY(require_launcher(caller));
  if (instance->state != InstanceState::kRunning || instance->node_id.empty()) {
    return fail(ErrorCode::kConflict,
                fmt::format("instance {} is {}: it can be reached while it runs", id,
                            instance_state_name(instance->state)));
  }
  return instance;
}

// GET /v1/instances/{id}/forward/{port}: a TCP connection to any port of the instance.
Result<HttpResponse> forward_port(ViewCall& call) {
  const std::string& id = call.params.at(0);
  ALLOT_TRY(check_id("instance id", id, "ins"));
  ALLOT_TRY_LET(const int port, path_port(call.params.at(1)));
  const ShownInstance shown = call.view.instance(id);
  ALLOT_TRY_LET(const Instance* instance,
                reachable(shown ? &shown->object() : nullptr, call.caller, id));
  return relayed([hub = &call.tunnels, node = instance->node_id, id, port](Exchange& exchange) {
    return forward_relay(*hub, node, id, port, exchange);
  });
}

// An exec's query: `command` (a JSON array of strings), `tty`, `cols` and `rows`; what the
// agent is told to run.
Result<json> read_exec(const Target& target) {
  constexpr size_t kMaxArgs = 64;
  constexpr size_t kMaxCommandBytes = size_t{16} * 1024;
  for (const auto& [name, value] : target.query) {
    if (name != "command" && name != "tty" && name != "cols" && name != "rows") {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("unknown parameter '{}': an exec takes command, tty, cols and rows",
                              name.substr(0, 32)));
    }
  }
  const auto command = target.query.find("command");
  if (command == target.query.end()) {
    return fail(ErrorCode::kMissingField, "'command' is required: a JSON array of strings");
  }
  const json argv = parse_outside_json(command->second);
  const bool strings =
      argv.is_array() && std::ranges::all_of(argv, [](const json& a) {
        return a.is_string() && a.get_ref<const std::string&>().find('\0') == std::string::npos;
      });
  if (!strings || argv.empty() || argv.size() > kMaxArgs ||
      command->second.size() > kMaxCommandBytes) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("'command' must be a JSON array of 1 to {} strings, at most {} bytes",
                            kMaxArgs, kMaxCommandBytes));
  }
  json exec = {{"argv", argv}, {"tty", false}, {"cols", 80}, {"rows", 24}};
  if (auto tty = target.query.find("tty"); tty != target.query.end()) {
    if (tty->second != "true" && tty->second != "false") {
      return fail(ErrorCode::kInvalidArgument, "'tty' must be true or false");
    }
    exec["tty"] = tty->second == "true";
  }
  for (const char* name : {"cols", "rows"}) {
    const auto found = target.query.find(name);
    if (found == target.query.end()) continue;
    int value = 0;
    const std::string& text = found->second;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size() || value < 1 || value > 9999) {
      return fail(ErrorCode::kInvalidArgument, fmt::format("'{}' must be 1 to 9999", name));
    }
    exec[name] = value;
  }
  return exec;
}

// The running instance `caller` may exec into: as reachable(), where the tenant allows exec.
Result<const Instance*> exec_target(const State& state, const Caller& caller,
                                    const std::string& id) {
  ALLOT_TRY(check_id("instance id", id, "ins"));
  ALLOT_TRY_LET(const Instance* instance, reachable(state.instance(id), caller, id));
  const Tenant* tenant = state.tenant(instance->tenant_id);
  if (tenant != nullptr && !tenant->exec_allowed) {
    return fail(ErrorCode::kForbidden,
                fmt::format("the operator has turned exec off for tenant {}", tenant->id));
  }
  return instance;
}

// Audits a session's start (on disk before the 101) and hands the connection to `relay`, which
// reports how it ended to `audit`.
template <typename Relay>
HttpResponse start_session(Call& call, const Caller& caller, const Instance& instance, json exec,
                           std::string method, Relay relay) {
  const AuditEntry entry{.tenant_id = caller.tenant_id,
                         .user_id = caller.user_id,
                         .key_id = caller.key_id,
                         .method = std::move(method),
                         .path = call.target.path,
                         .target_id = instance.id};
  AuditEntry started = entry;
  started.status = 101;
  call.ctx.audit(std::move(started));
  auto audit = [later = call.audit_later, entry](int status, std::string code) {
    AuditEntry ended = entry;
    ended.status = status;
    ended.error_code = std::move(code);
    later(std::move(ended));
  };
  json what = {{"instance", instance.id}, {"exec", std::move(exec)}};
  return relayed([hub = &call.tunnels, node = instance.node_id, what = std::move(what), audit,
                  relay](Exchange& exchange) { return relay(*hub, node, what, audit, exchange); });
}

// GET /v1/instances/{id}/exec: runs a command in the instance, its stdio carried as frames.
Result<HttpResponse> exec_instance(Call& call) {
  ALLOT_TRY_LET(const Instance* instance,
                exec_target(call.ctx.state(), call.caller, call.params.front()));
  ALLOT_TRY_LET(json exec, read_exec(call.target));
  return start_session(call, call.caller, *instance, std::move(exec), "EXEC", exec_relay);
}

// POST /v1/instances/{id}/shell-ticket: what lets a browser open a shell (it cannot send a key
// with a WebSocket).
Result<HttpResponse> shell_ticket(Call& call) {
  ALLOT_TRY_LET(const Instance* instance,
                exec_target(call.ctx.state(), call.caller, call.params.front()));
  if (!call.options.sealer) {
    return fail(ErrorCode::kUnavailable, "this deployment has no key to sign tickets with");
  }
  const TimeMs expires_ms = call.ctx.now_ms() + kTicketLifetimeMs;
  ALLOT_TRY_LET(const std::string ticket, sign_shell_ticket(*call.options.sealer, instance->id,
                                                            call.caller.key_id, expires_ms));
  return json_reply(
      201, {{"ticket", ticket},
            {"expires_at", format_time(expires_ms)},
            {"path", fmt::format("/v1/instances/{}/shell?ticket={}", instance->id, ticket)}});
}

// GET /v1/instances/{id}/shell?ticket=T[&cols&rows]: a WebSocket carrying a shell's frames.
Result<HttpResponse> browser_shell(Call& call) {
  const std::string& id = call.params.front();
  ALLOT_TRY(check_id("instance id", id, "ins"));
  const auto ticket = call.target.query.find("ticket");
  if (ticket == call.target.query.end() || !call.options.sealer) {
    return fail(ErrorCode::kUnauthenticated,
                "a shell needs a ticket: POST /v1/instances/{id}/shell-ticket");
  }
  ALLOT_TRY_LET(const std::string key_id,
                check_shell_ticket(*call.options.sealer, ticket->second, id, call.ctx.now_ms()));
  const ApiKey* key = call.ctx.state().key(key_id);
  ALLOT_TRY_LET(const Caller caller,
                caller_of(key, key == nullptr ? nullptr : call.ctx.state().user(key->user_id)));
  ALLOT_TRY_LET(const Instance* instance, exec_target(call.ctx.state(), caller, id));
  json exec = {{"argv", json::array({"/bin/sh", "-c", net::kLoginShell})},
               {"tty", true},
               {"cols", 80},
               {"rows", 24}};
  for (const char* name : {"cols", "rows"}) {
    const auto found = call.target.query.find(name);
    if (found == call.target.query.end()) continue;
    int value = 0;
    const auto [end, ec] =
        std::from_chars(found->second.data(), found->second.data() + found->second.size(), value);
    if (ec == std::errc{} && end == found->second.data() + found->second.size() && value >= 1 &&
        value <= 9999) {
      exec[name] = value;
    }
  }
  return start_session(call, caller, *instance, std::move(exec), "SHELL", browser_relay);
}

// GET /v1/instances/{id}/ports: its published ports, each with its path and a signed link.
Result<HttpResponse> list_ports(Call& call) {
  const std::string& id = call.params.front();
  ALLOT_TRY(check_id("instance id", id, "ins"));
  const Instance* instance = call.ctx.state().instance(id);
  if (instance == nullptr || !may_see_tenant(call.caller, instance->tenant_id)) {
    return fail(ErrorCode::kNotFound, "no instance " + id);
  }
  ALLOT_TRY(require_launcher(call.caller));
  const TimeMs expires_ms = call.ctx.now_ms() + kLinkLifetimeMs;
  json items = json::array();
  for (const PublishedPort& port : instance->spec.ports) {
    const std::string path = port_prefix(id, port.port) + "/";
    json item = {{"port", port.port}, {"protocol", port.protocol}, {"public", port.is_public},
                 {"path", path},      {"link", nullptr},           {"link_expires_at", nullptr}};
    if (call.options.sealer) {
      ALLOT_TRY_LET(const std::string token,
                    sign_port_link(*call.options.sealer, id, port.port, expires_ms));
      item["link"] = fmt::format("{}?{}={}", path, kLinkParameter, token);
      item["link_expires_at"] = format_time(expires_ms);
    }
    items.push_back(std::move(item));
  }
  return json_reply(
      200,
      {{"instance_id", id}, {"state", instance_state_name(instance->state)}, {"items", items}});
}

constexpr Route kRoutes[] = {
    {"GET", "/v1/agent/tunnel", open_tunnel, RouteAuth::kNode},
    {"GET", "/v1/agent/tunnel/{stream}", dial_back, RouteAuth::kNode},
    {"GET", "/v1/instances/{id}/ports", list_ports},
    {"GET", "/v1/instances/{id}/exec", exec_instance},
    {"POST", "/v1/instances/{id}/shell-ticket", shell_ticket},
    // A ticket, not a key, authenticates it: the handler checks it.
    {"GET", "/v1/instances/{id}/shell", browser_shell, RouteAuth::kJoin},
    {"GET", "/v1/instances/{id}/forward/{port}", nullptr, RouteAuth::kUser, forward_port},
};

}  // namespace

std::span<const Route> tunnel_routes() { return kRoutes; }

}  // namespace allot
