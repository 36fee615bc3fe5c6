// Launcher section: torchrun's options, by which this process starts the ranks of its node
// itself. Read by run/launch_benchmark.cpp and the distributed layer's launcher
// (distributed/launcher.hpp); the record says where the ranks came from (dist_launcher).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/field.hpp"

namespace tokbench::config {

struct LauncherSection {
  // When nproc_per_node is set, this process starts the node's ranks itself.
  std::optional<int64_t> nproc_per_node;
  int64_t nnodes = 1;
  int64_t node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int64_t master_port = 0;
};

// Its rows, typed by the section: `tokbench run` reaches them through RunOptions, `tokbench comm`
// through its own options (config/rows.hpp's rebind).
const std::vector<FieldOf<LauncherSection>>& launcher_fields();
// The checks of the section that need two of its options (--node-rank against --nnodes, a free
// port with more than one node): one line, exit 2 (usage::refuse). Run after the rows' checks.
void check_launcher(const LauncherSection& launcher);
// Where the ranks came from: a place in the `config` block the record fills.
const std::vector<DerivedValue>& launcher_derived_values();

}  // namespace tokbench::config
