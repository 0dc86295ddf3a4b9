// registries: tenants' credentials for private image registries. The password is read from
// standard input only, never from a flag (which other users of the machine could see).
#include <iostream>
#include <iterator>

#include "cli/commands.h"
#include "common/url.h"

namespace allot::cli {
namespace {

using nlohmann::json;

const std::vector<Column> kRegistryColumns = {
    {"host", "host"}, {"username", "username"}, {"tenant", "tenant_id"}, {"updated", "updated_at"}};

struct Options {
  std::string host, username, tenant;
  bool password_stdin = false;
};

// The whole of standard input, less the line break a shell or `echo` puts at its end.
std::string read_password() {
  std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

}  // namespace

void add_registry_commands(CLI::App& app, Action& action) {
  static Options o;  // Lives as long as the program: the actions read it after parsing.

  CLI::App* registries = add_group(app, "registries", "credentials for private image registries");
  CLI::App* add = registries->add_subcommand(
      "add", "set the credential for a registry (tenant admins; replaces the one there is)");
  add->add_option("host", o.host, "the registry, HOST[:PORT] as image references name it")
      ->required();
  add->add_option("--username", o.username, "the registry user")->required();
  add->add_flag("--password-stdin", o.password_stdin, "read the password from standard input")
      ->required();
  add->add_option("--tenant", o.tenant, "the tenant (operator admins; default: your own)");
  add->callback([&action] {
    action = [](Session& session) {
      json body{{"host", o.host}, {"username", o.username}, {"password", read_password()}};
      put(body, "tenant_id", o.tenant);
      return show_call(
          "PUT", [] { return std::string("/v1/registries"); }, [body] { return body; })(session);
    };
  });
  add_list(
      *registries, "list", "the credentials' hosts and users", "/v1/registries",
      {{.flag = "--tenant", .name = "tenant_id", .help = "only this tenant's (operator admins)"}},
      kRegistryColumns, action);
  CLI::App* remove = registries->add_subcommand("delete", "delete a credential (tenant admins)");
  remove->add_option("host", o.host, "the registry")->required();
  remove->add_option("--tenant", o.tenant, "the tenant (operator admins; default: your own)");
  remove->callback([&action] {
    action = show_call("DELETE", [] {
      return "/v1/registries/" + percent_encode(o.host) + query({{"tenant_id", &o.tenant}});
    });
  });
}

}  // namespace allot::cli
