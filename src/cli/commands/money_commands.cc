// topup and balance: a tenant's money.
#include <optional>

#include "cli/commands.h"

namespace allot::cli {
namespace {

using nlohmann::json;

const std::vector<Column> kStatementColumns = {{"at", "at"},           {"code", "code"},
                                               {"kind", "kind"},       {"amount", "amount"},
                                               {"account", "account"}, {"id", "id"}};

struct Options {
  std::string tenant, amount, expires;
  std::optional<std::string> id;  // Sent whenever given, even empty: the daemon refuses that.
  bool credit = false;
  bool ledger = false;
  int limit = 0;
};

std::string tenant_path(const std::string& tenant) {
  return "/v1/tenants/" + (tenant.empty() ? std::string("me") : tenant);
}

}  // namespace

void add_money_commands(CLI::App& app, Action& action) {
  static Options o;  // Lives as long as the program: the actions read it after parsing.

  CLI::App* topup = app.add_subcommand("topup", "record money paid in by a tenant, or a credit");
  topup->add_option("tenant", o.tenant, "the tenant's id")->required();
  topup->add_option("amount", o.amount, "a decimal amount, e.g. 100.00")->required();
  topup->add_flag("--credit", o.credit, "a promotional credit rather than money paid in");
  topup->add_option("--expires", o.expires, "a credit lapses then (RFC 3339 UTC)");
  topup->add_option("--id", o.id, "an idempotency key: the same top-up again changes nothing");
  topup->callback([&action] {
    action = show_call(
        "POST", [] { return tenant_path(o.tenant) + "/topups"; },
        [] {
          json body{{"amount", o.amount}};
          if (o.credit) body["credit"] = true;
          if (!o.expires.empty()) body["expires_at"] = o.expires;
          if (o.id) body["id"] = *o.id;
          return body;
        });
  });

  CLI::App* balance = app.add_subcommand("balance", "a tenant's balance (default: your own)");
  balance->add_option("tenant", o.tenant, "the tenant's id");
  balance->add_flag("--ledger", o.ledger, "list the transfers on its accounts instead");
  add_limit(*balance, o.limit);
  balance->callback([&action] {
    if (o.ledger) {
      action =
          show_list([] { return tenant_path(o.tenant) + "/ledger"; }, o.limit, kStatementColumns);
    } else {
      action = show_call("GET", [] { return tenant_path(o.tenant) + "/balance"; });
    }
  });
}

}  // namespace allot::cli
