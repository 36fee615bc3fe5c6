// The parallelism vocabulary that the distributed steps, the run's record and `tokbench predict`
// share: how a model is spread over ranks (DDP, FSDP and its shard and unit choices), over which
// backend, and the reference's "Distributed Mode" label built from them in one place.
// Torch-free: the standard library only.
#pragma once

#include <string>
#include <string_view>

namespace tokbench::parallel {

// fsdp2: PyTorch's per-parameter sharding (fully_shard), run by the Python executors only;
// tokbench's own sharded step is fsdp (flat parameters per unit).
enum class DistMode { none, ddp, fsdp, fsdp2 };
inline bool is_sharded(DistMode mode) { return mode == DistMode::fsdp || mode == DistMode::fsdp2; }
// Hybrid sharding is not a shard mode of its own: it is a shard group smaller than the world
// (DistributedSettings::shard_group_size), with either mode inside each group.
enum class ShardMode { zero2, zero3 };
enum class CommBackend { gloo, nccl };
// Which parameters form one FSDP unit: all of them, one transformer block each (plus the
// root: embedding, final norm, head), each module that owns parameters, or modules cut by
// parameter count (PyTorch's size_based_auto_wrap_policy; layout.hpp gives the rule).
enum class UnitPolicy { whole_model, per_block, per_layer, by_size };

const char* to_string(DistMode mode);        // "none", "ddp", "fsdp", "fsdp2"
const char* to_string(ShardMode mode);       // "zero2", "zero3"
const char* to_string(UnitPolicy units);     // "none", "block", "layer", "size" (the option's words)
const char* to_string(CommBackend backend);  // "gloo", "nccl"

// The inverses of to_string. Each throws std::invalid_argument naming `option`, the value and
// the valid words.
DistMode parse_dist_mode(std::string_view word, std::string_view option = "--distributed-mode");
ShardMode parse_shard_mode(std::string_view word, std::string_view option = "--shard-mode");
UnitPolicy parse_unit_policy(std::string_view word, std::string_view option = "--bucketing-mode");
CommBackend parse_comm_backend(std::string_view word, std::string_view option = "--dist-backend");

// The units a mode actually uses: fsdp2 (fully_shard) ignores size, as the reference does, and
// wraps each block; everything else as asked. The run and the sweep's labels both go by it.
UnitPolicy effective_unit_policy(DistMode mode, UnitPolicy asked);

// The reference's --shard_mode word for what runs: "zero2", "zero3", "hybrid_zero2", ...
std::string shard_mode_label(ShardMode mode, bool hybrid);

// The reference's label for the JSON `Distributed Mode` key and its matrix tables: "none",
// "ddp", or "<fsdp|fsdp2>_[hybrid_]<zero2|zero3>_<none|block|layer>_bucketing". The one place
// it is built (the run, the prediction and the sweep's rows for runs that never started).
std::string distributed_mode_label(DistMode mode, ShardMode shard_mode, bool hybrid, UnitPolicy units);

}  // namespace tokbench::parallel
