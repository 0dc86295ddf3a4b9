// What the CLI says about a command line it cannot parse: the word it did not know, for which
// command, and the nearest name that command knows ("did you mean --gpus?").
#pragma once

#include <CLI/CLI.hpp>

namespace allot::cli {

// Prints help (exit 0) or the mistake with a suggestion on stderr; returns the exit code (0 for
// help, 2 for a usage error).
int report_parse_error(CLI::App& app, const CLI::ParseError& error);

}  // namespace allot::cli
