// The Kineto trace and the named ranges (profile_trace.hpp).
#include "train/profile_trace.hpp"

#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/csrc/profiler/stubs/base.h>

#include <cstdlib>
#include <atomic>
#include <set>

namespace tokbench::train {
namespace {

namespace profiler = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

// NVTX ranges are pushed only while a CUDA trace is being recorded: outside --profile the
// ranges stay a callback check.
std::atomic<bool> g_nvtx_ranges{false};

}  // namespace

TraceRange::TraceRange(const char* name) {
  if (record_.isActive()) record_.before(name);
  if (g_nvtx_ranges.load(std::memory_order_relaxed)) {
    torch::profiler::impl::cudaStubs()->rangePush(name);
    nvtx_ = true;
  }
}

TraceRange::~TraceRange() {
  if (nvtx_) torch::profiler::impl::cudaStubs()->rangePop();
}

void quiet_kineto_without_gpu(const c10::Device& device) {
  if (!device.is_cuda()) ::setenv("KINETO_LOG_LEVEL", "5", /*overwrite=*/0);
}

ProfileTrace::ProfileTrace(const c10::Device& device) {
  quiet_kineto_without_gpu(device);
  // record_shapes: the trace shows each matmul's shapes. profile_memory: every allocation
  // and free is a [memory] event under the operator that made it (what
  // bench/allocations_by_op.py sums); the profiled iterations are outside the metrics, so
  // its cost is harmless. No stack capture, which would slow them far more.
  const ProfilerConfig config(ProfilerState::KINETO, /*report_input_shapes=*/true, /*profile_memory=*/true);
  std::set<ActivityType> activities{ActivityType::CPU};
  if (device.is_cuda()) activities.insert(ActivityType::CUDA);
  profiler::prepareProfiler(config, activities);
  profiler::enableProfiler(config, activities);
  active_ = true;
  if (device.is_cuda() && torch::profiler::impl::cudaStubs()->enabled()) g_nvtx_ranges.store(true);
}

ProfileTrace::~ProfileTrace() {
  g_nvtx_ranges.store(false);
  if (active_) (void)profiler::disableProfiler();
}

void ProfileTrace::save(const std::filesystem::path& path) {
  g_nvtx_ranges.store(false);
  active_ = false;
  auto result = profiler::disableProfiler();
  result->save(path.string());
}

}  // namespace tokbench::train
