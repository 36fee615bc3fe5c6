// The parallel step's own memory work, which a one-rank run does not contain: DDP copies each
// gradient into its bucket, scales the bucket and copies the average back (ddp_step.cpp); FSDP
// zeroes each unit's flat gradient, keeps its shard of the reduced sum and scales it, and on
// Gloo stages its all-gathers through a zeroed full buffer (fsdp_step.cpp, flat_collectives.cpp).
// Counted in bytes written per iteration on one rank, from the plan's layout and collectives,
// so the prediction times them with the machine's measured copy rate. Torch-free.
#pragma once

#include <cstdint>

#include "predict/comm_plan.hpp"

namespace tokbench::predict {

// Bytes one rank's step writes per iteration beyond what a one-rank run writes (each pass over
// a buffer counted once: a copy, a fill or an in-place scale). `gloo`: the all-gathers are
// staged through all-reduces of zeroed full buffers.
int64_t step_copy_bytes(const CommPlan& plan, int64_t shard_size, bool gloo);

}  // namespace tokbench::predict
