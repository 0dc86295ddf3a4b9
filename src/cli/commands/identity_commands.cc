#include <optional>

#include "cli/commands.h"

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

// A new project's or user's tenant.
const Param kTenantField = {
    .flag = "--tenant", .name = "tenant_id", .help = "the tenant (default: your own)"};

// The state each command's options write into; it outlives parsing, so actions may read it.
struct Options {
  std::string id, name, role, billing, credit_limit;
  std::optional<int64_t> weight;
  std::optional<bool> exec;
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

void add_resource(CLI::App& app, Action& action, const std::string& noun, const std::string& path,
                  const std::vector<Column>& columns,
                  const std::function<void(CLI::App&)>& add_create) {
  CLI::App* group = add_group(app, noun, "manage " + noun);
  group->fallthrough();
  std::vector<Param> filters;
  if (noun != "tenants") {
    filters.push_back({.flag = "--tenant", .name = "tenant_id", .help = "only this tenant's"});
  }
  add_list(*group, "list", "list " + noun, path, std::move(filters), columns, action);
  add_id_call(*group, "get", "show one", "GET", path, action);
  add_create(*group);
}

}  // namespace

void add_identity_commands(CLI::App& app, Action& action) {
  static Options o;  // Lives as long as the program: the actions read it after parsing.

  app.add_subcommand("whoami", "show the key's user and tenant")->callback([&action] {
    action = show_call("GET", [] { return std::string("/v1/whoami"); });
  });
  app.add_subcommand("version", "show the server's version")->callback([&action] {
    action = show_call("GET", [] { return std::string("/version"); });
  });

  add_resource(app, action, "tenants", "/v1/tenants", kTenantColumns, [&](CLI::App& group) {
    add_body_call(group, "create", "create a tenant (operator admins)", "POST", "/v1/tenants",
                  {{.flag = "name", .name = "name", .help = "the tenant's name", .required = true}},
                  action);
    CLI::App* set =
        group.add_subcommand("set", "change a tenant's fair-share weight, how it pays, or exec");
    set->add_option("id", o.id, "its id")->required();
    set->add_option("--weight", o.weight, "1 to 1000: its share of a contended cluster");
    set->add_option("--billing", o.billing, "prepaid or postpaid");
    set->add_option("--credit-limit", o.credit_limit, "postpaid: the most it may owe (0: none)");
    set->add_option("--exec", o.exec, "true or false: may its members exec into its instances");
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
            if (o.exec) body["exec"] = *o.exec;
            put(body, "billing", o.billing);
            put(body, "credit_limit", o.credit_limit);
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

  add_resource(app, action, "projects", "/v1/projects", kProjectColumns, [&](CLI::App& group) {
    add_body_call(group, "create", "create a project", "POST", "/v1/projects",
                  {{.flag = "name", .name = "name", .help = "the project's name", .required = true},
                   kTenantField},
                  action);
    add_id_call(group, "delete", "delete a project", "DELETE", "/v1/projects", action);
    add_project_idle_commands(group, action);
  });

  add_resource(app, action, "users", "/v1/users", kUserColumns, [&](CLI::App& group) {
    add_body_call(
        group, "create", "create a user", "POST", "/v1/users",
        {{.flag = "--name", .name = "name", .help = "the user's name", .required = true},
         {.flag = "--email",
          .name = "email",
          .help = "the user's e-mail address",
          .required = true},
         {.flag = "--role", .name = "role", .help = "tenant-admin, member (default) or viewer"},
         kTenantField},
        action);
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
            put(body, "name", o.name);
            put(body, "role", o.role);
            if (o.disable) body["disabled"] = true;
            if (o.enable) body["disabled"] = false;
            return body;
          });
    });
  });

  add_resource(app, action, "keys", "/v1/keys", kKeyColumns, [&](CLI::App& group) {
    add_body_call(
        group, "create", "create an API key (shown once)", "POST", "/v1/keys",
        {{.flag = "name", .name = "name", .help = "what the key is for", .required = true},
         {.flag = "--user", .name = "user_id", .help = "the user (default: yourself)"}},
        action);
    add_id_call(group, "revoke", "revoke an API key", "DELETE", "/v1/keys", action);
  });

  add_list(app, "audit", "read the audit log (admins), oldest first", "/v1/audit",
           {{.flag = "--tenant", .name = "tenant_id", .help = "only this tenant's calls"}},
           kAuditColumns, action, Limit::kNewest);
}

}  // namespace allot::cli
