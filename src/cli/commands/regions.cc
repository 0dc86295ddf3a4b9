// The regions domain's commands, in the order `allot --help` lists them.
#include "cli/commands.h"

namespace allot::cli {

void add_regions_domain_commands(CLI::App& app, Action& action) {
  add_region_commands(app, action);
}

}  // namespace allot::cli
