// The admission domain's commands, in the order `allot --help` lists them.
#include "cli/commands.h"

namespace allot::cli {

void add_admission_domain_commands(CLI::App& app, Action& action) {
  add_rules_commands(app, action);
}

}  // namespace allot::cli
