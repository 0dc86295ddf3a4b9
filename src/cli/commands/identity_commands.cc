#include <iostream>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "common/url.h"

namespace allot::cli {
namespace {

using nlohmann::json;

const std::vector<Column> kTenantColumns = {{"id", "id"},
                                            {"name", "name"},
                                            {"operator", "is_operator"},
                                            {"weight", "weight"},
                                            {"created", "created_at"}};
const std::vector<Column> kProjectColumns = {
    {"id", "id"}, {"tenant", "tenant_id"}, {"name", "name"}, {"created", "created_at"}};
const std::vector<Column> kUserColumns = {{"id", "id"},     {"tenant", "tenant_id"},
                                          {"name", "name"}, {"email", "email"},
                                          {"role", "role"}, {"disabled", "disabled"}};
const std::vector<Column> kKeyColumns = {
    {"id", "id"},         {"user", "user_id"},       {"name", "name"},
    {"prefix", "prefix"}, {"created", "created_at"}, {"revoked", "revoked_at"}};
const std::vector<Column> kAuditColumns = {{"seq", "seq"},       {"at", "at"},
                                           {"user", "user_id"},  {"method", "method"},
                                           {"path", "path"},     {"target", "target_id"},
                                           {"status", "status"}, {"error", "error_code"}};

// The state each command's options write into; it outlives parsing, so actions may read it.
struct Options {
  std::string id, name, email, role, tenant, user, billing, credit_limit;
  int limit = 0;
  std::optional<int64_t> weight;
  bool disable = false, enable = false;
  // A tenant's billing details: unset leaves one as it is, "" clears it.
  std::optional<std::string> legal_name, address, tax_id, billing_email;
};

// "\n" typed on a command line as a line break: addresses have several lines.
std::string unescape_lines(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == 'n') {
      out += '\n';
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

void add_resource(CLI::App& app, Action& action, Options& o, const std::string& noun,
                  const std::string& path, const std::vector<Column>& columns,
                  const std::function<void(CLI::App&)>& add_create) {
  CLI::App* group = app.add_subcommand(noun, "manage " + noun)->require_subcommand(1);
  group->fallthrough();
  CLI::App* list = group->add_subcommand("list", "list " + noun);
  add_limit(*list, o.limit);
  if (noun != "tenants") list->add_option("--tenant", o.tenant, "only this tenant's");
  list->callback([&action, &o, path, &columns] {
    action = show_list([&o, path] { return path + query({{"tenant_id", &o.tenant}}); }, o.limit,
                       columns);
  });
  CLI::App* get = group->add_subcommand("get", "show one");
  get->add_option("id", o.id, "its id")->required();
  get->callback(
      [&action, &o, path] { action = show_call("GET", [&o, path] { return path + "/" + o.id; }); });
  add_create(*group);
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

// A query string from the options that are set, e.g. "?tenant_id=ten_...".
std::string query(std::initializer_list<std::pair<const char*, const std::string*>> params) {
  std::string out;
  for (const auto& [name, value] : params) {
    if (value->empty()) continue;
    out += (out.empty() ? "?" : "&") + std::string(name) + "=" + percent_encode(*value);
  }
  return out;
}

Action show_call(std::string method, std::function<std::string()> target,
                 std::function<json()> body) {
  return [method = std::move(method), target = std::move(target),
          body = std::move(body)](Session& session) {
    json answer;
    const int code = session.call(method, target(), body(), answer);
    if (code == kOk) session.show(answer);
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

CLI::Option* add_limit(CLI::App& command, int& limit) {
  return command.add_option("--limit", limit, "show at most this many (default: all)")
      ->check(CLI::NonNegativeNumber);
}

CLI::App* add_tenant_list(CLI::App& parent, const std::string& description, std::string path,
                          std::string all_param, const std::string& all_what,
                          const std::vector<Column>& columns, Action& action) {
  struct Flags {
    std::string tenant;
    int limit = 0;
    bool all = false;
  };
  auto flags = std::make_shared<Flags>();  // The action reads them after parsing.
  CLI::App* list = parent.add_subcommand("list", description);
  add_limit(*list, flags->limit);
  list->add_option("--tenant", flags->tenant, "only this tenant's");
  list->add_flag("--all", flags->all, all_what + " too");
  list->callback(
      [flags, path = std::move(path), all_param = std::move(all_param), &columns, &action] {
        action = show_list(
            [flags, path, all_param] {
              const std::string all = flags->all ? "true" : "";
              return path + query({{"tenant_id", &flags->tenant}, {all_param.c_str(), &all}});
            },
            flags->limit, columns);
      });
  return list;
}

CLI::Option* add_newest_limit(CLI::App& command, int& limit) {
  return command.add_option("--limit", limit, "show only the newest N (default: all)")
      ->check(CLI::NonNegativeNumber);
}

void add_identity_commands(CLI::App& app, Action& action) {
  static Options o;  // Lives as long as the program: the actions read it after parsing.

  app.add_subcommand("whoami", "show the key's user and tenant")->callback([&action] {
    action = show_call("GET", [] { return std::string("/v1/whoami"); });
  });
  app.add_subcommand("version", "show the server's version")->callback([&action] {
    action = show_call("GET", [] { return std::string("/version"); });
  });

  add_resource(app, action, o, "tenants", "/v1/tenants", kTenantColumns, [&](CLI::App& group) {
    CLI::App* create = group.add_subcommand("create", "create a tenant (operator admins)");
    create->add_option("name", o.name, "the tenant's name")->required();
    create->callback([&action] {
      action = show_call(
          "POST", [] { return std::string("/v1/tenants"); }, [] { return json{{"name", o.name}}; });
    });
    CLI::App* set =
        group.add_subcommand("set", "change a tenant's fair-share weight or how it pays");
    set->add_option("id", o.id, "its id")->required();
    set->add_option("--weight", o.weight, "1 to 1000: its share of a contended cluster");
    set->add_option("--billing", o.billing, "prepaid or postpaid");
    set->add_option("--credit-limit", o.credit_limit, "postpaid: the most it may owe (0: none)");
    // Its billing details, printed on its invoices ("" clears one).
    set->add_option("--legal-name", o.legal_name, "its legal name, for its invoices");
    set->add_option("--address", o.address, "its postal address (\\n between lines)");
    set->add_option("--tax-id", o.tax_id, "its tax (VAT) id");
    set->add_option("--billing-email", o.billing_email, "where its invoices go");
    set->callback([&action] {
      action = show_call(
          "PATCH", [] { return "/v1/tenants/" + o.id; },
          [] {
            json body = json::object();
            if (o.weight) body["weight"] = *o.weight;
            if (!o.billing.empty()) body["billing"] = o.billing;
            if (!o.credit_limit.empty()) body["credit_limit"] = o.credit_limit;
            json details = json::object();
            for (const auto& [field, value] :
                 {std::pair{"legal_name", &o.legal_name}, std::pair{"address", &o.address},
                  std::pair{"tax_id", &o.tax_id}, std::pair{"email", &o.billing_email}}) {
              if (*value) details[field] = unescape_lines(**value);
            }
            if (!details.empty()) body["billing_details"] = details;
            return body;
          });
    });
  });

  add_resource(app, action, o, "projects", "/v1/projects", kProjectColumns, [&](CLI::App& group) {
    CLI::App* create = group.add_subcommand("create", "create a project");
    create->add_option("name", o.name, "the project's name")->required();
    create->add_option("--tenant", o.tenant, "the tenant (default: your own)");
    create->callback([&action] {
      action = show_call(
          "POST", [] { return std::string("/v1/projects"); },
          [] {
            json body{{"name", o.name}};
            if (!o.tenant.empty()) body["tenant_id"] = o.tenant;
            return body;
          });
    });
    CLI::App* remove = group.add_subcommand("delete", "delete a project");
    remove->add_option("id", o.id, "its id")->required();
    remove->callback(
        [&action] { action = show_call("DELETE", [] { return "/v1/projects/" + o.id; }); });
    add_project_idle_commands(group, action);
  });

  add_resource(app, action, o, "users", "/v1/users", kUserColumns, [&](CLI::App& group) {
    CLI::App* create = group.add_subcommand("create", "create a user");
    create->add_option("--name", o.name, "the user's name")->required();
    create->add_option("--email", o.email, "the user's e-mail address")->required();
    create->add_option("--role", o.role, "tenant-admin, member (default) or viewer");
    create->add_option("--tenant", o.tenant, "the tenant (default: your own)");
    create->callback([&action] {
      action = show_call(
          "POST", [] { return std::string("/v1/users"); },
          [] {
            json body{{"name", o.name}, {"email", o.email}};
            if (!o.role.empty()) body["role"] = o.role;
            if (!o.tenant.empty()) body["tenant_id"] = o.tenant;
            return body;
          });
    });
    CLI::App* set = group.add_subcommand("set", "change a user's name, role or state");
    set->add_option("id", o.id, "its id")->required();
    set->add_option("--name", o.name, "new name");
    set->add_option("--role", o.role, "new role");
    auto* disable = set->add_flag("--disable", o.disable, "disable the user and its keys");
    set->add_flag("--enable", o.enable, "enable the user again")->excludes(disable);
    set->callback([&action] {
      action = show_call(
          "PATCH", [] { return "/v1/users/" + o.id; },
          [] {
            json body = json::object();
            if (!o.name.empty()) body["name"] = o.name;
            if (!o.role.empty()) body["role"] = o.role;
            if (o.disable) body["disabled"] = true;
            if (o.enable) body["disabled"] = false;
            return body;
          });
    });
  });

  add_resource(app, action, o, "keys", "/v1/keys", kKeyColumns, [&](CLI::App& group) {
    CLI::App* create = group.add_subcommand("create", "create an API key (shown once)");
    create->add_option("name", o.name, "what the key is for")->required();
    create->add_option("--user", o.user, "the user (default: yourself)");
    create->callback([&action] {
      action = show_call(
          "POST", [] { return std::string("/v1/keys"); },
          [] {
            json body{{"name", o.name}};
            if (!o.user.empty()) body["user_id"] = o.user;
            return body;
          });
    });
    CLI::App* revoke = group.add_subcommand("revoke", "revoke an API key");
    revoke->add_option("id", o.id, "its id")->required();
    revoke->callback(
        [&action] { action = show_call("DELETE", [] { return "/v1/keys/" + o.id; }); });
  });

  CLI::App* audit = app.add_subcommand("audit", "read the audit log (admins), oldest first");
  add_newest_limit(*audit, o.limit);
  audit->add_option("--tenant", o.tenant, "only this tenant's calls");
  audit->callback([&action] {
    action = show_list([] { return "/v1/audit" + query({{"tenant_id", &o.tenant}}); }, o.limit,
                       kAuditColumns, true);
  });
}

}  // namespace allot::cli
