// What each subcommand does once its command line is read: `tokbench-engine`'s half of a
// command, with LibTorch. The options half, shared with the torch-free `tokbench` that checks a
// command line before starting the engine, is the command's cmd_*.cpp.
#pragma once

#include <CLI/CLI.hpp>

#include <any>
#include <functional>
#include <string>

namespace tokbench::cli {

// The command's work: its options as its add_options returned them, and its CLI11 app (for the
// words after `--`). Returns the process exit code (README "Exit codes").
using CommandWork = std::function<int(const std::any& options, CLI::App& sub)>;

// The work of the command named `name`; throws std::logic_error when a registered command has
// none (checked for every command when the engine starts, so a command cannot be half added).
const CommandWork& command_work(const std::string& name);

}  // namespace tokbench::cli
