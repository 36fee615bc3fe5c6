// The metric contract (docs/PERFORMANCE.md) applied to one finished (or stopped) run. Rates
// come from the throughput library: a Throughput with window M+1 gets a reference update at the end of
// the last warm-up iteration and one per measured iteration, so tokens/s = M·G·T / window and
// tokens/s × average iteration time = G·T. Inputs are plain structs (no LibTorch).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "run/iter_stats.hpp"
#include "train/memory_breakdown.hpp"
#include "train/profiled_time_account.hpp"
#include "train/reference_gemm.hpp"
#include "train/run_status.hpp"
#include "train/train_options.hpp"
#include "train/unit_timings.hpp"

namespace tokbench::run {

// How the run ended: the train layer's status (to_string gives the JSON `status` text).
using Outcome = train::RunStatus;
using train::exit_code;

struct IterationSample {
  int64_t index = 0;
  bool warmup = false;
  double seconds = 0;
  double loss = 0;
  double end_time = 0;  // seconds since the loop started
  int64_t real_tokens = 0;  // this process's real (unpadded) tokens in the iteration; 0: unknown
};

// One rank's own figures in a multi-rank run (rank 0 gathers them).
struct RankSummary {
  int64_t rank = 0;
  std::string status = "ok";
  std::string message;
  std::string host;
  int64_t measured_iters = 0;
  double window_seconds = 0;
  double exposed_comm_seconds = 0;  // summed over measured iterations
  int64_t allocated_peak_bytes = 0;
  int64_t reserved_peak_bytes = 0;
  int64_t peak_rss_bytes = 0;
  std::string kernels;  // the rank's kernel choice: every rank must have used rank 0's
  std::optional<train::MemoryBreakdown> memory_breakdown;
  std::optional<train::ProfiledTimeAccount> time_account;  // the rank's pass; its account is made from it
  std::string time_account_message;  // why the rank has no account though one was asked for; "" otherwise
  // False for a rank whose figures never reached rank 0 (it died or hung) or the launcher (its
  // own record): its memory is unknown, and the record says null, not 0.
  bool reported = true;
};

// What the train layer measured, copied out of its TrainResult. In a multi-rank run the
// window is the slowest rank's and the memory peaks are the maximum over ranks; `ranks`
// holds each rank's own figures.
struct MeasuredRun {
  Outcome outcome = Outcome::ok;
  std::string message;
  std::vector<IterationSample> iterations;  // warm-up included
  double measured_window_seconds = 0;       // 0 when the run did not finish
  int64_t allocated_peak_bytes = 0;
  int64_t reserved_peak_bytes = 0;
  int64_t peak_rss_bytes = 0;
  double overhead_seconds = 0;
  double exposed_comm_seconds = 0;  // this process's, summed over measured iterations
  // False where the executor cannot see them (the Python step on the CPU without tokbench's
  // memory probe beside the binary; it never measures harness overhead): the JSON says null
  // rather than a false 0.
  bool allocation_peaks_known = true;
  bool overhead_known = true;
  bool exposed_comm_known = true;  // false: the Python executors (torch.distributed's waits are not timed)
  std::vector<RankSummary> ranks;   // empty for one process
  std::string kernel_note;          // the step's kernel choice (TrainStep::kernel_note); "" for none
  // The attention kernels the model's layers ran (model::GPTImpl::attention_kernels; the Python
  // step's own report for python-eager and python-inductor); "" when unknown.
  std::string attention_kernel;
  // Why a capture the plan chose (--cuda-graphs) was abandoned at run time ("" when none):
  // train::TrainStep::graph_fallback.
  std::string cuda_graph_fallback;
  // This process's (train/memory_breakdown.hpp); after the ranks are merged, that of the rank
  // with the largest allocated peak. None where the executor cannot see it (Python).
  std::optional<train::MemoryBreakdown> memory_breakdown;
  // This process's per-unit timings (rank 0's in a multi-rank record): the pass after the
  // window (train/unit_timings.hpp). None when not run, not ok, or an executor without it.
  std::optional<train::UnitTimings> unit_timings;
  // The reference probe beside the window (train/reference_gemm.hpp): a one-rank CPU run's;
  // none elsewhere, `reference_probe_why` saying why.
  std::optional<train::ReferenceProbeTimes> reference_probe;
  std::string reference_probe_why;
  // This process's time-account pass; in a multi-rank record, after the ranks are merged, the
  // slowest rank's (docs/time-account.md), which time_account_rank names. None when not run,
  // not ok, or an executor without it.
  std::optional<train::ProfiledTimeAccount> time_account;
  std::optional<int64_t> time_account_rank;  // none for one process
  // Why this process's time account asked for is missing ("no time account: ..."); "" when it
  // is there or was not asked for. Each rank's travels in its rank record.
  std::string time_account_message;
  // A file this process was asked to write besides the record (--dump-memory-snapshot) could
  // not be written: the status says error (an ok run) and the message why, and the process
  // exits 8, tokbench's own output failing (results/record_status.hpp), not 0 or 1.
  bool output_failed = false;
};

// --dynamic: the real tokens and the model FLOPs (of each sequence's real length) of one
// iteration, summed over every rank.
struct IterationWork {
  int64_t tokens = 0;
  int64_t model_flops = 0;
};

// What the metrics need of a run: its loop's options (B, T, GA, warm-up: the run's own record,
// read where it lives rather than copied), the world size, the FLOPs and the peak.
struct MetricInputs {
  const train::TrainOptions& train;
  int64_t world_size = 1;
  int64_t flops_per_microbatch = 0;  // forward + backward, one device
  std::optional<double> peak_flops_per_s;  // per device
  // The FLOPs the device executes per micro-batch (with activation checkpointing, more than the
  // model's); 0: the model's.
  int64_t hardware_flops_per_microbatch = 0;
  // --dynamic (train/sequence_lengths.hpp): iteration i's real work. Set, tokens/s, the model's
  // FLOPs and MFU count the real tokens, and positions_per_s the padded positions processed
  // (hardware FLOPs and HFU count those). Empty: every position is a token.
  std::function<IterationWork(int64_t iteration)> dynamic_work;
};

struct BenchMetrics {
  int64_t measured_iters = 0;                  // M actually completed
  double window_seconds = 0;
  std::optional<double> average_iter_time_ms;  // window / M
  std::optional<IterTimeStats> iter_time_ms;   // over measured iterations
  std::optional<double> tokens_per_s;          // global
  std::optional<double> tokens_per_s_per_device;
  std::optional<double> positions_per_s;      // --dynamic: padded positions processed, global
  int64_t flops_per_iter_per_device = 0;       // micro-batch FLOPs × GA
  int64_t flops_per_iter_total = 0;            // × W
  std::optional<double> flops_per_s_total;
  std::optional<double> flops_per_s_per_device;
  std::optional<double> mfu;                   // fraction, per device
  std::optional<double> hardware_flops_per_s_per_device;  // executed FLOPs (recomputation included)
  std::optional<double> hfu;                   // hardware_flops_per_s_per_device / peak
  std::optional<double> loss_first, loss_last; // measured iterations
  double memory_allocated_peak_GB = 0;         // 10^9 bytes
  double memory_reserved_peak_GB = 0;
  double peak_rss_GB = 0;
  std::optional<double> harness_overhead_percent;
};

BenchMetrics compute_metrics(const MetricInputs& in, const MeasuredRun& run);

}  // namespace tokbench::run
