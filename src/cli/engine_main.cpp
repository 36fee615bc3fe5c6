// The `tokbench-engine` program: what `tokbench` starts once a command line reads well (main.cpp),
// on the same command line. It reads it again (command_line.hpp) and does the subcommand's work
// (command_work.hpp); nothing here knows a subcommand's options. It runs alone as well: the
// launcher's ranks and the sweep's runs are started as this program. A runtime that cannot start
// (a deleted working directory, a library's exit) is exit 9.
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <stdexcept>
#include <string>

#include "cli/command_line.hpp"
#include "cli/command_work.hpp"
#include "process/child_process.hpp"
#include "results/record_status.hpp"

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

  try {
    // Every registered command has its work here, checked before a command line is read: a
    // command added without its work fails every command line at once, not one user's.
    for (const Command& command : command_registry()) command_work(command.name);
  } catch (const std::logic_error& e) {
    std::cerr << "tokbench: error: " << e.what() << "\n";
    return kExitError;
  }
  CLI::App app;
  ReadCommandLine read = read_command_line(app, argc, argv);
  if (read.exit_code) return *read.exit_code;
  try {
    return command_work(read.command->name)(read.options, *read.sub);
  } catch (const std::invalid_argument& e) {
    std::cerr << "tokbench: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "tokbench: error: " << e.what() << "\n";
    return kExitError;
  }
}

}  // namespace
