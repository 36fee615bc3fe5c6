// The parallelism vocabulary's words and labels (strategy.hpp), and the one table of parallel
// modes: every mode's word, label shape, layout and the checks made of it.
#include "parallel/strategy.hpp"

#include <stdexcept>

namespace tokbench::parallel {
namespace {

// Finds `word` among `Enum`'s values by their to_string words; refuses it naming them all.
template <typename Enum, std::size_t N>
Enum parse_word(std::string_view word, std::string_view option, const Enum (&values)[N]) {
  std::string valid;
  for (const Enum v : values) {
    if (word == to_string(v)) return v;
    valid += (valid.empty() ? "" : ", ") + std::string(to_string(v));
  }
  throw std::invalid_argument(std::string(option) + " '" + std::string(word) + "' is not valid; valid: " + valid);
}

const std::vector<ModeEntry> kModes = {
    {DistMode::none, "none", false, false, LayoutKind::none, nullptr, nullptr, nullptr, true, nullptr},
    {DistMode::ddp, "ddp", true, false, LayoutKind::ddp_buckets, nullptr, nullptr, nullptr, false, nullptr},
    {DistMode::fsdp, "fsdp", true, true, LayoutKind::fsdp_units, nullptr,
     "--skip-data-sync with --distributed-mode fsdp is not supported by tokbench's FSDP step (it reduce-scatters "
     "every micro-batch, keeping only gradient shards); valid: --no-skip-data-sync, or --executor python-eager / "
     "python-inductor (FSDP's no_sync)",
     nullptr, false, nullptr},
    {DistMode::fsdp2, "fsdp2", true, true, LayoutKind::fully_shard,
     "--distributed-mode fsdp2 (PyTorch's fully_shard) runs with --compile python-eager, python-inductor/inductor or "
     "a thunder name with dynamo, not '{}'; tokbench's own sharded step is --distributed-mode fsdp",
     nullptr,
     "--bucketing-mode size is ignored by --distributed-mode fsdp2 (as the reference: fully_shard wraps each "
     "block); its units are the blocks",
     true, " (PyTorch's fully_shard: its schedule is not modelled)"},
};

}  // namespace

const std::vector<ModeEntry>& mode_entries() { return kModes; }

const ModeEntry& mode_entry(DistMode mode) {
  for (const ModeEntry& e : kModes)
    if (e.mode == mode) return e;
  throw std::logic_error("parallel mode without an entry in strategy.cpp's table");
}

const ModeEntry* find_mode(std::string_view word) {
  for (const ModeEntry& e : kModes)
    if (word == e.word) return &e;
  return nullptr;
}

std::vector<std::string> mode_words(bool (*keep)(const ModeEntry&)) {
  std::vector<std::string> out;
  for (const ModeEntry& e : kModes)
    if (keep == nullptr || keep(e)) out.emplace_back(e.word);
  return out;
}

const char* to_string(DistMode mode) { return mode_entry(mode).word; }

const char* to_string(CommBackend backend) { return backend == CommBackend::nccl ? "nccl" : "gloo"; }

const char* to_string(ShardMode mode) { return mode == ShardMode::zero3 ? "zero3" : "zero2"; }

const char* to_string(UnitPolicy units) {
  switch (units) {
    case UnitPolicy::whole_model: return "none";
    case UnitPolicy::per_block: return "block";
    case UnitPolicy::per_layer: return "layer";
    case UnitPolicy::by_size: return "size";
  }
  return "none";
}

DistMode parse_dist_mode(std::string_view word, std::string_view option) {
  if (const ModeEntry* e = find_mode(word)) return e->mode;
  std::string valid;
  for (const ModeEntry& e : kModes) valid += (valid.empty() ? "" : ", ") + std::string(e.word);
  throw std::invalid_argument(std::string(option) + " '" + std::string(word) + "' is not valid; valid: " + valid);
}

ShardMode parse_shard_mode(std::string_view word, std::string_view option) {
  static constexpr ShardMode values[] = {ShardMode::zero2, ShardMode::zero3};
  return parse_word(word, option, values);
}

UnitPolicy parse_unit_policy(std::string_view word, std::string_view option) {
  static constexpr UnitPolicy values[] = {UnitPolicy::whole_model, UnitPolicy::per_block, UnitPolicy::per_layer,
                                         UnitPolicy::by_size};
  return parse_word(word, option, values);
}

CommBackend parse_comm_backend(std::string_view word, std::string_view option) {
  static constexpr CommBackend values[] = {CommBackend::gloo, CommBackend::nccl};
  return parse_word(word, option, values);
}

UnitPolicy effective_unit_policy(DistMode mode, UnitPolicy asked) {
  return mode_entry(mode).size_units_ignored != nullptr && asked == UnitPolicy::by_size ? UnitPolicy::per_block : asked;
}

std::string shard_mode_label(ShardMode mode, bool hybrid) {
  return std::string(hybrid ? "hybrid_" : "") + to_string(mode);
}

std::vector<std::string> shard_mode_words() {
  std::vector<std::string> out;
  for (const bool hybrid : {false, true})
    for (const ShardMode mode : {ShardMode::zero2, ShardMode::zero3}) out.push_back(shard_mode_label(mode, hybrid));
  return out;
}

std::optional<ShardWord> find_shard_word(std::string_view word) {
  for (const bool hybrid : {false, true})
    for (const ShardMode mode : {ShardMode::zero2, ShardMode::zero3})
      if (word == shard_mode_label(mode, hybrid)) return ShardWord{mode, hybrid};
  return std::nullopt;
}

ShardWord parse_shard_word(std::string_view word, std::string_view option) {
  if (const auto found = find_shard_word(word)) return *found;
  std::string valid;
  for (const std::string& w : shard_mode_words()) valid += (valid.empty() ? "" : ", ") + w;
  throw std::invalid_argument(std::string(option) + " '" + std::string(word) + "' is not valid; valid: " + valid);
}

std::string default_shard_word() { return shard_mode_label(ShardWord{}.mode, ShardWord{}.hybrid); }

std::string distributed_mode_label(DistMode mode, ShardMode shard_mode, bool hybrid, UnitPolicy units) {
  if (!is_sharded(mode)) return to_string(mode);
  return std::string(to_string(mode)) + "_" + shard_mode_label(shard_mode, hybrid) + "_" + to_string(units) +
         "_bucketing";
}

}  // namespace tokbench::parallel
