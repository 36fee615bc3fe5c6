// `tokbench comm`'s work, below the command line: resolve the options against the machine (every
// refusal before any rank starts), then launch the ranks (--nproc-per-node) or measure as this
// rank. cli registers the command (cli/cmd_comm.cpp).
#pragma once

#include "comm/comm_options.hpp"

namespace tokbench::comm {

// The command's exit code. A rank started by the built-in launcher measures; it does not launch
// again (its nproc_per_node is cleared).
int comm_command(CommOptions& options);

}  // namespace tokbench::comm
