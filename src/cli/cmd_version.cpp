// `tokbench version`: the program's version, git revision and the LibTorch it was built with
// (command_work.cpp prints them).
#include "cli/command.hpp"

namespace tokbench::cli {
namespace {

const RegisterCommand kVersion{
    {"version", "Print tokbench's version, git revision and LibTorch version", [](CLI::App&) -> std::any { return {}; }}};

}  // namespace
}  // namespace tokbench::cli
