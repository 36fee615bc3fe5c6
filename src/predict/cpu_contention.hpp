// Ranks on one CPU machine share its cores: how a unit's measured compute time changes when the
// node holds more ranks or threads than the measured run did, and how much of the cores Gloo's
// collectives take from the computation while they run. Every tunable of the model is a named
// field of CpuContentionFactors, in this one place (docs/predict.md, "CPU ranks share cores").
// Only CPU clusters use this; a GPU rank's compute is its device's. Torch-free.
#pragma once

#include <cstdint>
#include <string>

namespace tokbench::predict {

struct CpuContentionFactors {
  // Compute time ∝ (effective cores)^-thread_scaling_exponent. 1: perfect scaling with cores
  // (the matmuls that dominate a step split evenly over threads); below 1 when they do not.
  double thread_scaling_exponent = 1.0;
  // The cores one rank's Gloo collective keeps busy while it runs (Gloo's worker thread copies,
  // sums and moves the buffer through loopback TCP: one core, busy for its whole duration).
  double gloo_cores_per_collective = 1.0;
  // Of a collective's duration that core is busy. Fitted, not measured: on the 2-core CI VM
  // (2026-12-05, pythia-14m, DDP and ZeRO-3 at W = 2, three rounds each) least squares of the
  // measured GEMM and attention time above the prediction against the contention at 1 gave 0.30.
  // It was 1 (compute stops while Gloo runs) while the step's own copies and the optimizer's
  // memory sharing were not predicted; then it stood in for them (docs/predict.md, "CPU ranks
  // share cores").
  double gloo_busy_fraction = 0.3;
};

// What of the model a prediction measured and what it assumed, for the record.
inline constexpr const char* kContentionAssumed =
    "thread_scaling_exponent, gloo_cores_per_collective: assumed; gloo_busy_fraction: fitted to one machine "
    "(2026-12-05, the 2-core CI VM), not measured here";

// One node's CPU arrangement.
struct CpuPlacement {
  int64_t cores = 1;    // the node's cores
  int64_t ranks = 1;    // ranks on the node
  int64_t threads = 1;  // intra-op threads of each rank
};

// The cores a rank computes on: its threads, unless the node's ranks ask for more threads than
// it has cores, then its share of them (cores / ranks), as the OS time-slices them.
double effective_cores(const CpuPlacement& p);

// Measured time × this = predicted time: (effective cores measured / predicted)^exponent.
double compute_time_factor(const CpuPlacement& measured, const CpuPlacement& predicted, const CpuContentionFactors& f);

// While one of its collectives runs, the fraction of a rank's compute rate Gloo takes: zero when
// the node has a free core for every rank's Gloo work beside the compute threads
// (cores - ranks·threads >= ranks·gloo_cores), else gloo_cores·busy / effective cores (at most
// 1: one core per rank means compute stops while Gloo runs).
double comm_compute_steal(const CpuPlacement& p, const CpuContentionFactors& f);

// The factors and the arrangement as one line of text, for the prediction's assumptions.
std::string describe(const CpuPlacement& measured, const CpuPlacement& predicted, const CpuContentionFactors& f);

}  // namespace tokbench::predict
