// Ranks on one CPU machine share its cores: how a unit's measured compute time changes when the
// node holds more ranks or threads than the measured run did, and how much of the cores Gloo's
// collectives take from the computation while they run. Every tunable of the model is a named
// field of CpuContentionFactors, in this one place (docs/predict.md, "CPU ranks share cores").
// Only CPU clusters use this; a GPU rank's compute is its device's. Torch-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tokbench::predict {

struct CpuContentionFactors {
  // Compute time ∝ (effective cores)^-thread_scaling_exponent. 1: perfect scaling with cores
  // (the matmuls that dominate a step split evenly over threads); below 1 when they do not.
  double thread_scaling_exponent = 1.0;
  // The cores one rank's Gloo collective keeps busy while it runs (Gloo's worker thread copies,
  // sums and moves the buffer through loopback TCP: one core, busy for its whole duration).
  double gloo_cores_per_collective = 1.0;
  // Of a collective's duration that core is busy. Measured where the comm document records it
  // (`tokbench comm`'s gloo_cpu_busy: the ranks' CPU time over the calls' wall time; predict
  // then sets this field from it). This default is the fallback for older documents, fitted,
  // not measured: on the 2-core CI VM (2026-12-05, pythia-14m, DDP and ZeRO-3 at W = 2, three
  // rounds each) least squares of the measured GEMM and attention time above the prediction
  // against the contention at 1 gave 0.30 (under the earlier steal, busy / effective cores).
  double gloo_busy_fraction = 0.3;
};

// What of the model a prediction measured and what it assumed, for the record.
inline constexpr const char* kContentionAssumed =
    "thread_scaling_exponent, gloo_cores_per_collective: assumed; gloo_busy_fraction: fitted to one machine "
    "(2026-12-05, the 2-core CI VM), not measured here";
inline constexpr const char* kContentionAssumedBusyMeasured =
    "thread_scaling_exponent, gloo_cores_per_collective: assumed";

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

// While one of its collectives runs, the fraction of a rank's compute rate Gloo takes. Every
// rank's collective runs at once and the OS shares the node's cores among every runnable thread:
// with the collectives, a rank computes at min(threads, cores·threads / (ranks·(threads + g)))
// (g = gloo_cores · busy, the cores a rank's collective keeps busy), without them at its
// effective cores; the steal is 1 minus their ratio. Zero when the node has room for both
// (ranks·(threads + g) <= cores); with one core per rank and g = 1, one half.
double comm_compute_steal(const CpuPlacement& p, const CpuContentionFactors& f);

// While the rank computes beside one of its collectives, the fraction of the collective's own rate
// (its time alone on the node's ranks, as tokbench comm measures it) it runs at: Gloo's work gets
// its share of the cores the compute threads also ask for, min(1, cores / (ranks·(threads + g))),
// against its share with nothing computing, min(1, cores / (ranks·g)). The cores are shared both
// ways: what the steal above takes from the compute, this takes from the collective. One where
// the node has room for both.
double comm_rate_beside_compute(const CpuPlacement& p, const CpuContentionFactors& f);

// Whether the node's compute threads (ranks x threads) outnumber its cores by a count the cores do
// not divide, e.g. 3 one-thread ranks on 2 cores: the OS cannot give each rank the same share at
// every moment, and one rank ends its compute later than the others. The schedule runs every rank
// alike, so a prediction does not model that straggler and says so (on the 2-core CI VM, 3 ranks:
// the slowest rank busy 2.7-14% of the iteration longer than the ranks' mean; 2 and 4 ranks
// within 0-3.8%; docs/predict.md, "Assumptions and limits").
bool uneven_time_slicing(const CpuPlacement& p);

// The cores' budget of an iteration where the node's compute threads outnumber its cores (ranks
// time-slice them): every rank's CPU work, its compute and its Gloo work, over its share of the
// cores, as if no core were ever idle. The schedule runs every rank alike, in lockstep, so while a
// rank waits on a collective its share of the cores is idle but for Gloo's part of it; measured
// ranks drift out of step, and a rank that waits leaves its share to the ranks still computing
// (4 one-thread ranks on a 2-core VM kept both cores 98% busy). On that VM most iterations
// measured on a quiet host fell between the two (docs/predict.md, "Assumptions and limits"). The
// compute's CPU is its predicted time on its share of the cores; Gloo's, its collectives at their
// own rate (exposed at the measured one, hidden at `comm_rate`) on the share of a core they got in
// the comm document.
struct CoresBudget {
  double compute_cpu_seconds = 0;  // core-seconds per rank
  double gloo_cpu_seconds = 0;
  double iteration_seconds = 0;  // (compute + Gloo) / the rank's share of the cores
};
std::optional<CoresBudget> cores_budget(const CpuPlacement& p, const CpuContentionFactors& f, double compute_seconds,
                                        double exposed_comm_seconds, double hidden_comm_seconds, double comm_rate);

// Where ranks time-slice the cores, the iteration between its two ends: the lockstep schedule's
// (every wait leaves the rank's share of the cores idle) and the cores' budget (no core ever idle).
// Nothing measured before the run says how far the ranks drift out of step, so the point is the
// two ends' midpoint and the interval spans them. On the 2-core AMD VM the measured iteration lay
// at a median 0.52 of the way from the lockstep to the budget, over 40 held-out case-rounds of
// five runs (docs/predict.md, "Assumptions and limits").
//
// What it takes off the lockstep comes off the time the lockstep books to the collectives, the
// exposed waits and the contention, in proportion: out of step, a waiting rank's share of the
// cores runs another rank's compute, which the lockstep books as the wait and its contention.
// A budget that is no lower end (at or above the lockstep) leaves the lockstep as it is.
inline constexpr double kOutOfStepWeight = 0.5;
struct OutOfStep {
  double iteration_seconds = 0;  // the point prediction
  double lockstep_seconds = 0;   // the schedule's
  double budget_seconds = 0;     // the cores' budget's
  double waits_scale = 1;        // on the lockstep's exposed waits and contention
  // Whether the budget was a lower end, so the prediction left the lockstep for the midpoint.
  bool below_lockstep() const { return iteration_seconds < lockstep_seconds; }
};
OutOfStep between_lockstep_and_budget(double lockstep_seconds, double budget_seconds, double waits_seconds);

// The factors and the arrangement as one line of text, for the prediction's assumptions.
std::string describe(const CpuPlacement& measured, const CpuPlacement& predicted, const CpuContentionFactors& f);

}  // namespace tokbench::predict
