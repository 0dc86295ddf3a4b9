// allot: the command-line client.
#include <exception>
#include <iostream>

#include "cli/commands.h"
#include "cli/suggest.h"

int main(int argc, char** argv) {
  using namespace allot::cli;
  CLI::App app{"allot: the Allot command-line client"};
  app.require_subcommand(1);
  app.fallthrough();  // Global options may also follow the subcommand.
  Settings settings;
  app.add_option("--server", settings.server,
                 "server URL, or replicas' URLs separated by commas (env ALLOT_SERVER)");
  app.add_option("--key", settings.key, "API key (env ALLOT_KEY)");
  app.add_option("-o,--output", settings.output, "table (default) or json");
  app.add_option("--config", settings.config_path,
                 "config file (env ALLOT_CONFIG; default ~/.config/allot/config.toml)");
  Action action;
  add_identity_domain_commands(app, action);
  add_cluster_domain_commands(app, action);
  add_admission_domain_commands(app, action);
  add_money_domain_commands(app, action);
  add_books_domain_commands(app, action);
  add_pools_domain_commands(app, action);
  add_regions_domain_commands(app, action);
  add_sim_commands(app, action);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return report_parse_error(app, e);
  }
  if (int code = resolve_settings(settings); code != kOk) return code;
  if (!action) return kUsage;
  Session session(settings);
  // An answer of a shape this client does not expect (an older or newer server, a view with
  // fewer fields) fails the command with a message, never with an abort.
  try {
    return action(session);
  } catch (const std::exception& e) {
    std::cerr << "allot: the server's answer was not what this command expects (" << e.what()
              << "); -o json prints it as it came\n";
    return kServerError;
  }
}
