// The CPU contention model (cpu_contention.hpp).
#include "predict/cpu_contention.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tokbench::predict {

double effective_cores(const CpuPlacement& p) {
  const double share = static_cast<double>(p.cores) / static_cast<double>(std::max<int64_t>(1, p.ranks));
  return std::max(1e-9, std::min(static_cast<double>(p.threads), share));
}

double compute_time_factor(const CpuPlacement& measured, const CpuPlacement& predicted, const CpuContentionFactors& f) {
  return std::pow(effective_cores(measured) / effective_cores(predicted), f.thread_scaling_exponent);
}

double comm_compute_steal(const CpuPlacement& p, const CpuContentionFactors& f) {
  // The OS shares the node's cores among every runnable thread: the ranks' compute threads and,
  // while their collectives run (every group runs the same schedule, so all at once), each
  // rank's Gloo work of gloo_cores x busy cores. A rank's compute then runs at its threads' share
  // of what the cores can give, against its share without the collectives.
  const double cores = static_cast<double>(p.cores), ranks = static_cast<double>(p.ranks);
  const double threads = static_cast<double>(p.threads);
  const double gloo = std::max(0.0, f.gloo_cores_per_collective * f.gloo_busy_fraction);
  const double with_comm = std::min(threads, cores * threads / (ranks * (threads + gloo)));
  return std::clamp(1.0 - with_comm / effective_cores(p), 0.0, 1.0);
}

double comm_rate_beside_compute(const CpuPlacement& p, const CpuContentionFactors& f) {
  const double cores = static_cast<double>(p.cores), ranks = static_cast<double>(std::max<int64_t>(1, p.ranks));
  const double threads = static_cast<double>(p.threads);
  const double gloo = std::max(0.0, f.gloo_cores_per_collective * f.gloo_busy_fraction);
  if (!(gloo > 0)) return 1.0;  // a collective that keeps no core busy is slowed by nothing
  const double beside = std::min(1.0, cores / (ranks * (threads + gloo)));
  const double alone = std::min(1.0, cores / (ranks * gloo));
  return std::clamp(beside / alone, 0.0, 1.0);
}

bool uneven_time_slicing(const CpuPlacement& p) {
  const int64_t threads = p.ranks * p.threads;
  return p.cores > 0 && threads > p.cores && threads % p.cores != 0;
}

std::optional<CoresBudget> cores_budget(const CpuPlacement& p, const CpuContentionFactors& f, double compute_seconds,
                                        double exposed_comm_seconds, double hidden_comm_seconds, double comm_rate) {
  if (p.ranks * p.threads <= p.cores) return std::nullopt;  // a core per thread: no share to hand over
  const double share = effective_cores(p);
  const double gloo = std::max(0.0, f.gloo_cores_per_collective * f.gloo_busy_fraction);
  CoresBudget b;
  b.compute_cpu_seconds = compute_seconds * share;
  // The collectives' time at their own rate: a hidden one ran at comm_rate of it beside the compute.
  const double comm_alone_seconds = exposed_comm_seconds + hidden_comm_seconds * std::clamp(comm_rate, 0.0, 1.0);
  b.gloo_cpu_seconds = std::min(gloo, share) * comm_alone_seconds;
  b.iteration_seconds = (b.compute_cpu_seconds + b.gloo_cpu_seconds) / share;
  return b;
}

OutOfStep between_lockstep_and_budget(double lockstep_seconds, double budget_seconds, double waits_seconds) {
  OutOfStep o{lockstep_seconds, lockstep_seconds, budget_seconds, 1.0};
  const double gap = lockstep_seconds - budget_seconds;
  // By construction the gap is at most the waits (the budget adds Gloo's CPU back to the compute
  // the lockstep also holds); the clamp keeps a scale in [0, 1] if rounding says otherwise.
  if (gap <= 0 || waits_seconds <= 0) return o;
  const double taken = std::min(kOutOfStepWeight * gap, waits_seconds);
  o.iteration_seconds = lockstep_seconds - taken;
  o.waits_scale = 1.0 - taken / waits_seconds;
  return o;
}

std::string describe(const CpuPlacement& m, const CpuPlacement& p, const CpuContentionFactors& f) {
  return fmt::format(
      "CPU ranks share cores: measured {} rank(s) x {} thread(s) on {} cores ({:.3g} effective cores per rank), "
      "predicted {} x {} on {} ({:.3g}); compute time x {:.4g} (thread_scaling_exponent {}); while a collective runs "
      "Gloo takes {:.3g} of a rank's compute rate and runs at {:.3g} of its own rate beside the compute "
      "(gloo_cores_per_collective {}, gloo_busy_fraction {})",
      m.ranks, m.threads, m.cores, effective_cores(m), p.ranks, p.threads, p.cores, effective_cores(p),
      compute_time_factor(m, p, f), f.thread_scaling_exponent, comm_compute_steal(p, f), comm_rate_beside_compute(p, f),
      f.gloo_cores_per_collective,
      f.gloo_busy_fraction);
}

}  // namespace tokbench::predict
