#include "cli/suggest.h"

#include <iostream>

#include <fmt/format.h>

#include "cli/session.h"
#include "common/nearest.h"

namespace allot::cli {
namespace {

// The subcommand chosen last on the command line: the one whose names a mistake is judged by.
CLI::App* chosen_command(CLI::App& app) {
  CLI::App* command = &app;
  while (!command->get_subcommands().empty()) command = command->get_subcommands().back();
  return command;
}

// "allot run", "allot tenants list".
std::string path_of(const CLI::App* command) {
  std::vector<std::string> names;
  for (; command->get_parent() != nullptr; command = command->get_parent()) {
    names.insert(names.begin(), command->get_name());
  }
  names.insert(names.begin(), "allot");
  return fmt::format("{}", fmt::join(names, " "));
}

// The flags `command` takes, its own and, since options fall through, its parents'.
std::vector<std::string> flags_of(const CLI::App* command) {
  std::vector<std::string> flags;
  for (; command != nullptr; command = command->get_parent()) {
    for (const CLI::Option* option : command->get_options()) {
      for (const std::string& name : option->get_lnames()) flags.push_back("--" + name);
      for (const std::string& name : option->get_snames()) flags.push_back("-" + name);
    }
  }
  return flags;
}

std::vector<std::string> subcommands_of(const CLI::App* command) {
  std::vector<std::string> names;
  for (const CLI::App* sub : command->get_subcommands([](const CLI::App*) { return true; })) {
    names.push_back(sub->get_name());
  }
  return names;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& names) {
  const std::string near = nearest(word, names);
  return near.empty() ? "" : fmt::format("; did you mean {}?", near);
}

// A word that is neither a flag nor a subcommand that `command` knows.
void report_unknown(const CLI::App* command, std::string word) {
  const std::string path = path_of(command);
  if (word.starts_with("-")) {
    word = word.substr(0, word.find('='));  // --gpu=2 names the flag --gpu.
    std::cerr << fmt::format("error: unknown flag {} for '{}'{}\n", word, path,
                             did_you_mean(word, flags_of(command)));
    return;
  }
  const std::vector<std::string> subcommands = subcommands_of(command);
  if (subcommands.empty()) {
    std::cerr << fmt::format("error: '{}' takes no argument '{}'\n", path, word);
    return;
  }
  const std::string hint = did_you_mean(word, subcommands);
  std::cerr << fmt::format(
      "error: unknown command '{}' for '{}'{}\n", word, path,
      hint.empty() ? fmt::format(" (it has: {})", fmt::join(subcommands, ", ")) : hint);
}

}  // namespace

int report_parse_error(CLI::App& app, const CLI::ParseError& error) {
  if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
    return app.exit(error) == 0 ? kOk : kUsage;  // --help: CLI11 prints it.
  }
  CLI::App* command = chosen_command(app);
  // Whatever the error CLI11 raised first (a missing subcommand is checked before leftovers), a
  // word it could not place is the mistake to name.
  const std::vector<std::string> unknown = app.remaining(true);
  // A flag's bad value is the mistake, not what was left after it (`--max-run 1x -- CMD`).
  const bool bad_value = dynamic_cast<const CLI::ConversionError*>(&error) != nullptr ||
                         dynamic_cast<const CLI::ValidationError*>(&error) != nullptr;
  if (!unknown.empty() && !bad_value) {
    report_unknown(command, unknown.front());
  } else if (!subcommands_of(command).empty() && command->get_subcommands().empty() &&
             command->get_require_subcommand_min() > 0) {
    std::cerr << fmt::format("error: '{}' needs a command: {}\n", path_of(command),
                             fmt::join(subcommands_of(command), ", "));
  } else {
    std::cerr << fmt::format("error: {}: {} (see {} --help)\n", path_of(command), error.what(),
                             path_of(command));
  }
  return kUsage;
}

}  // namespace allot::cli
