// The compute-sharing probe (compute_sharing.hpp).
#include "comm/compute_sharing.hpp"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <algorithm>
#include <chrono>
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

// The largest of each rank's values, the same on every rank.
std::vector<double> slowest_of(c10d::Backend& world, const std::vector<double>& mine) {
  std::vector<at::Tensor> t{at::tensor(mine, at::kDouble)};
  c10d::AllreduceOptions max;
  max.reduceOp = c10d::ReduceOp::MAX;
  world.allreduce(t, max)->wait();
  const auto* p = t[0].data_ptr<double>();
  return {p, p + mine.size()};
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double all_reduce_seconds(c10d::Backend& world, at::Tensor& buffer) {
  std::vector<at::Tensor> t{buffer};
  const auto start = std::chrono::steady_clock::now();
  world.allreduce(t)->wait();
  return seconds_since(start);
}

// A buffer whose all-reduce alone takes at least kOutlast GEMMs (every rank the same size: the
// decisions read the slowest rank's times), doubling from 1 MiB up to 1 GiB.
at::Tensor outlasting_buffer(c10d::Backend& world, double gemm_seconds) {
  constexpr int64_t kMaxBytes = int64_t{1} << 30;
  int64_t bytes = int64_t{1} << 20;
  for (;;) {
    at::Tensor buffer = at::ones({bytes / 4});
    all_reduce_seconds(world, buffer);  // its first touch
    const double seconds = slowest_of(world, {all_reduce_seconds(world, buffer)})[0];
    if (seconds >= kOutlast * gemm_seconds || bytes >= kMaxBytes) return buffer;
    bytes *= 2;
  }
}

}  // namespace

ComputeSharing measure_compute_sharing(c10d::Backend& world, int64_t ranks_per_node) {
  // The reference probe's product (train/reference_gemm.hpp), which a one-rank run times beside
  // its window too: `alone` is this document's reading of it, for predict's ratio of the two.
  train::ReferenceGemm gemm(kGemmSize);
  ComputeSharing sharing;
  sharing.ranks_per_node = ranks_per_node;
  sharing.threads_per_rank = at::get_num_threads();
  // Alone and together alternate, one GEMM alone and kTogetherGemms on every rank (per GEMM: the
  // sharing of a sustained computation, compute_sharing.hpp), and the slowdown is the median of the pairs'
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
    double mine = 0;
    for (int k = 0; k < kTogetherGemms; ++k) mine += gemm.seconds();
    std::vector<at::Tensor> both{at::full({1}, mine / kTogetherGemms, at::kDouble)};
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
  sharing.beside = measure_beside_collective(world, gemm, sharing.together_seconds);
  return sharing;
}

BesideCollective measure_beside_collective(c10d::Backend& world, train::ReferenceGemm& gemm, double together_seconds) {
  at::Tensor buffer = outlasting_buffer(world, together_seconds);
  BesideCollective beside;
  beside.collective_bytes = buffer.numel() * 4;
  std::vector<double> gemms, alones, besides, steals, rates;
  for (int i = 0; i < kBesideRepeats; ++i) {
    // Each repeat's three legs one after the other, so a neighbour on the host slows all three.
    barrier(world);
    const double together = gemm.seconds();
    barrier(world);
    const double alone = all_reduce_seconds(world, buffer);
    barrier(world);
    std::vector<at::Tensor> t{buffer};
    const auto start = std::chrono::steady_clock::now();
    auto work = world.allreduce(t);  // Gloo's threads run it while this thread computes
    const double gemm_beside = gemm.seconds();
    work->wait();
    const double collective_beside = seconds_since(start);
    const std::vector<double> s = slowest_of(world, {together, alone, gemm_beside, collective_beside});
    gemms.push_back(s[2]);
    alones.push_back(s[1]);
    besides.push_back(s[3]);
    steals.push_back(std::max(0.0, 1.0 - s[0] / s[2]));
    // The collective ran the GEMM's time beside it and the rest alone (when it outlasted it).
    const bool covered = s[3] > s[2];
    beside.covered_repeats += covered ? 1 : 0;
    rates.push_back(covered ? std::clamp((s[1] - s[3] + s[2]) / s[2], 1e-3, 1.0) : 1.0);
  }
  beside.repeats = kBesideRepeats;
  beside.gemm_seconds = median(gemms);
  beside.collective_alone_seconds = median(alones);
  beside.collective_beside_seconds = median(besides);
  beside.steal = median(steals);
  beside.collective_rate = median(rates);
  return beside;
}

nlohmann::ordered_json to_json(const ComputeSharing& s) {
  return {{ck::gemm,
           fmt::format("fp32 {0}x{0}x{0}, {1} alternating pairs of one alone and {2} back to back on every rank "
                       "together (per GEMM), slowdown the median pair's ratio",
                       kGemmSize, kRepeats, kTogetherGemms)},
          {ck::together_gemms, kTogetherGemms},
          {ck::gemm_size, kGemmSize},
          {ck::ranks_per_node, s.ranks_per_node},
          {ck::threads_per_rank, s.threads_per_rank},
          {ck::alone_ms, s.alone_seconds * 1e3},
          {ck::together_ms, s.together_seconds * 1e3},
          {ck::slowdown, s.slowdown},
          {ck::slowdown_q1, s.slowdown_q1},
          {ck::slowdown_q3, s.slowdown_q3},
          {ck::beside_collective,
           {{ck::method,
             fmt::format("the GEMM on every rank while each rank's all-reduce of {} MiB (alone at least {}x the GEMM) "
                         "runs on Gloo's threads, {} repeats each beside an all-reduce alone and the GEMM without it; "
                         "steal = 1 - GEMM together / GEMM beside, collective_rate = (alone - beside + GEMM) / GEMM, "
                         "the medians (the slowest rank's times)",
                         s.beside.collective_bytes >> 20, kOutlast, s.beside.repeats)},
            {ck::collective_bytes, s.beside.collective_bytes},
            {ck::gemm_ms, s.beside.gemm_seconds * 1e3},
            {ck::collective_alone_ms, s.beside.collective_alone_seconds * 1e3},
            {ck::collective_beside_ms, s.beside.collective_beside_seconds * 1e3},
            {ck::steal, s.beside.steal},
            {ck::collective_rate, s.beside.collective_rate},
            {ck::covered_repeats, s.beside.covered_repeats},
            {ck::repeats, s.beside.repeats}}}};
}

}  // namespace tokbench::comm
