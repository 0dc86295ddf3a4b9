// The identity domain's commands, in the order `allot --help` lists them.
#include "cli/commands.h"

namespace allot::cli {

void add_identity_domain_commands(CLI::App& app, Action& action) {
  add_identity_commands(app, action);
}

}  // namespace allot::cli
