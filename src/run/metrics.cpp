// Metric computation. The Throughput window is M+1 updates: the first, at the end of the last
// warm-up iteration (time 0, nothing processed yet), is the reference point, so every rate
// covers exactly the measured window that the average iteration time divides.
#include "run/metrics.hpp"

#include <algorithm>
#include <stdexcept>
#include <cmath>
#include <string>
#include <utility>

#include "throughput/metric_keys.hpp"
#include "tokbench/throughput.hpp"

namespace tokbench::run {
namespace {

namespace mk = tokbench::throughput::metric_key;

std::optional<double> find_metric(const std::vector<std::pair<std::string, double>>& metrics,
                                  const std::string& key) {
  for (const auto& [name, value] : metrics)
    if (name == key) return value;
  return std::nullopt;
}

// --dynamic: the rates above counted every position of the padded sequences; the tokens, the
// model's FLOPs and MFU are the real ones (the reference counts the padding as tokens). Sums
// over the measured iterations, divided by the window; per-iteration FLOPs are their means.
void count_real_work(const MetricInputs& in, const std::vector<const IterationSample*>& measured, BenchMetrics& m) {
  int64_t tokens = 0, flops = 0;
  for (const IterationSample* it : measured) {
    const IterationWork work = in.dynamic_work(it->index);
    tokens += work.tokens;
    flops += work.model_flops;
  }
  const auto W = static_cast<double>(in.world_size);
  const auto M = static_cast<double>(measured.size());
  m.positions_per_s = m.tokens_per_s;
  m.tokens_per_s = static_cast<double>(tokens) / m.window_seconds;
  m.tokens_per_s_per_device = *m.tokens_per_s / W;
  m.flops_per_iter_total = std::llround(static_cast<double>(flops) / M);
  m.flops_per_iter_per_device = std::llround(static_cast<double>(flops) / (M * W));
  m.flops_per_s_total = static_cast<double>(flops) / m.window_seconds;
  m.flops_per_s_per_device = *m.flops_per_s_total / W;
  m.mfu = tokbench::mfu(*m.flops_per_s_per_device, in.peak_flops_per_s);
}

}  // namespace

BenchMetrics compute_metrics(const MetricInputs& in, const MeasuredRun& run) {
  BenchMetrics m;
  // Exact integers, like every other count; resolve refuses runs where these would overflow.
  if (__builtin_mul_overflow(in.flops_per_microbatch, in.train.grad_accum, &m.flops_per_iter_per_device) ||
      __builtin_mul_overflow(m.flops_per_iter_per_device, in.world_size, &m.flops_per_iter_total))
    throw std::overflow_error("model FLOPs per iteration x GA x world size overflow int64");
  m.memory_allocated_peak_GB = static_cast<double>(run.allocated_peak_bytes) / 1e9;
  m.memory_reserved_peak_GB = static_cast<double>(run.reserved_peak_bytes) / 1e9;
  m.peak_rss_GB = static_cast<double>(run.peak_rss_bytes) / 1e9;

  std::vector<const IterationSample*> measured;
  double reference_time = 0;  // end of the last warm-up iteration (loop start when none)
  for (const auto& it : run.iterations) {
    if (it.warmup || it.index < in.train.warmup_iters) {
      reference_time = std::max(reference_time, it.end_time);
    } else {
      measured.push_back(&it);
    }
  }
  // A run that stopped inside warm-up has no measured window: every rate stays unknown.
  if (in.train.warmup_iters > 0 && measured.empty()) return m;
  m.measured_iters = static_cast<int64_t>(measured.size());
  if (measured.empty()) return m;

  const bool finished = run.outcome == Outcome::ok && run.measured_window_seconds > 0;
  m.window_seconds = finished ? run.measured_window_seconds : measured.back()->end_time - reference_time;
  if (!(m.window_seconds > 0)) return m;
  const auto M = static_cast<double>(m.measured_iters);
  m.average_iter_time_ms = m.window_seconds * 1e3 / M;

  std::vector<double> times_ms;
  for (const auto* it : measured) times_ms.push_back(it->seconds * 1e3);
  m.iter_time_ms = summarize(times_ms);
  m.loss_first = measured.front()->loss;
  m.loss_last = measured.back()->loss;

  Throughput::Options options;
  options.world_size = in.world_size;
  options.window_size = m.measured_iters + 1;
  options.using_sparse_model = false;  // dense models; silences the "assuming dense" warning
  if (in.peak_flops_per_s) options.available_flops = *in.peak_flops_per_s;
  Throughput throughput(options);
  // Integer FLOPs: Throughput then sums them exactly, as Lightning does with Python ints.
  const int64_t flops_per_update = m.flops_per_iter_per_device;
  throughput.update(0.0, 0, 0, int64_t{0}, flops_per_update);
  for (std::size_t i = 0; i < measured.size(); ++i) {
    const auto done = static_cast<int64_t>(i + 1);
    const int64_t samples = done * in.train.micro_batch * in.train.grad_accum;  // per device, cumulative
    // The last update's time is the window itself, so the rates divide exactly what the
    // average iteration time divides.
    const double time = i + 1 == measured.size() ? m.window_seconds : measured[i]->end_time - reference_time;
    throughput.update(time, done, samples, samples * in.train.seq_len, flops_per_update);
  }
  const auto rates = throughput.compute();
  const std::string per_device = mk::device + throughput.separator();  // "device/"
  const auto device_items = find_metric(rates, per_device + mk::items_per_sec);
  if (auto items = find_metric(rates, mk::items_per_sec))
    m.tokens_per_s = items;
  else if (device_items)
    m.tokens_per_s = *device_items * static_cast<double>(in.world_size);
  if (m.tokens_per_s) m.tokens_per_s_per_device = *m.tokens_per_s / static_cast<double>(in.world_size);
  m.flops_per_s_per_device = find_metric(rates, per_device + mk::flops_per_sec);
  if (auto total = find_metric(rates, mk::flops_per_sec))
    m.flops_per_s_total = total;
  else if (m.flops_per_s_per_device)
    m.flops_per_s_total = *m.flops_per_s_per_device * static_cast<double>(in.world_size);
  if (m.flops_per_s_per_device) m.mfu = tokbench::mfu(*m.flops_per_s_per_device, in.peak_flops_per_s);
  if (in.dynamic_work) count_real_work(in, measured, m);
  // Executed FLOPs over the same window as the model's: per device, GA micro-batches per
  // iteration, M iterations.
  const int64_t hardware_micro = in.hardware_flops_per_microbatch > 0 ? in.hardware_flops_per_microbatch
                                                                      : in.flops_per_microbatch;
  m.hardware_flops_per_s_per_device = static_cast<double>(hardware_micro) * static_cast<double>(in.train.grad_accum) * M /
                                      m.window_seconds;
  m.hfu = tokbench::mfu(*m.hardware_flops_per_s_per_device, in.peak_flops_per_s);
  if (run.overhead_known && (run.overhead_seconds > 0 || finished))
    m.harness_overhead_percent = 100.0 * run.overhead_seconds / m.window_seconds;
  return m;
}

}  // namespace tokbench::run
