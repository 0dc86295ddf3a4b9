// The pools domain's commands, in the order `allot --help` lists them.
#include "cli/commands.h"

namespace allot::cli {

void add_pools_domain_commands(CLI::App& app, Action& action) {
  add_pool_commands(app, action);
  add_spot_commands(app, action);
}

}  // namespace allot::cli
