// The parallelism vocabulary that the distributed steps, the run's record and `tokbench predict`
// share: how a model is spread over ranks (DDP, FSDP and its shard and unit choices), over which
// backend, and the reference's "Distributed Mode" label built from them in one place. Each
// parallel mode is one entry of the mode table (ModeEntry): its word, label, layout and the
// checks `run` and `predict` make of it. Torch-free: the standard library only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tokbench::parallel {

// fsdp2: PyTorch's per-parameter sharding (fully_shard), run by the Python executors only;
// tokbench's own sharded step is fsdp (flat parameters per unit). A new mode is a value here
// and an entry in strategy.cpp's table (docs/architecture.md, "Adding a parallel mode").
enum class DistMode { none, ddp, fsdp, fsdp2 };
// Hybrid sharding is not a shard mode of its own: it is a shard group smaller than the world
// (DistributedSettings::shard_group_size), with either mode inside each group.
enum class ShardMode { zero2, zero3 };
enum class CommBackend { gloo, nccl };
// Which parameters form one FSDP unit: all of them, one transformer block each (plus the
// root: embedding, final norm, head), each module that owns parameters, or modules cut by
// parameter count (PyTorch's size_based_auto_wrap_policy; layout.hpp gives the rule).
enum class UnitPolicy { whole_model, per_block, per_layer, by_size };

// PyTorch DDP's bucket_cap_mb default, 25 MB: --ddp-bucket-size's default everywhere.
inline constexpr double kDefaultDdpBucketMb = 25;
inline constexpr int64_t kDefaultDdpBucketBytes = static_cast<int64_t>(kDefaultDdpBucketMb * 1e6);

// The layout a mode's step builds its buffers from (layout.hpp): none (one rank's own model),
// DDP's gradient buckets, tokbench's FSDP flat units, or PyTorch's fully_shard (per parameter,
// in the Python executors only, so no layout of tokbench's).
enum class LayoutKind { none, ddp_buckets, fsdp_units, fully_shard };

// One parallel mode, everything the layers above ask of it by value.
struct ModeEntry {
  DistMode mode;
  const char* word;        // --distributed-mode's word, the record's config value
  bool multi_rank;         // needs more than one rank (every mode but none)
  // Shard mode, --sharding-size and the bucketing mode apply; its "Distributed Mode" label is
  // <word>_[hybrid_]<zero2|zero3>_<units>_bucketing (the word alone otherwise).
  bool sharded;
  LayoutKind layout;
  // tokbench's own C++ steps run it; when not, the line refusing them, with {} for --compile.
  const char* own_step_refusal;
  // tokbench's own step refuses an explicit --skip-data-sync (nullptr: it honours it).
  const char* own_step_skip_sync_refusal;
  // --bucketing-mode size ignored (nullptr: honoured): the warning, and its units become blocks.
  const char* size_units_ignored;
  bool torchao_fp8;        // torchao's float8 training runs under it (the reference's rule)
  // `tokbench predict` models its schedule; when not, why (the refusal's parenthesis).
  const char* predict_refusal;
};

// Every mode, in --distributed-mode's order (none, ddp, fsdp, fsdp2).
const std::vector<ModeEntry>& mode_entries();
const ModeEntry& mode_entry(DistMode mode);
// The entry whose word is `word`, or nullptr.
const ModeEntry* find_mode(std::string_view word);
// The words of the modes `keep` accepts, in table order: {"none", "ddp", "fsdp", "fsdp2"} for all.
std::vector<std::string> mode_words(bool (*keep)(const ModeEntry&) = nullptr);

inline bool is_sharded(DistMode mode) { return mode_entry(mode).sharded; }

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
// wraps each block (ModeEntry::size_units_ignored); everything else as asked. The run and the sweep's labels both go by it.
UnitPolicy effective_unit_policy(DistMode mode, UnitPolicy asked);

// The reference's --shard_mode word for what runs: "zero2", "zero3", "hybrid_zero2", ...
std::string shard_mode_label(ShardMode mode, bool hybrid);

// What a --shard-mode word says: the shard mode inside each group and whether the groups are
// smaller than the world (hybrid). The default, {zero2, false}, is --shard-mode's.
struct ShardWord {
  ShardMode mode = ShardMode::zero2;
  bool hybrid = false;
};
// --shard-mode's words, the shard_mode_label of each: zero2, zero3, hybrid_zero2, hybrid_zero3.
std::vector<std::string> shard_mode_words();
// The ShardWord `word` names, or nullopt when it names none (a record's word a reader must not trust).
std::optional<ShardWord> find_shard_word(std::string_view word);
// As find_shard_word; throws std::invalid_argument naming `option`, the value and the valid words.
ShardWord parse_shard_word(std::string_view word, std::string_view option = "--shard-mode");
// --shard-mode's default word ("zero2").
std::string default_shard_word();

// The reference's label for the JSON `Distributed Mode` key and its matrix tables: "none",
// "ddp", or "<fsdp|fsdp2>_[hybrid_]<zero2|zero3>_<none|block|layer>_bucketing". The one place
// it is built (the run, the prediction and the sweep's rows for runs that never started).
std::string distributed_mode_label(DistMode mode, ShardMode shard_mode, bool hybrid, UnitPolicy units);

}  // namespace tokbench::parallel
