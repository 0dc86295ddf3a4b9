// allot: the command-line client.
#include <iostream>

#include "cli/commands.h"
#include "cli/suggest.h"
#include "sim/sim_command.h"

int main(int argc, char** argv) {
  using namespace allot::cli;
  CLI::App app{"allot: the Allot command-line client"};
  app.require_subcommand(1);
  app.fallthrough();  // Global options may also follow the subcommand.
  Settings settings;
  app.add_option("--server", settings.server, "server URL (env ALLOT_SERVER)");
  app.add_option("--key", settings.key, "API key (env ALLOT_KEY)");
  app.add_option("-o,--output", settings.output, "table (default) or json");
  app.add_option("--config", settings.config_path,
                 "config file (env ALLOT_CONFIG; default ~/.config/allot/config.toml)");
  Action action;
  add_identity_commands(app, action);
  add_cluster_commands(app, action);
  add_rules_commands(app, action);
  add_billing_commands(app, action);
  add_budget_commands(app, action);
  add_money_commands(app, action);
  add_finance_commands(app, action);
  add_pool_commands(app, action);
  add_spot_commands(app, action);
  add_region_commands(app, action);
  add_registry_commands(app, action);
  add_image_commands(app, action);
  add_sim_commands(app, action);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return report_parse_error(app, e);
  }
  if (int code = resolve_settings(settings); code != kOk) return code;
  if (!action) return kUsage;
  Session session(settings);
  return action(session);
}
