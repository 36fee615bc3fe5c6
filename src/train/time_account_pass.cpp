// The time account's profiled pass (time_account_pass.hpp): the iterations under the profiler,
// then the profiler's events handed to the account layer as plain records: the host's on the
// CPU; on a CUDA device the host's, the runtime calls that launched device work and the
// device's kernels, copies and fills (account/device_timeline.hpp).
#include "train/time_account_pass.hpp"

#include <ATen/record_function.h>
#include <kineto/ActivityType.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/cuda.h>

#include <chrono>
#include <thread>

#include "account/range_names.hpp"
#include "train/profile_trace.hpp"

namespace tokbench::train {
namespace {

namespace profiler = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;
using Clock = std::chrono::steady_clock;
using KinetoType = libkineto::ActivityType;

// The run's CUDA device by its index (run_benchmark.cpp always gives one), never the current one.
int device_index(const c10::Device& device) { return device.has_index() ? device.index() : 0; }

void synchronize(const c10::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device_index(device));
}

KinetoType kineto_type(const profiler::KinetoEvent& e) { return static_cast<KinetoType>(e.activityType()); }

// Host-side CUDA calls (cudaLaunchKernel, cuLaunchKernel, cudaMemcpyAsync, cudaDeviceSynchronize,
// ...): Kineto reports them as CPU events, but they are no operator. The ones that launched
// device work are matched to it by CUPTI's correlation id.
bool is_cuda_call(KinetoType t) {
  return t == KinetoType::CUDA_RUNTIME || t == KinetoType::CUDA_DRIVER || t == KinetoType::CUDA_SYNC ||
         t == KinetoType::CUDA_EVENT;
}

// Device work: kernels, copies, fills (not CUDA_SYNC, the device's record of a wait).
bool is_device_work(KinetoType t) {
  return t == KinetoType::CONCURRENT_KERNEL || t == KinetoType::GPU_MEMCPY || t == KinetoType::GPU_MEMSET;
}

// Stops the profiler if the pass ends by an exception.
class ProfilerSession {
 public:
  explicit ProfilerSession(const c10::Device& device) {
    // Input shapes: the matrix products' FLOPs are counted from them. No memory events and no
    // stacks: each would slow every operator, and the shares are what the pass is for.
    const ProfilerConfig config(ProfilerState::KINETO, /*report_input_shapes=*/true, /*profile_memory=*/false);
    // On a CUDA device, CUPTI's activities too: kernels, copies, fills and the runtime calls.
    std::set<ActivityType> activities{ActivityType::CPU};
    if (device.is_cuda()) activities.insert(ActivityType::CUDA);
    quiet_kineto_without_gpu(device);  // a CPU run's Kineto would say it found no GPU
    profiler::prepareProfiler(config, activities);
    profiler::enableProfiler(config, activities);
    active_ = true;
  }
  ~ProfilerSession() {
    if (active_) (void)profiler::disableProfiler();
  }
  std::unique_ptr<profiler::ProfilerResult> stop() {
    active_ = false;
    return profiler::disableProfiler();
  }
  ProfilerSession(const ProfilerSession&) = delete;
  ProfilerSession& operator=(const ProfilerSession&) = delete;

 private:
  bool active_ = false;
};

std::vector<account::ProfiledEvent> host_events(const profiler::ProfilerResult& result) {
  std::vector<account::ProfiledEvent> events;
  events.reserve(result.events().size());
  for (const auto& e : result.events()) {
    if (e.deviceType() != c10::DeviceType::CPU || e.isAsync() || is_cuda_call(kineto_type(e))) continue;
    account::ProfiledEvent out;
    out.name = e.name();
    out.start_ns = static_cast<int64_t>(e.startNs());
    out.end_ns = static_cast<int64_t>(e.endNs());
    out.thread = e.startThreadId();
    out.sequence_nr = e.sequenceNr();
    // The engine's wrapper of a node records the node's number and forward thread too.
    out.backward_node = e.scope() == static_cast<uint8_t>(at::RecordScope::BACKWARD_FUNCTION) || e.fwdThreadId() > 0;
    if (e.hasShapes())
      for (const auto& shape : e.shapes()) out.input_shapes.push_back(shape);
    events.push_back(std::move(out));
  }
  return events;
}

// The runtime and driver calls, by the correlation id CUPTI gave them and the device work they
// launched. (KinetoEvent::linkedCorrelationId, the operator Kineto links a kernel to, is not
// used: it names the innermost operator that was open, skipping USER_SCOPE ranges such as
// tokbench::norm, and none when only ranges were; the call's instant, placed in the host's
// nesting, finds the innermost event of any kind.)
std::vector<account::LaunchCall> launch_calls(const profiler::ProfilerResult& result) {
  std::vector<account::LaunchCall> calls;
  for (const auto& e : result.events()) {
    const KinetoType t = kineto_type(e);
    if (t != KinetoType::CUDA_RUNTIME && t != KinetoType::CUDA_DRIVER) continue;
    calls.push_back({e.correlationId(), static_cast<int64_t>(e.startNs()), e.startThreadId()});
  }
  return calls;
}

// The run's device's kernels, copies and fills; another device's (none in tokbench's one
// device per process) are not this rank's.
std::vector<account::DeviceActivity> device_activities(const profiler::ProfilerResult& result, int index) {
  std::vector<account::DeviceActivity> out;
  for (const auto& e : result.events()) {
    if (e.deviceType() != c10::DeviceType::CUDA || !is_device_work(kineto_type(e)) || e.deviceIndex() != index)
      continue;
    out.push_back({e.name(), static_cast<int64_t>(e.startNs()), static_cast<int64_t>(e.endNs()),
                   e.deviceResourceId(), e.correlationId()});
  }
  return out;
}

}  // namespace

std::optional<ProfiledTimeAccount> profile_time_account(TrainStep& step, TokenBatcher& data, const c10::Device& device,
                                                        int64_t grad_accum, int64_t iterations,
                                                        const std::function<bool()>& stop,
                                                        double host_delay_seconds) {
  if (iterations < 1) return std::nullopt;
  ProfiledTimeAccount out;
  synchronize(device);  // what is still queued belongs to the measured loop, not the pass
  step.take_exposed_comm_seconds();
  ProfilerSession session(device);
  for (int64_t i = 0; i < iterations; ++i) {
    if (stop && stop()) return std::nullopt;
    const Clock::time_point start = Clock::now();
    {
      TraceRange iteration(account::ranges::kIteration);
      if (host_delay_seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(host_delay_seconds));
      at::Tensor loss;
      for (int64_t micro = 0; micro < grad_accum; ++micro) {
        std::optional<TokenBatch> batch;
        {
          TraceRange range(account::ranges::kData);
          batch.emplace(data.next());
        }
        loss = step.forward_backward(*batch, micro, grad_accum);
      }
      {
        TraceRange range(account::ranges::kOptimizer);
        step.optimizer_step(loss);
      }
      synchronize(device);
    }
    out.clock_seconds += std::chrono::duration<double>(Clock::now() - start).count();
    out.exposed_comm_seconds += step.take_exposed_comm_seconds();
  }
  const auto result = session.stop();
  if (!device.is_cuda()) {
    out.pass = account::attribute_events(host_events(*result));
    return out;
  }
  auto activities = device_activities(*result, device_index(device));
  // A runtime where CUPTI cannot trace (some sandboxes) leaves only a warning in Kineto's log: an
  // account from no device activity would show an idle device, not the run.
  if (activities.empty())
    throw std::runtime_error("the profiler recorded no device activity in the profiled iterations (can CUPTI trace "
                             "in this runtime?)");
  account::DevicePass timeline =
      account::attribute_device_timeline(host_events(*result), launch_calls(*result), std::move(activities));
  out.source = "kineto_cuda";
  out.pass = std::move(timeline.pass);
  out.device = timeline.device;
  // NCCL's Work::wait() makes the compute stream wait, not the host: the step's measure does
  // not see the device's exposed communication, the timeline does (docs/time-account.md).
  out.exposed_comm_source = account::kExposedCommFromDeviceTimeline;
  return out;
}

}  // namespace tokbench::train
