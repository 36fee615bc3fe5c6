// The parallelism vocabulary's words and labels (strategy.hpp).
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

}  // namespace

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
    case UnitPolicy::by_size: return "size";
  }
  return "none";
}

DistMode parse_dist_mode(std::string_view word, std::string_view option) {
  static constexpr DistMode values[] = {DistMode::none, DistMode::ddp, DistMode::fsdp, DistMode::fsdp2};
  return parse_word(word, option, values);
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
  return mode == DistMode::fsdp2 && asked == UnitPolicy::by_size ? UnitPolicy::per_block : asked;
}

std::string shard_mode_label(ShardMode mode, bool hybrid) {
  return std::string(hybrid ? "hybrid_" : "") + to_string(mode);
}

std::string distributed_mode_label(DistMode mode, ShardMode shard_mode, bool hybrid, UnitPolicy units) {
  if (!is_sharded(mode)) return to_string(mode);
  return std::string(to_string(mode)) + "_" + shard_mode_label(shard_mode, hybrid) + "_" + to_string(units) +
         "_bucketing";
}

}  // namespace tokbench::parallel
