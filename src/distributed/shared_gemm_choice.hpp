// The fused executor's GEMM kernel choice, one for the whole job. Rank 0 measures it (or
// reads it from the cache, and is the only rank that writes the cache file); every other
// rank receives rank 0's choice over the world group and measures nothing. Ranks measuring
// at once on shared cores would time each other's load and could choose differently, and
// kernels round differently, so replicas that must stay identical would drift apart.
#pragma once

#include <c10/core/Device.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>

#include <cstdint>
#include <functional>

#include "train/gemm_kernels.hpp"

namespace tokbench::distributed {

// A collective over `world`: every rank calls it. Runs `measure` on rank 0 only and returns
// its result on every rank. `device` is where the collective's tensors live (CUDA for NCCL).
train::GemmChoices gemm_choice_of_rank0(c10d::Backend& world, int64_t rank, const c10::Device& device,
                                        const std::function<train::GemmChoices()>& measure);

}  // namespace tokbench::distributed
