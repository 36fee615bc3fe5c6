// How tokbench's DDP step packs gradients into buckets and its FSDP step packs parameters into
// flat units: the one copy of those rules. The steps build their tensors from this answer and
// expose it; the run's record and `tokbench predict` read the same answer. A layout refers to
// parameters by their index in the list it was given (the model's registration order).
// Torch-free: the standard library only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parallel/strategy.hpp"

namespace tokbench::parallel {

// One parameter as the step registered it. `timed_unit` is the unit the per-unit timing pass
// counts it in, in forward order: 0 the embedding, 1..L the blocks, L+1 the head (final norm
// and lm_head); FSDP's per-block units and the prediction's schedule go by it.
struct ParameterShape {
  std::string name;  // the module path, "transformer.h.0.attn.qkv.weight"
  int64_t elements = 0;
  int64_t element_bytes = 4;
  int64_t timed_unit = 0;
};

// A DDP bucket or an FSDP unit: which parameters it holds, where each starts in its flat buffer,
// and the buffer's size.
struct CommUnit {
  std::string name;                // "bucket.0"; "model", "root", "block.3"; per layer the module's path
  std::vector<int64_t> parameters;  // indices into Layout::parameters, in buffer order
  std::vector<int64_t> offsets;     // of each in the flat buffer, in elements
  int64_t elements = 0;             // real parameter elements
  int64_t padded_elements = 0;      // FSDP: a multiple of the shard-group size; DDP: = elements
  int64_t element_bytes = 4;
  int64_t padded_bytes() const { return padded_elements * element_bytes; }
};

struct Layout {
  std::vector<ParameterShape> parameters;  // as given
  std::vector<CommUnit> units;             // DDP: in all-reduce order; FSDP: in forward order
  int64_t shard_size = 1;                  // FSDP's padding multiple S; 1 for DDP
};

// DDP's buckets (PyTorch Reducer's order): the parameters in reverse registration order, which
// is roughly the order backward produces their gradients. A bucket takes parameters whole; it
// closes before a parameter that would take it past `bucket_cap_bytes`, so a bucket exceeds the
// cap only when it holds a single parameter larger than the cap. Throws std::invalid_argument
// for an empty list, a non-positive size, or parameters of different element sizes.
Layout layout_ddp_buckets(std::vector<ParameterShape> parameters, int64_t bucket_cap_bytes);

// FSDP's units, each one flat buffer padded to a multiple of `shard_size` (S), so each of the S
// ranks owns padded/S elements:
//  - whole_model: one unit "model" with every parameter in registration order;
//  - per_block: "root" first (the embedding's and the head's parameters, registration order),
//    then "block.i" per block (timed unit i+1), in forward order;
//  - per_layer: one unit per module owning parameters directly (a parameter's module is its
//    name up to the last '.'), in registration order, named after the module;
//  - by_size: PyTorch FSDP's size_based_auto_wrap_policy(min_num_params = `min_unit_params`)
//    over litgpt's module tree, below.
// Throws std::invalid_argument for an empty list, a non-positive size, mixed element sizes, or
// by_size with `min_unit_params` < 1 (the other policies ignore it).
//
// by_size. The module tree is read from the parameter names: every prefix of a name ending
// before a '.' is a module ("transformer.h.3.attn.qkv.weight" lies in "", "transformer",
// "transformer.h", "transformer.h.3", "transformer.h.3.attn" and "transformer.h.3.attn.qkv"),
// and a module's children come in the order their first parameter was registered. Modules
// without parameters play no part (they can never reach a positive threshold). Containers are
// never wrapped, as the policy excludes nn.ModuleList and nn.ModuleDict: in litgpt these are
// "transformer" (its one ModuleDict) and every module whose children are all numbered
// ("transformer.h", an MoE's "mlp.experts"); litgpt has no nn.MultiheadAttention, the policy's
// forced leaf. The rule, bottom-up as FSDP's recursive wrap applies it: a module whose subtree
// holds fewer than min_unit_params elements is left alone, children and all; otherwise its
// children are visited first, and the module becomes a unit when the elements of its subtree
// not already in a unit (the remainder) reach min_unit_params and it is no container. The root
// module (the model) is a unit named "root" holding what is left; it is listed first and left
// out when nothing is left. The other units are named by their module's path and listed in
// pre-order (a module before the units inside it; children in registration order), as
// named_modules() lists PyTorch's FSDP instances; each buffer holds its parameters in
// registration order.
Layout layout_fsdp_units(std::vector<ParameterShape> parameters, UnitPolicy policy, int64_t shard_size,
                         int64_t min_unit_params = 0);

// When tokbench's ZeRO-3 step holds each FSDP unit's whole parameters, over any unit layout: the
// one copy of those rules, which the step follows and the prediction times. The forward walks the
// timed units (0 the embedding, 1..L the blocks, L+1 the head):
//  - before the embedding, `kept` is gathered (the units holding embedding or head parameters:
//    both ends of the forward need them, so they stay whole until its end) and `needs[1]` is
//    gathered ahead;
//  - before block k, `needs[k]` (every unit holding a parameter of block k) is gathered, and
//    `needs[k + 1]` ahead;
//  - after block k, `free_after_forward[k]` is freed: its units the next block and `kept` do not
//    need (a unit spanning several blocks stays whole across them);
//  - at the forward's end `kept` is freed.
// Backward meets the timed units in reverse; before each (the head first) `needs[k]` is gathered
// again and the next one's gathered ahead; a unit is freed once its last gradient is in. With
// per-block units this is one unit per block and the root; with per-layer units a block's layers
// are gathered together; size units may hold part of a block, or several blocks, or the root
// with the blocks too small to wrap.
struct Zero3Gathers {
  std::vector<std::vector<int64_t>> needs;               // per timed unit: layout unit indices, ascending
  std::vector<int64_t> kept;                             // the embedding's and head's units, ascending
  std::vector<std::vector<int64_t>> free_after_forward;  // per timed unit (blocks only; others empty)
};

// Throws std::invalid_argument when a parameter's timed unit is negative or no unit lies in a
// timed unit between 0 and the largest (every block holds parameters).
Zero3Gathers zero3_gathers(const Layout& layout);

// size_based_auto_wrap_policy's min_num_params default (1e8), which the reference's
// --bucketing_mode size gets when --fsdp_bucket_params is not given.
inline constexpr int64_t kDefaultMinUnitParams = 100'000'000;

}  // namespace tokbench::parallel
