// The `tokbench` program: one binary, subcommands from the command registry. Usage errors
// print one line and exit 2 before any work starts; nothing here knows a subcommand's options.
#include <clocale>
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "process/child_process.hpp"

namespace tokbench::cli {
std::vector<Command>& command_registry() {
  static std::vector<Command> commands;
  return commands;
}
}  // namespace tokbench::cli

int main(int argc, char** argv) {
  // A launcher or a sweep that started this process asked it to die with them (posix_spawn
  // cannot arrange it from their side).
  tokbench::process::honour_parent_death_request();
  // Numbers in reports and JSON always use '.' whatever the user's locale.
  std::setlocale(LC_ALL, "");
  std::setlocale(LC_NUMERIC, "C");
  using namespace tokbench::cli;

  CLI::App app{"tokbench: how fast do large language models train?"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(TOKBENCH_VERSION));
  std::function<int()> action;
  for (auto& command : command_registry()) {
    CLI::App* sub = app.add_subcommand(command.name, command.description);
    auto run = std::make_shared<std::function<int()>>();
    *run = command.setup(*sub);
    sub->callback([&action, run] { action = *run; });
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "tokbench: " << e.what() << " (see --help)\n";
    return kExitUsage;
  }
  try {
    return action ? action() : kExitUsage;
  } catch (const std::invalid_argument& e) {
    std::cerr << "tokbench: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "tokbench: error: " << e.what() << "\n";
    return kExitError;
  }
}
