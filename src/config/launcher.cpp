// The launcher section's option table (launcher.hpp).
#include "config/launcher.hpp"

#include <fmt/format.h>

#include "config/numbers.hpp"
#include "config/run_options.hpp"

namespace tokbench::config {

const std::vector<Field>& launcher_fields() {
  static const std::vector<Field> fields{
      {.names = "--nproc-per-node,--nproc_per_node",
       .member = &LauncherSection::nproc_per_node,
       .help = "start this many ranks on this node (the built-in launcher)",
       .group = "Launcher",
       .valid = fmt::format("a whole number 1..{}", limits::kMaxRanksPerNode),
       .bounds = {.positive = true,
                  .max = limits::kMaxRanksPerNode,
                  .refusal = fmt::format("is not valid; valid: 1..{}", limits::kMaxRanksPerNode)}},
      {.names = "--nnodes",
       .member = &LauncherSection::nnodes,
       .help = "nodes in the job (with --nproc-per-node)",
       .group = "Launcher",
       .valid = fmt::format("a whole number 1..{}", limits::kMaxNodes),
       .bounds = {.min = 1, .max = limits::kMaxNodes, .refusal = fmt::format("is not valid; valid: 1..{}", limits::kMaxNodes)}},
      {.names = "--node-rank,--node_rank",
       .member = &LauncherSection::node_rank,
       .help = "this node's index, 0..nnodes-1",
       .group = "Launcher",
       .valid = "a whole number from 0 to --nnodes - 1"},
      {.names = "--master-addr,--master_addr",
       .member = &LauncherSection::master_addr,
       .help = "address of rank 0's store",
       .group = "Launcher"},
      {.names = "--master-port,--master_port",
       .member = &LauncherSection::master_port,
       .help = "port of rank 0's store (0: a free one; one node only)",
       .group = "Launcher",
       .valid = "0 (a free port) or 1..65535",
       .bounds = {.min = 0, .max = 65535, .refusal = "is not valid; valid: 0 (a free port) or 1..65535"}},
  };
  return fields;
}

const std::vector<DerivedValue>& launcher_derived_values() {
  static const std::vector<DerivedValue> values{
      // The record puts where the ranks came from here.
      {.record = {"dist_launcher", 23}},
  };
  return values;
}

}  // namespace tokbench::config
