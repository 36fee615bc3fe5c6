// The `tokbench` program: one binary, subcommands from the command registry. Usage errors
// print one line and exit 2 before any work starts; nothing here knows a subcommand's options.
// A runtime that cannot start (a deleted working directory, a library's exit) is exit 9.
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "cli/option_values.hpp"
#include "process/child_process.hpp"
#include "results/record_status.hpp"

namespace tokbench::cli {
std::vector<Command>& command_registry() {
  static std::vector<Command> commands;
  return commands;
}
}  // namespace tokbench::cli

namespace {

// Set when main() returns. Before that, tokbench itself never calls exit(): an exit() is a
// library ending the process (oneMKL's loader, exit 2), which must not read as a usage error.
std::atomic<bool> g_main_returned{false};

void on_exit_before_main_returned() {
  if (g_main_returned.load()) return;
  std::fputs("tokbench: error: a library ended the process before tokbench finished (its line above says why; "
             "LibTorch's runtime could not start)\n", stderr);
  std::fflush(stderr);
  ::_exit(tokbench::results::kExitRuntimeUnavailable);
}

// oneMKL (inside LibTorch) calls getcwd() when it loads, and ends the process with exit 2 when
// that fails: in a working directory that was deleted. Told first, with its own exit code.
bool working_directory_exists() {
  char buffer[4096];
  if (::getcwd(buffer, sizeof buffer) != nullptr || errno == ERANGE) return true;
  std::fprintf(stderr, "tokbench: error: the working directory cannot be read (getcwd: %s; deleted?), and LibTorch's "
                       "runtime cannot start in it; valid: run tokbench from an existing folder\n",
               std::strerror(errno));
  return false;
}

// Runs from the executable's preinit array: before any shared library's initializers, among
// which LibTorch's load oneMKL (it dies there, before main(), whatever the command).
void before_libraries(int, char**, char**) {
  std::atexit(on_exit_before_main_returned);
  if (!working_directory_exists()) ::_exit(tokbench::results::kExitRuntimeUnavailable);
}
__attribute__((section(".preinit_array"), used)) void (*const kBeforeLibraries)(int, char**, char**) = before_libraries;

int run_main(int argc, char** argv);

}  // namespace

int main(int argc, char** argv) {
  const int code = run_main(argc, argv);
  g_main_returned.store(true);
  return code;
}

namespace {

int run_main(int argc, char** argv) {
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
  add_value_rules(app);
  try {
    // `--name=` is an empty value, never "take the next word" (option_values.hpp).
    std::vector<std::string> args;
    try {
      args = with_empty_values_explicit(app, argc, argv);
    } catch (const std::invalid_argument& e) {
      std::cerr << "tokbench: " << e.what() << "\n";
      return kExitUsage;
    }
    std::vector<const char*> words;
    for (const std::string& arg : args) words.push_back(arg.c_str());
    app.parse(static_cast<int>(words.size()), words.data());
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

}  // namespace
