// The `tokbench` program: reads and checks a command line without LibTorch, then becomes
// `tokbench-engine` (engine_main.cpp), from its own folder, on the same command line. --help, the
// version and every usage error CLI11 finds (an unknown option, a value out of its range, an
// empty `--name=`) are answered here in milliseconds; loading LibTorch and its CUDA libraries
// takes most of a second (docs/build.md, "Two programs"). The engine reads the line again with
// the same code, so what it refuses and what it runs are the same as if it had been started
// directly; the checks that need the machine (a device, its memory) are the engine's.
#include <unistd.h>

#include <cerrno>
#include <clocale>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>

#include "cli/command_line.hpp"
#include "results/record_status.hpp"

namespace {

// The engine's path: TOKBENCH_ENGINE_FILE_NAME in the folder of this program's own file.
std::filesystem::path engine_path() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return {};
  return self.parent_path() / TOKBENCH_ENGINE_FILE_NAME;
}

}  // namespace

int main(int argc, char** argv) {
  std::setlocale(LC_ALL, "");
  std::setlocale(LC_NUMERIC, "C");
  CLI::App app;
  const tokbench::cli::ReadCommandLine read = tokbench::cli::read_command_line(app, argc, argv);
  if (read.exit_code) return *read.exit_code;

  // The same process and the same arguments, argv[0] included (help and messages name the
  // program as the user typed it): signals, exit codes and parent-death requests reach the
  // engine as they reached tokbench.
  const std::filesystem::path engine = engine_path();
  std::fflush(nullptr);
  if (!engine.empty()) ::execv(engine.c_str(), argv);
  std::fprintf(stderr, "tokbench: error: cannot start %s (%s); valid: %s beside tokbench, as the build and "
                       "`cmake --install` place it\n",
               engine.empty() ? TOKBENCH_ENGINE_FILE_NAME : engine.c_str(), std::strerror(errno),
               TOKBENCH_ENGINE_FILE_NAME);
  return tokbench::results::kExitRuntimeUnavailable;
}
