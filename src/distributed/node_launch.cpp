// This process's own command line, for the ranks it launches (node_launch.hpp).
#include "distributed/node_launch.hpp"

#include <unistd.h>

#include <fstream>
#include <iterator>

namespace tokbench::distributed {

std::vector<std::string> own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  std::size_t start = 0;
  while (start < raw.size()) {
    const std::size_t end = raw.find('\0', start);
    args.push_back(raw.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  char exe[4096] = {};
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0 && !args.empty()) args[0] = std::string(exe, static_cast<std::size_t>(n));
  return args;
}

}  // namespace tokbench::distributed
