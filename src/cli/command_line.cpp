// Reading a command line (command_line.hpp).
#include "cli/command_line.hpp"

#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/option_values.hpp"
#include "cli/unknown_words.hpp"

namespace tokbench::cli {

std::vector<Command>& command_registry() {
  static std::vector<Command> commands;
  return commands;
}

ReadCommandLine read_command_line(CLI::App& app, int argc, const char* const* argv) {
  ReadCommandLine read;
  app.description("tokbench: how fast do large language models train?");
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(TOKBENCH_VERSION));
  std::vector<std::pair<const Command*, std::any>> added;
  for (const Command& command : command_registry()) {
    CLI::App* sub = app.add_subcommand(command.name, command.description);
    added.emplace_back(&command, command.add_options(*sub));
  }
  add_value_rules(app);
  std::vector<std::string> args;  // the command line as CLI11 reads it
  const auto refused = [&read](const std::string& line) {
    std::cerr << "tokbench: " << line << "\n";
    read.exit_code = kExitUsage;
    return read;
  };
  try {
    // `--name=` is an empty value, never "take the next word" (option_values.hpp).
    try {
      args = with_empty_values_explicit(app, argc, argv);
    } catch (const std::invalid_argument& e) {
      return refused(e.what());
    }
    std::vector<const char*> words;
    for (const std::string& arg : args) words.push_back(arg.c_str());
    app.parse(static_cast<int>(words.size()), words.data());
  } catch (const CLI::Success& e) {  // --help, --help-all, --version: printed by app.exit, exit 0
    read.exit_code = app.exit(e);
    return read;
  } catch (const CLI::ParseError& e) {
    if (const std::optional<std::string> line = unknown_word_line(app, args)) return refused(*line);
    return refused(std::string(e.what()) + " (see --help)");
  } catch (const std::invalid_argument& e) {  // a subcommand's own check of its options (usage::refuse)
    return refused(e.what());
  }
  for (auto& [command, options] : added) {
    CLI::App* sub = app.get_subcommand(command->name);
    if (sub->parsed()) {
      read.command = command;
      read.sub = sub;
      read.options = std::move(options);
      return read;
    }
  }
  read.exit_code = kExitUsage;  // require_subcommand(1) makes CLI11 refuse this first
  return read;
}

}  // namespace tokbench::cli
