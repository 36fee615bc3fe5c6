// Small collectives every distributed step shares: the same starting model on every rank,
// the reported loss averaged over ranks.
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/nn/module.h>

#include <cstdint>

namespace tokbench::distributed {

// Copies rank 0's parameters into every rank's, one broadcast per parameter.
void broadcast_parameters(c10d::Backend& world, torch::nn::Module& module);

// The mean over `world_size` ranks of a scalar loss (as fp32), so a distributed step reports
// what one process training the global batch would.
at::Tensor mean_over_ranks(c10d::Backend& world, const at::Tensor& loss, int64_t world_size);

}  // namespace tokbench::distributed
