// The reference's labels of a distributed run's settings (dist_settings.hpp), through the one
// label builder in parallel/strategy.hpp.
#include "distributed/dist_settings.hpp"

namespace tokbench::distributed {

std::string shard_mode_label(const DistributedSettings& s) { return parallel::shard_mode_label(s.shard_mode, s.hybrid()); }

std::string distributed_mode_label(const DistributedSettings& s) {
  return parallel::distributed_mode_label(s.mode, s.shard_mode, s.hybrid(), s.units);
}

}  // namespace tokbench::distributed
