// Consumer of the installed package: a plain training loop feeding Throughput, checking that
// the rates, MFU and the peak table work through find_package(tokbench) alone.
#include <cstdio>
#include <tokbench/throughput.hpp>

int main() {
  const auto peak = tokbench::lookup_device_peak("NVIDIA H200", tokbench::Precision::bf16);
  if (!peak || peak->flops_per_s != 989.5e12) return 1;

  tokbench::Throughput::Options options;
  options.window_size = 3;
  options.available_flops = 100.0;
  options.using_sparse_model = false;
  tokbench::Throughput throughput(options);
  for (int step = 1; step <= 3; ++step)  // 1 s per step, 4 samples of 8 tokens, 10 FLOPs
    throughput.update(step, step, 4 * step, 32 * step, 10.0);
  for (const auto& [key, value] : throughput.compute()) std::printf("%s=%g\n", key.c_str(), value);
  const auto metrics = throughput.compute();
  return metrics.back().first == "device/mfu" && metrics.back().second == 0.1 ? 0 : 2;
}
