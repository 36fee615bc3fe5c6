// The compute-sharing probe (compute_sharing.hpp).
#include "comm/compute_sharing.hpp"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <algorithm>
#include <fmt/format.h>
#include <vector>

#include "results/comm_document_keys.hpp"
#include "train/reference_gemm.hpp"

namespace tokbench::comm {

namespace ck = results::comm_document_key;

namespace {

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

void barrier(c10d::Backend& world) {
  // An all-reduce of one number: Gloo's barrier, without its extra device-placement rules.
  std::vector<at::Tensor> one{at::zeros({1})};
  world.allreduce(one)->wait();
}

}  // namespace

ComputeSharing measure_compute_sharing(c10d::Backend& world, int64_t ranks_per_node) {
  // The reference probe's product (train/reference_gemm.hpp), which a one-rank run times beside
  // its window too: `alone` is this document's reading of it, for predict's ratio of the two.
  train::ReferenceGemm gemm(kGemmSize);
  ComputeSharing sharing;
  sharing.ranks_per_node = ranks_per_node;
  sharing.threads_per_rank = at::get_num_threads();
  // Alone and together alternate, one GEMM each, and the slowdown is the median of the pairs'
  // ratios: a neighbour on the host that slows the machine for a second slows both halves of the
  // pairs it touches, where two separate phases of 15 GEMMs each put it on one side only (seen
  // here: 0.84 one run, 0.99 the next, on a machine whose ranks did not slow each other).
  std::vector<double> alone, together, ratios;
  c10d::AllreduceOptions slowest;
  slowest.reduceOp = c10d::ReduceOp::MAX;
  for (int i = 0; i < kRepeats; ++i) {
    barrier(world);
    // The other ranks wait in the all-reduce meanwhile (Gloo sleeps on its sockets).
    std::vector<at::Tensor> first{at::full({1}, world.getRank() == 0 ? gemm.seconds() : 0.0, at::kDouble)};
    world.allreduce(first, slowest)->wait();
    std::vector<at::Tensor> both{at::full({1}, gemm.seconds(), at::kDouble)};
    world.allreduce(both, slowest)->wait();
    alone.push_back(first[0].item<double>());
    together.push_back(both[0].item<double>());
    ratios.push_back(together.back() / alone.back());
  }
  sharing.alone_seconds = median(alone);
  sharing.together_seconds = median(together);
  sharing.slowdown = median(ratios);
  std::sort(ratios.begin(), ratios.end());
  const auto quantile = [&](double q) {  // linear interpolation between the sorted ratios
    const double at = q * static_cast<double>(ratios.size() - 1);
    const auto lo = static_cast<std::size_t>(at);
    const std::size_t hi = std::min(lo + 1, ratios.size() - 1);
    return ratios[lo] + (at - static_cast<double>(lo)) * (ratios[hi] - ratios[lo]);
  };
  sharing.slowdown_q1 = quantile(0.25);
  sharing.slowdown_q3 = quantile(0.75);
  return sharing;
}

nlohmann::ordered_json to_json(const ComputeSharing& s) {
  return {{ck::gemm,
           fmt::format("fp32 {0}x{0}x{0}, {1} alternating pairs alone/together, slowdown the median pair's ratio",
                       kGemmSize, kRepeats)},
          {ck::gemm_size, kGemmSize},
          {ck::ranks_per_node, s.ranks_per_node},
          {ck::threads_per_rank, s.threads_per_rank},
          {ck::alone_ms, s.alone_seconds * 1e3},
          {ck::together_ms, s.together_seconds * 1e3},
          {ck::slowdown, s.slowdown},
          {ck::slowdown_q1, s.slowdown_q1},
          {ck::slowdown_q3, s.slowdown_q3}};
}

}  // namespace tokbench::comm
