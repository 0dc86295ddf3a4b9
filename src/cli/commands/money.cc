// The money domain's commands, in the order `allot --help` lists them.
#include "cli/commands.h"

namespace allot::cli {

void add_money_domain_commands(CLI::App& app, Action& action) {
  add_billing_commands(app, action);
  add_budget_commands(app, action);
  add_money_commands(app, action);
}

}  // namespace allot::cli
