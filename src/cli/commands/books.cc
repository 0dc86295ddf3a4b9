// The books domain's commands, in the order `allot --help` lists them.
#include "cli/commands.h"

namespace allot::cli {

void add_books_domain_commands(CLI::App& app, Action& action) { add_finance_commands(app, action); }

}  // namespace allot::cli
