// How much the ranks on one CPU machine slow each other's computation. Two ranks with one
// thread each on a 2-core VM do not compute as fast as one: the VM's cores may be one physical
// core's hardware threads, and they share caches and memory bandwidth (measured on this project's
// CI machine: a single-threaded 1024² GEMM 1.55x slower with a second one beside it). Neither
// the core count nor a formula says so; `tokbench predict` reads this measurement instead
// (docs/predict.md, "CPU ranks share cores"). CPU ranks only: a GPU rank computes on its own device.
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>

#include <nlohmann/json.hpp>

#include "train/reference_gemm.hpp"

namespace tokbench::comm {

struct ComputeSharing {
  double alone_seconds = 0;     // one GEMM on rank 0 while every other rank waits (median)
  double together_seconds = 0;  // the same GEMM on every rank at once: the slowest rank's (median)
  double slowdown = 1;          // the median over pairs of together / alone
  double slowdown_q1 = 1, slowdown_q3 = 1;  // the pairs' ratios' quartiles: how sure the median is
  int64_t ranks_per_node = 1;
  int threads_per_rank = 1;
};

// Collective: every rank of `world` calls it. The GEMM (the reference probe's product, fp32,
// kGemmSize³, the rank's intra-op threads) runs kRepeats times alone on rank 0 and kRepeats times
// on every rank, alternating.
inline constexpr int64_t kGemmSize = train::kReferenceGemmSize;
inline constexpr int kRepeats = 15;
ComputeSharing measure_compute_sharing(c10d::Backend& world, int64_t ranks_per_node);

// The document's `compute_sharing` object.
nlohmann::ordered_json to_json(const ComputeSharing& sharing);

}  // namespace tokbench::comm
