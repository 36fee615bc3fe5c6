// The keys of the record's `config` block where the run writes what resolution decided rather
// than an option as given: the option rows name their place (and compare's key) by these, and
// results::ResolvedConfig (results/record_blocks.hpp) writes and reads the block by the same
// constants. Owned here because `config` is the lower of the two layers. Torch-free.
#pragma once

namespace tokbench::config::resolved_key {

inline constexpr char fsdp_min_unit_params[] = "fsdp_min_unit_params";  // the threshold FSDP's size units were cut by
inline constexpr char skip_data_sync[] = "skip_data_sync";
inline constexpr char dist_backend[] = "dist_backend";
inline constexpr char dist_launcher[] = "dist_launcher";  // where the ranks came from
inline constexpr char cpu_allocator[] = "cpu_allocator";

}  // namespace tokbench::config::resolved_key
