// One rank's time account (docs/time-account.md): its iteration time split into categories
// (category.hpp), each with its share of the iteration and the MFU it costs, so that a reader
// sees, from 100% of the peak down to the measured MFU, where the rest went.
//
// The categories' shares come from a profiled pass after the measured window (profiled_pass.hpp);
// they are applied to the measured window's mean iteration time t, so the account adds up to
// the iteration the run reports and the waterfall ends at its MFU. With P the peak and F the
// model FLOPs of one iteration, the ideal iteration is F / P; the time beyond it is lost, and a
// category's cost is its lost seconds over t (its FLOPs not done at P, over the FLOPs P could
// have done in t):
//   gemm:      (seconds − GEMM FLOPs / P) / t       the GEMMs' time below the ceiling
//   attention: (seconds − SDPA FLOPs / P) / t       the same for the SDPA kernels' products
//   others:    seconds / t                          all of it: they do no model FLOPs
//   plus       (counted FLOPs − F) / (P · t)        products beyond the model's count (recomputation)
// and 1 − Σ costs = F / (P · t) = MFU exactly. Torch-free.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "account/category.hpp"
#include "account/device_timeline.hpp"
#include "account/profiled_pass.hpp"

namespace tokbench::account {

// Who measured exposed communication: the distributed step's own timer around its waits
// (tokbench's steps on the CPU), the profiler's host events alone (the Python executors' steps,
// which have no timer of their own: profiled_pass.hpp reads their collectives' operators and
// the loop's gaps while one is in flight), or a CUDA device's timeline (NCCL's kernels running
// with no compute beside them: device_timeline.hpp; the host does not wait for NCCL, so no host
// measure sees it).
inline constexpr const char* kExposedCommFromStep = "step";
inline constexpr const char* kExposedCommFromProfiler = "profiler";
inline constexpr const char* kExposedCommFromDeviceTimeline = "device_timeline";

struct CategoryTime {
  double seconds = 0;           // per measured iteration: share × the measured iteration time
  double profiled_seconds = 0;  // per profiled iteration, as the profiler measured it
  double share = 0;             // of the iteration, 0..1
  std::optional<double> mfu_cost;  // fraction of the peak lost here; null without a peak
};

struct TimeAccount {
  std::string source;              // how the categories were measured ("kineto_cpu")
  std::optional<int64_t> rank;     // whose account, on many ranks; none for one process
  int64_t profiled_iterations = 0;
  double iteration_seconds = 0;           // t: the measured window's mean
  double profiled_iteration_seconds = 0;  // the profiled pass's own clock, mean per iteration
  double profiled_range_seconds = 0;      // Σ categories' profiled seconds (the iteration ranges), mean
  std::array<CategoryTime, kCategoryCount> categories{};
  // Matrix products counted from the profiled operators' shapes, per iteration: GEMMs and SDPA
  // kernels (the model's FLOPs, recomputation included, when every product was seen).
  int64_t gemm_flops_per_iter = 0;
  int64_t attention_flops_per_iter = 0;
  int64_t uncounted_matmuls = 0;         // products whose shapes were missing (their FLOPs are not above)
  int64_t model_flops_per_iter = 0;      // F: MFU's FLOPs of one iteration on this device
  std::optional<double> peak_flop_per_s;  // P; null: no peak, no MFU costs
  std::string peak_source;
  // Per iteration: the counted products at the peak (the GEMM ceiling), and the cost of the
  // products beyond the model's count.
  std::optional<double> matmul_seconds_at_ceiling;
  std::optional<double> beyond_model_mfu_cost;
  std::optional<double> mfu;  // F / (P · t): where the waterfall ends
  std::vector<std::pair<std::string, double>> other_top;  // "other"'s largest events, seconds per iteration
  // Where exposed communication comes from (kExposedCommFromStep or kExposedCommFromProfiler).
  std::string exposed_comm_source = kExposedCommFromStep;
  // Exposed communication per profiled iteration. From the step: its own measure (the seconds
  // inside its waits for collectives; exposed_comm's profiled seconds are these), and what the
  // profiler saw of the same waits (their ranges, which enclose the measure); 0 on one rank.
  // From the profiler: no step measure (null); seen = exposed_comm's profiled seconds, of which
  // gap_seconds were the loop's gaps while a collective was in flight (the rest: the collective
  // operators' own time), and in_flight_seconds the collectives in flight within the iteration,
  // exposed or hidden behind the loop's work. Null from the step, which reads no backend thread.
  std::optional<double> exposed_comm_step_seconds = 0.0;
  double exposed_comm_seen_seconds = 0;
  std::optional<double> exposed_comm_gap_seconds;
  std::optional<double> comm_in_flight_seconds;
  // On a CUDA device (device_timeline.hpp): its seconds per profiled iteration, its counts over
  // the pass. None on the CPU.
  std::optional<DeviceFigures> device;

  const CategoryTime& operator[](Category c) const { return categories[index_of(c)]; }
  int64_t matmul_flops_per_iter() const { return gemm_flops_per_iter + attention_flops_per_iter; }
};

// What the account needs beside the pass: the measured run's figures.
struct AccountInputs {
  std::string source;
  double measured_iteration_seconds = 0;  // t
  double profiled_clock_seconds = 0;      // the pass's own clock, summed over its iterations
  int64_t model_flops_per_iter = 0;       // F
  std::optional<double> peak_flop_per_s;  // P
  std::string peak_source;
  // Seconds of the pass's iterations spent waiting for collectives (the step's own measure),
  // summed: exposed_comm holds exactly these. The profiler saw the waits as ranges
  // (range_names.hpp, kCommWait) around the measure, attributed to exposed_comm; what the
  // ranges hold beyond the measure (recording them) goes to other, so the sum is unchanged.
  // 0 on one rank. Only read when exposed_comm_source is kExposedCommFromStep; from the
  // profiler or the device timeline, exposed_comm is what the attribution put there.
  double exposed_comm_seconds = 0;
  std::string exposed_comm_source = kExposedCommFromStep;
  std::optional<int64_t> rank;  // whose pass, on many ranks
  std::optional<DeviceFigures> device;  // the device timeline's figures, summed over the pass (CUDA)
};

// The account of a pass; throws std::invalid_argument when the pass found no iteration or a
// time is not positive.
TimeAccount make_time_account(const ProfiledPass& pass, const AccountInputs& inputs);

// One line of the waterfall: from the peak, each loss, to the MFU.
struct WaterfallStep {
  std::string label;
  double mfu_cost = 0;        // the fraction of the peak this line loses
  double seconds = 0;         // its seconds per iteration
  double remaining = 0;       // the fraction of the peak left after it
};

// The losses in the account's category order (gemm and attention below their ceiling, the
// products beyond the model's count after the peak); empty without a peak.
std::vector<WaterfallStep> waterfall_steps(const TimeAccount& account);

}  // namespace tokbench::account
