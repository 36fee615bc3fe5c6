// Subcommands register themselves here: each cmd_*.cpp defines one static Command (its name,
// its help and its options), and the app is built from the registry, so a subcommand's options
// are declared in one file. The registry is torch-free: `tokbench` reads and checks a command
// line with it before any LibTorch is loaded, and `tokbench-engine` reads the same line with it
// again and does the work (command_work.hpp).
#pragma once

#include <CLI/CLI.hpp>

#include <any>
#include <functional>
#include <string>
#include <vector>

#include "train/run_status.hpp"

namespace tokbench::cli {

struct Command {
  std::string name;
  std::string description;
  // Adds the subcommand's options to `sub` and returns what they are read into (a shared_ptr to
  // the command's options), which the command's work (command_work.cpp) takes by that type.
  std::function<std::any(CLI::App& sub)> add_options;
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
