// The waterfall text (waterfall.hpp).
#include "account/waterfall.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cmath>

namespace tokbench::account {
namespace {

constexpr int kLabelWidth = 44;

// A cost of exactly zero (no recomputation, no communication on one rank) is not a loss
// worth a line.
bool worth_a_line(double cost) { return std::abs(cost) >= 5e-5; }

}  // namespace

void write_waterfall(const TimeAccount& a, std::ostream& out) {
  const double overhead = a.profiled_iteration_seconds / a.iteration_seconds - 1;
  // On many ranks the record's account is the slowest rank's (docs/time-account.md).
  const std::string whose = a.rank ? fmt::format("rank {}'s (the slowest), ", *a.rank) : std::string();
  fmt::print(out, "# --- Where the time goes (docs/time-account.md): {}{} profiled iterations after the window, "
                  "their shares applied to the {:.2f} ms iteration; the profiler slowed them by {:+.1f}% ---\n",
             whose, a.profiled_iterations, a.iteration_seconds * 1e3, overhead * 100);
  const auto steps = waterfall_steps(a);
  if (steps.empty()) {
    fmt::print(out, "No peak, so no MFU waterfall; shares of the iteration:\n");
    for (const Category c : all_categories())
      fmt::print(out, "  {:<{}} {:6.2f}%  {:9.3f} ms\n", label(c), kLabelWidth, a[c].share * 100, a[c].seconds * 1e3);
    return;
  }
  fmt::print(out, "{:<{}} {:7.2f}%  (peak {:.4g} TFLOP/s, {})\n", "Peak", kLabelWidth + 2, 100.0,
             *a.peak_flop_per_s / 1e12, a.peak_source);
  for (const WaterfallStep& s : steps) {
    if (!worth_a_line(s.mfu_cost)) continue;
    fmt::print(out, "  - {:<{}} {:7.2f}%  {:9.3f} ms  -> {:6.2f}%\n", s.label, kLabelWidth - 2, s.mfu_cost * 100,
               s.seconds * 1e3, s.remaining * 100);
  }
  fmt::print(out, "{:<{}} {:7.2f}%\n", "= MFU", kLabelWidth + 2, *a.mfu * 100);
  fmt::print(out, "  (matrix products, GEMMs and SDPA: {:.3f} ms per iteration, {:.3f} ms of it at the ceiling; "
                  "{:.4g} GFLOPs counted from their shapes, the model's {:.4g})\n",
             (a[Category::gemm].seconds + a[Category::attention].seconds) * 1e3,
             a.matmul_seconds_at_ceiling.value_or(0) * 1e3, static_cast<double>(a.matmul_flops_per_iter()) / 1e9,
             static_cast<double>(a.model_flops_per_iter) / 1e9);
}

}  // namespace tokbench::account
