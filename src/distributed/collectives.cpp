// The shared collectives (collectives.hpp).
#include "distributed/collectives.hpp"

#include <torch/torch.h>

namespace tokbench::distributed {

void broadcast_parameters(c10d::Backend& world, torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  for (auto& p : module.parameters()) {
    std::vector<at::Tensor> one{p};
    world.broadcast(one)->wait();
  }
}

at::Tensor mean_over_ranks(c10d::Backend& world, const at::Tensor& loss, int64_t world_size) {
  std::vector<at::Tensor> one{loss.reshape({1}).to(at::kFloat).clone()};
  world.allreduce(one)->wait();
  return one[0].div_(static_cast<double>(world_size)).reshape({});
}

}  // namespace tokbench::distributed
