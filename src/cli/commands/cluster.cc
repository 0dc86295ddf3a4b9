// The cluster domain's commands, in the order `allot --help` lists them.
#include "cli/commands.h"

namespace allot::cli {

void add_cluster_domain_commands(CLI::App& app, Action& action) {
  add_cluster_commands(app, action);
  add_registry_commands(app, action);
  add_volume_commands(app, action);
  add_service_commands(app, action);
  add_port_commands(app, action);
  add_exec_commands(app, action);
  add_image_commands(app, action);
}

}  // namespace allot::cli
