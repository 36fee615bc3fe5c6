// The option words and the reference's labels of a distributed run (dist_settings.hpp).
#include "distributed/dist_settings.hpp"

namespace tokbench::distributed {

const char* to_string(DistMode mode) {
  switch (mode) {
    case DistMode::none: return "none";
    case DistMode::ddp: return "ddp";
    case DistMode::fsdp: return "fsdp";
    case DistMode::fsdp2: return "fsdp2";
  }
  return "none";
}

const char* to_string(CommBackend backend) { return backend == CommBackend::nccl ? "nccl" : "gloo"; }

const char* to_string(ShardMode mode) { return mode == ShardMode::zero3 ? "zero3" : "zero2"; }

const char* to_string(UnitPolicy units) {
  switch (units) {
    case UnitPolicy::whole_model: return "none";
    case UnitPolicy::per_block: return "block";
    case UnitPolicy::per_layer: return "layer";
  }
  return "none";
}

std::string shard_mode_label(const DistributedSettings& s) {
  return std::string(s.hybrid() ? "hybrid_" : "") + to_string(s.shard_mode);
}

std::string distributed_mode_label(const DistributedSettings& s) {
  if (!is_sharded(s.mode)) return to_string(s.mode);
  return std::string(to_string(s.mode)) + "_" + shard_mode_label(s) + "_" + to_string(s.units) + "_bucketing";
}

}  // namespace tokbench::distributed
