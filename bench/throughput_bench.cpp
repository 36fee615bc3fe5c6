// Microbenchmarks of the throughput library's hot path: one update() plus one compute() per
// training step, at window 100 with lengths and flops (every key computed), world size 8.
// compute() returns a fresh vector; compute_into() reuses the caller's and is allocation-free.
#include <benchmark/benchmark.h>

#include <tokbench/throughput.hpp>

namespace {

tokbench::Throughput make_throughput(int64_t window) {
  tokbench::ThroughputOptions options;
  options.window_size = window;
  options.world_size = 8;
  options.available_flops = 989.5e12;
  options.using_sparse_model = false;
  return tokbench::Throughput(options);
}

// Steady state: the window is already full, as it is for all but the first steps of a run.
struct Step {
  double time = 0;
  int64_t n = 0;
  void next(tokbench::Throughput& t) {
    ++n;
    time += 0.25;
    t.update(time, n, 8 * n, 8 * 4096 * n, 3.1e15);
  }
};

void BM_UpdateCompute(benchmark::State& state) {
  auto t = make_throughput(state.range(0));
  Step step;
  for (int i = 0; i < state.range(0); ++i) step.next(t);
  for (auto _ : state) {
    step.next(t);
    auto metrics = t.compute();
    benchmark::DoNotOptimize(metrics.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_UpdateCompute)->Arg(100)->Arg(10)->Arg(1000);

void BM_UpdateComputeInto(benchmark::State& state) {
  auto t = make_throughput(state.range(0));
  Step step;
  for (int i = 0; i < state.range(0); ++i) step.next(t);
  tokbench::Metrics metrics;
  for (auto _ : state) {
    step.next(t);
    t.compute_into(metrics);
    benchmark::DoNotOptimize(metrics.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_UpdateComputeInto)->Arg(100)->Arg(10)->Arg(1000);

void BM_UpdateOnly(benchmark::State& state) {
  auto t = make_throughput(100);
  Step step;
  for (auto _ : state) step.next(t);
}
BENCHMARK(BM_UpdateOnly);

void BM_LookupDevicePeak(benchmark::State& state) {
  for (auto _ : state) {
    auto peak = tokbench::lookup_device_peak("NVIDIA H100 80GB HBM3", tokbench::Precision::bf16);
    benchmark::DoNotOptimize(peak);
  }
}
BENCHMARK(BM_LookupDevicePeak);

}  // namespace

BENCHMARK_MAIN();
