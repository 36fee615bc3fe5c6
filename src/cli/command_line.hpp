// Reading a command line, the same way in `tokbench` and in `tokbench-engine`: the app built from
// the command registry (command.hpp), the rules every option obeys (option_values.hpp), CLI11's
// parse. --help, --version and every usage error CLI11 finds end here, before any work.
#pragma once

#include <CLI/CLI.hpp>

#include <any>
#include <optional>

#include "cli/command.hpp"

namespace tokbench::cli {

struct ReadCommandLine {
  // Set when reading ended the program: 0 after --help or --version (printed), kExitUsage after a
  // usage error (its one line printed on stderr).
  std::optional<int> exit_code;
  const Command* command = nullptr;  // the subcommand given
  CLI::App* sub = nullptr;           // its CLI11 app, a part of the caller's
  std::any options;                  // what command->add_options returned, now filled
};

// Makes `app` (empty; it outlives the result) tokbench's, with every registered subcommand, and
// reads argv.
ReadCommandLine read_command_line(CLI::App& app, int argc, const char* const* argv);

}  // namespace tokbench::cli
