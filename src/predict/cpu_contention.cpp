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
  const double spare = static_cast<double>(p.cores - p.ranks * p.threads);
  if (spare >= static_cast<double>(p.ranks) * f.gloo_cores_per_collective) return 0;
  return std::min(1.0, f.gloo_cores_per_collective * f.gloo_busy_fraction / effective_cores(p));
}

std::string describe(const CpuPlacement& m, const CpuPlacement& p, const CpuContentionFactors& f) {
  return fmt::format(
      "CPU ranks share cores: measured {} rank(s) x {} thread(s) on {} cores ({:.3g} effective cores per rank), "
      "predicted {} x {} on {} ({:.3g}); compute time x {:.4g} (thread_scaling_exponent {}); while a collective runs "
      "Gloo takes {:.3g} of a rank's compute rate (gloo_cores_per_collective {}, gloo_busy_fraction {})",
      m.ranks, m.threads, m.cores, effective_cores(m), p.ranks, p.threads, p.cores, effective_cores(p),
      compute_time_factor(m, p, f), f.thread_scaling_exponent, comm_compute_steal(p, f), f.gloo_cores_per_collective,
      f.gloo_busy_fraction);
}

}  // namespace tokbench::predict
