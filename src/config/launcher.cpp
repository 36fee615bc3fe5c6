// The launcher section's option table (launcher.hpp).
#include "config/launcher.hpp"

#include <fmt/format.h>

#include "config/numbers.hpp"
#include "config/resolved_keys.hpp"
#include "usage/usage_error.hpp"

namespace tokbench::config {

const std::vector<FieldOf<LauncherSection>>& launcher_fields() {
  static const std::vector<FieldOf<LauncherSection>> fields{
      {.names = "--nproc-per-node,--nproc_per_node",
       .member = &LauncherSection::nproc_per_node,
       .help = "start this many ranks on this node (the built-in launcher)",
       .group = "Launcher",
       .predict_help = "ranks per node (default: the measured run's ranks on one machine, at most the cluster's "
                       "devices)",
       .valid = fmt::format("a whole number 1..{}", limits::kMaxRanksPerNode),
       .bounds = {.positive = true,
                  .max = limits::kMaxRanksPerNode,
                  .refusal = fmt::format("is not valid; valid: 1..{}", limits::kMaxRanksPerNode)}},
      {.names = "--nnodes",
       .member = &LauncherSection::nnodes,
       .help = "nodes in the job (with --nproc-per-node)",
       .group = "Launcher",
       .predict_help = "nodes (default 1)",
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

void check_launcher(const LauncherSection& o) {
  // Checked even when unused (a rank started by a launcher gets them on its command line too),
  // so a wrong one never passes silently.
  if (o.node_rank < 0 || o.node_rank >= o.nnodes)
    usage::refuse(fmt::format("--node-rank {} is not valid; valid: 0..{} (--nnodes {})", o.node_rank, o.nnodes - 1,
                              o.nnodes));
  if (o.nproc_per_node && o.master_port == 0 && o.nnodes > 1)
    usage::refuse(fmt::format("--master-port 0 picks a free port on one node only; with --nnodes {} name the port "
                              "every node uses (valid: 1..65535)", o.nnodes));
}

const std::vector<DerivedValue>& launcher_derived_values() {
  static const std::vector<DerivedValue> values{
      // The record puts where the ranks came from here.
      {.record = {resolved_key::dist_launcher, 23}},
  };
  return values;
}

}  // namespace tokbench::config
