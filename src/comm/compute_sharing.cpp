// The compute-sharing probe (compute_sharing.hpp).
#include "comm/compute_sharing.hpp"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <vector>

namespace tokbench::comm {
namespace {

double median_gemm_seconds(const at::Tensor& a, const at::Tensor& b) {
  std::vector<double> seconds;
  at::Tensor out = at::empty_like(a);
  at::mm_out(out, a, b);  // warm-up: the kernel's first call pays for its set-up
  for (int i = 0; i < kRepeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    at::mm_out(out, a, b);
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(seconds.begin(), seconds.begin() + kRepeats / 2, seconds.end());
  return seconds[kRepeats / 2];
}

void barrier(c10d::Backend& world) {
  // An all-reduce of one number: Gloo's barrier, without its extra device-placement rules.
  std::vector<at::Tensor> one{at::zeros({1})};
  world.allreduce(one)->wait();
}

}  // namespace

ComputeSharing measure_compute_sharing(c10d::Backend& world, int64_t ranks_per_node) {
  const at::Tensor a = at::rand({kGemmSize, kGemmSize}), b = at::rand({kGemmSize, kGemmSize});
  ComputeSharing sharing;
  sharing.ranks_per_node = ranks_per_node;
  sharing.threads_per_rank = at::get_num_threads();
  barrier(world);
  if (world.getRank() == 0) sharing.alone_seconds = median_gemm_seconds(a, b);
  barrier(world);  // the others sleep in the collective meanwhile (Gloo waits on its sockets)
  std::vector<at::Tensor> together{at::full({1}, median_gemm_seconds(a, b), at::kDouble)};
  c10d::AllreduceOptions slowest;
  slowest.reduceOp = c10d::ReduceOp::MAX;
  world.allreduce(together, slowest)->wait();
  sharing.together_seconds = together[0].item<double>();
  return sharing;
}

nlohmann::ordered_json to_json(const ComputeSharing& s) {
  return {{"gemm", fmt::format("fp32 {0}x{0}x{0}, median of {1}", kGemmSize, kRepeats)},
          {"ranks_per_node", s.ranks_per_node},
          {"threads_per_rank", s.threads_per_rank},
          {"alone_ms", s.alone_seconds * 1e3},
          {"together_ms", s.together_seconds * 1e3},
          {"slowdown", s.slowdown()}};
}

}  // namespace tokbench::comm
