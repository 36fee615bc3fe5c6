// ATen vs oneDNN for the three GEMMs of a linear layer, fp32 on the CPU, through the same
// functions the fused executor calls (src/train/gemm_kernels.hpp). Prints GFLOP/s of each
// and the oneDNN/ATen ratio, plus each kernel's relative error against ATen. A benchmark,
// not a test: the ratios depend on the machine and on what else runs on it.
//   gemm_kernels_bench [threads=2] [repetitions=5]
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <fmt/format.h>

#include <cstdlib>

#include "train/gemm_kernels.hpp"

using namespace tokbench::train;

namespace {

double best_seconds(GemmKernel kernel, GemmRole role, const at::Tensor& x, const at::Tensor& w,
                    const at::Tensor& dy, int repetitions) {
  return fastest_seconds([&] { return run_gemm_role(kernel, role, x, w, dy); }, repetitions);
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const int repetitions = argc > 2 ? std::atoi(argv[2]) : 5;
  if (threads <= 0 || repetitions <= 0) {
    fmt::print(stderr, "usage: gemm_kernels_bench [threads>0] [repetitions>0]\n");
    return 2;
  }
  at::set_num_threads(threads);
  if (!onednn_linear_available()) {
    fmt::print(stderr, "this LibTorch has no mkldnn::_linear_pointwise; nothing to compare\n");
    return 1;
  }
  fmt::print("threads {}, best of {}; GFLOP/s (min time)\n", threads, repetitions);
  fmt::print("{:>22} {:>12} {:>8} {:>8} {:>7} {:>9}\n", "M x K -> N", "role", "aten", "onednn", "ratio",
             "rel.err");
  // The brief's shape (TinyLlama MLP) and the model shapes the benchmark runs use.
  const GemmShape shapes[] = {{1024, 2048, 5632}, {2048, 768, 2304}, {2048, 2048, 8192}, {2048, 1024, 3072}};
  for (const auto& s : shapes) {
    auto x = at::randn({s.rows, s.in});
    auto w = at::randn({s.out, s.in}) * 0.02;
    auto dy = at::randn({s.rows, s.out});
    const double flops = 2.0 * s.rows * s.in * s.out;
    for (GemmRole role : {GemmRole::forward, GemmRole::grad_input, GemmRole::grad_weight}) {
      const double aten = best_seconds(GemmKernel::aten, role, x, w, dy, repetitions);
      const double onednn = best_seconds(GemmKernel::onednn, role, x, w, dy, repetitions);
      at::Tensor want, got;
      if (role == GemmRole::forward) {
        want = linear_forward(GemmKernel::aten, x, w, {});
        got = linear_forward(GemmKernel::onednn, x, w, {});
      } else if (role == GemmRole::grad_input) {
        want = linear_grad_input(GemmKernel::aten, dy, w);
        got = linear_grad_input(GemmKernel::onednn, dy, w);
      } else {
        want = linear_grad_weight(GemmKernel::aten, dy, x);
        got = linear_grad_weight(GemmKernel::onednn, dy, x);
      }
      const double error = ((got - want).norm() / want.norm()).item<double>();
      fmt::print("{:>22} {:>12} {:>8.0f} {:>8.0f} {:>6.2f}x {:>9.1e}\n",
                 fmt::format("{} x {} -> {}", s.rows, s.in, s.out), to_string(role), flops / aten / 1e9,
                 flops / onednn / 1e9, aten / onednn, error);
    }
  }
  return 0;
}
