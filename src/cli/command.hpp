// Subcommands register themselves here: each cmd_*.cpp defines one static Command, and
// main() builds the CLI11 app from the registry, so adding a subcommand touches one file.
#pragma once

#include <CLI/CLI.hpp>

#include "train/run_status.hpp"

#include <functional>
#include <string>
#include <vector>

namespace tokbench::cli {

struct Command {
  std::string name;
  std::string description;
  // Adds the subcommand's options to `sub` and returns the action that runs it; the action
  // returns the process exit code (0 ok, 2 usage error, see README "Exit codes").
  std::function<std::function<int()>(CLI::App& sub)> setup;
};

std::vector<Command>& command_registry();

struct RegisterCommand {
  explicit RegisterCommand(Command command) { command_registry().push_back(std::move(command)); }
};

// Exit codes shared by every subcommand: the run-status table (train/run_status.hpp).
using train::kExitError;
using train::kExitOk;
using train::kExitUsage;

}  // namespace tokbench::cli
