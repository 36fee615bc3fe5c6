// Where tokbench keeps what it measures once per machine (the CPU matmul peak of
// `tokbench env --calibrate`, the fused executor's GEMM kernel choice): $TOKBENCH_CACHE_DIR,
// else $XDG_CACHE_HOME/tokbench, else $HOME/.cache/tokbench, else ./.cache/tokbench. One place,
// so every cache moves together when a user points TOKBENCH_CACHE_DIR elsewhere. Torch-free.
#pragma once

#include <filesystem>
#include <functional>

namespace tokbench::machine {

// `getenv` is injectable for tests; it returns null (or "") for an unset variable.
using GetEnv = std::function<const char*(const char*)>;
std::filesystem::path tokbench_cache_dir(const GetEnv& getenv_fn);
std::filesystem::path tokbench_cache_dir();  // from the process environment

}  // namespace tokbench::machine
