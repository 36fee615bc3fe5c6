// The shared collectives (collectives.hpp) and the ranks' stop agreement (parallel_step.hpp).
#include "distributed/collectives.hpp"

#include <torch/torch.h>

#include "distributed/parallel_step.hpp"

namespace tokbench::dist {

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

bool agree_to_stop(c10d::Backend& world, const c10::Device& device, bool local_stop_requested) {
  std::vector<at::Tensor> flag{at::full({1}, local_stop_requested ? 1.0f : 0.0f, at::TensorOptions().device(device))};
  c10d::AllreduceOptions max;
  max.reduceOp = c10d::ReduceOp::MAX;
  world.allreduce(flag, max)->wait();
  return flag[0].item<float>() > 0;
}

}  // namespace tokbench::dist
