// `tokbench version`: the program's version, git revision and the LibTorch it was built with.
#include <torch/version.h>

#include <iostream>

#include "cli/command.hpp"
#include "git_revision.hpp"

namespace tokbench::cli {
namespace {

const RegisterCommand kVersion{{"version", "Print tokbench's version, git revision and LibTorch version",
                                [](CLI::App&) -> std::function<int()> {
                                  return [] {
                                    std::cout << "tokbench " << TOKBENCH_VERSION << " (git "
                                              << git_revision() << ", LibTorch "
                                              << TORCH_VERSION << ")\n";
                                    return kExitOk;
                                  };
                                }}};

}  // namespace
}  // namespace tokbench::cli
