// ThroughputMonitor: Fabric's monitor without Fabric. The caller supplies the rank, the peak
// (via Options) and a sink; only rank 0 measures, like Lightning's rank_zero_only wrappers,
// while every rank still validates its options so a bad config fails everywhere.
#include "tokbench/throughput.hpp"

namespace tokbench {

ThroughputMonitor::ThroughputMonitor(Throughput::Options options, int64_t rank, MetricsSink sink)
    : throughput_(std::move(options), /*emit_warnings=*/rank == 0),
      rank_(rank),
      sink_(std::move(sink)) {}

void ThroughputMonitor::update(double time, int64_t batches, int64_t samples,
                               std::optional<int64_t> lengths, std::optional<double> flops) {
  if (!is_rank_zero()) return;
  throughput_.update(time, batches, samples, lengths, flops);
}

Metrics ThroughputMonitor::compute() const {
  if (!is_rank_zero()) return {};
  return throughput_.compute();
}

TypedMetrics ThroughputMonitor::compute_and_log(std::optional<int64_t> step) {
  if (!is_rank_zero()) return {};
  step_ = step.has_value() ? *step : step_ + 1;
  TypedMetrics metrics = throughput_.compute_typed();
  if (sink_) sink_(metrics, step_);
  return metrics;
}

void ThroughputMonitor::reset() {
  if (!is_rank_zero()) return;
  throughput_.reset();
}

}  // namespace tokbench
