#include "machine/cache_dir.hpp"

#include <cstdlib>

namespace tokbench::machine {

std::filesystem::path tokbench_cache_dir(const GetEnv& getenv_fn) {
  auto set = [&](const char* name) -> const char* {
    const char* value = getenv_fn(name);
    return value != nullptr && *value != '\0' ? value : nullptr;
  };
  if (const char* own = set("TOKBENCH_CACHE_DIR")) return own;
  if (const char* xdg = set("XDG_CACHE_HOME")) return std::filesystem::path(xdg) / "tokbench";
  if (const char* home = set("HOME")) return std::filesystem::path(home) / ".cache" / "tokbench";
  return std::filesystem::path(".cache") / "tokbench";  // no HOME: beside the working directory
}

std::filesystem::path tokbench_cache_dir() {
  return tokbench_cache_dir([](const char* name) { return std::getenv(name); });
}

}  // namespace tokbench::machine
