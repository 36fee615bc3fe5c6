// How `tokbench run` and `tokbench comm` start this node's ranks with the launcher
// (launcher.hpp): the same binary and command line in every rank, each marked as launched so
// that none launches again. Torch-free, beside the launcher.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "distributed/launcher.hpp"

namespace tokbench::distributed {

// Set in every rank's environment by the launcher, so a rank does not launch again.
inline constexpr const char* kLaunchedEnv = "TOKBENCH_LAUNCHED";

// This node's ranks as `tokbench run` and `tokbench comm` start them, from their options'
// launcher fields (nproc_per_node, nnodes, node_rank, master_addr, master_port), the ranks
// marked as launched (kLaunchedEnv) so that none launches again. A rank that outlives a failed
// one fails too at its next collective, or within the collectives' timeout when that one
// hangs: that is its grace. Once rank 0 has ended (it writes the result), a rank still running
// is stopped or hung: 2 s, then SIGTERM.
template <typename LauncherFields>
LaunchOptions node_launch(const LauncherFields& o, const std::vector<std::string>& rank_argv,
                          double collective_timeout_seconds) {
  ::setenv(kLaunchedEnv, "1", 1);
  LaunchOptions launch;
  launch.argv = rank_argv;
  launch.nproc_per_node = static_cast<int>(*o.nproc_per_node);
  launch.nnodes = static_cast<int>(o.nnodes);
  launch.node_rank = static_cast<int>(o.node_rank);
  launch.master_addr = o.master_addr;
  launch.master_port = static_cast<int>(o.master_port);
  launch.failure_grace_seconds = collective_timeout_seconds;
  launch.lead_exit_grace_seconds = 2.0;
  return launch;
}

// This process's command line (from /proc/self/cmdline), argv[0] replaced by the absolute
// path of the running executable, so ranks run the same binary.
std::vector<std::string> own_command_line();

}  // namespace tokbench::distributed
