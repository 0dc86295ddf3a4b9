// budget and events: a tenant's monthly budgets, their alerts, and the event log.
#include "cli/commands.h"

namespace allot::cli {
namespace {

using nlohmann::json;

const std::vector<Column> kBudgetColumns = {{"id", "id"},
                                            {"tenant", "tenant_id"},
                                            {"project", "project_id"},
                                            {"amount", "amount"},
                                            {"spend", "spend"},
                                            {"month", "month"},
                                            {"reached", "reached_pct"},
                                            {"enforcement", "enforcement"},
                                            {"webhook", "webhook_url"}};
const std::vector<Column> kEventColumns = {
    {"seq", "seq"}, {"at", "at"}, {"tenant", "tenant_id"}, {"kind", "kind"}, {"data", "data"}};

struct Options {
  std::string tenant, project, amount, enforcement, webhook_url, webhook_secret;
  std::vector<int64_t> thresholds;
};

}  // namespace

void add_budget_commands(CLI::App& app, Action& action) {
  static Options o;  // Lives as long as the program: the actions read it after parsing.

  CLI::App* budget = add_group(app, "budget", "monthly budgets per tenant or project");
  add_tenant_list(*budget, "list budgets with this month's spend", "/v1/budgets", "include_deleted",
                  "deleted ones", kBudgetColumns, action);
  CLI::App* set = budget->add_subcommand("set", "set the budget of a tenant or one project");
  set->add_option("--tenant", o.tenant, "the tenant (default: yours)");
  set->add_option("--project", o.project, "only this project of it");
  set->add_option("--amount", o.amount, "per calendar month, e.g. 2500.00")->required();
  set->add_option("--thresholds", o.thresholds, "alert at these percents (default 50 80 100)")
      ->delimiter(',');
  set->add_option("--enforcement", o.enforcement, "none (default), block_new or stop_running");
  set->add_option("--webhook-url", o.webhook_url, "POST each alert here, signed");
  set->add_option("--webhook-secret", o.webhook_secret, "the signing secret (default: made)");
  set->callback([&action] {
    action = show_call(
        "PUT", [] { return std::string("/v1/budgets"); },
        [] {
          json body{{"amount", o.amount}};
          put(body, "tenant_id", o.tenant);
          put(body, "project_id", o.project);
          if (!o.thresholds.empty()) body["thresholds_pct"] = o.thresholds;
          put(body, "enforcement", o.enforcement);
          put(body, "webhook_url", o.webhook_url);
          put(body, "webhook_secret", o.webhook_secret);
          return body;
        });
  });
  add_id_call(*budget, "delete", "remove a budget", "DELETE", "/v1/budgets", action);

  add_list(app, "events", "the event log: budget alerts and more, oldest first", "/v1/events",
           {{.flag = "--tenant", .name = "tenant_id", .help = "only this tenant's"}}, kEventColumns,
           action, Limit::kNewest);
}

}  // namespace allot::cli
