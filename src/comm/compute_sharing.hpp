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

// The compute and a collective on the same cores at once (ComputeSharing::beside).
struct BesideCollective {
  int64_t collective_bytes = 0;       // the all-reduce's buffer: alone it outlasts the GEMM (kOutlast x)
  double gemm_seconds = 0;            // the GEMM with the all-reduce in flight: the slowest rank's (median)
  double collective_alone_seconds = 0;   // the all-reduce alone, issue to wait (median)
  double collective_beside_seconds = 0;  // the all-reduce issued just before the GEMM, issue to wait (median)
  // 1 - (GEMM together) / (GEMM beside the collective), the median over the repeats, at least 0:
  // the fraction of the compute rate a running collective takes (predict's comm_compute_steal).
  double steal = 0;
  // The collective's rate while the GEMM runs, against its rate alone (predict's
  // comm_rate_beside_compute): its work W = alone time; beside, it ran `gemm` seconds at this
  // rate and the rest alone, so rate = (alone - beside + gemm) / gemm, the median, within (0, 1].
  double collective_rate = 1;
  // Repeats in which the all-reduce was still running when the GEMM ended (the figures need it
  // to cover the GEMM; one that finished first makes the steal a lower bound).
  int64_t covered_repeats = 0;
  int64_t repeats = 0;
};

// How many times the GEMM's time an all-reduce alone must take to cover the GEMM beside it (the
// all-reduce beside the GEMM is slower still), and how many repeats of the three legs: about a
// second on two ranks of the CI VM, which every CPU `tokbench comm` spends.
inline constexpr double kOutlast = 2.0;
inline constexpr int kBesideRepeats = 7;

struct ComputeSharing {
  double alone_seconds = 0;     // one GEMM on rank 0 while every other rank waits (median)
  // The same GEMM kTogetherGemms times back to back on every rank at once, per GEMM: the slowest
  // rank's (median)
  double together_seconds = 0;
  double slowdown = 1;          // the median over pairs of together / alone
  double slowdown_q1 = 1, slowdown_q3 = 1;  // the pairs' ratios' quartiles: how sure the median is
  int64_t ranks_per_node = 1;
  int threads_per_rank = 1;
  // The same GEMM on every rank while each rank's all-reduce of `collective_bytes` is in flight
  // (Gloo's worker threads move and sum it beside the GEMM, as in a training step's backward):
  // what a running collective takes from the compute, measured rather than modelled.
  BesideCollective beside;
};

// Collective: every rank of `world` calls it. The GEMM (the reference probe's product, fp32,
// kGemmSize³, the rank's intra-op threads) runs kRepeats times alone on rank 0 and kRepeats times
// kTogetherGemms on every rank, alternating; then, in the same alternation, an all-reduce alone
// and the GEMM beside it (ComputeSharing::beside).
inline constexpr int64_t kGemmSize = train::kReferenceGemmSize;
inline constexpr int kRepeats = 11;
// Products each rank runs back to back in the together half. With more threads than cores the
// OS time-slices them, and one product (about 11 ms) is a few slices: which rank the scheduler
// leaves for last decides the slowest rank's time, not the node's share of the cores. On the
// 2-core CI VM three one-thread ranks read 1.57-1.82x (quartiles 1.33-2.02) for the 1.5x the
// cores give, and a training step's compute, hundreds of ms between its collectives, gets the
// fair share: predictions from the one-product figure were 2-13% above the measured iteration
// in every held-out run of three ranks (docs/predict.md, "CPU ranks share cores"). Eight
// products span tens of slices.
inline constexpr int kTogetherGemms = 8;
ComputeSharing measure_compute_sharing(c10d::Backend& world, int64_t ranks_per_node);

// Collective: the beside-a-collective leg alone, `together_seconds` the GEMM's time on every rank
// at once (it sizes the all-reduce to outlast the GEMM).
BesideCollective measure_beside_collective(c10d::Backend& world, train::ReferenceGemm& gemm, double together_seconds);

// The document's `compute_sharing` object.
nlohmann::ordered_json to_json(const ComputeSharing& sharing);

}  // namespace tokbench::comm
