// The time account's profiled pass (time_account_pass.hpp): the iterations under the profiler,
// then the profiler's host events handed to the account layer as plain records.
#include "train/time_account_pass.hpp"

#include <ATen/record_function.h>
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

void synchronize(const c10::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.has_index() ? device.index() : -1);
}

// Stops the profiler if the pass ends by an exception.
class ProfilerSession {
 public:
  ProfilerSession() {
    // Input shapes: the matrix products' FLOPs are counted from them. No memory events and no
    // stacks: each would slow every operator, and the shares are what the pass is for.
    const ProfilerConfig config(ProfilerState::KINETO, /*report_input_shapes=*/true, /*profile_memory=*/false);
    const std::set<ActivityType> activities{ActivityType::CPU};
    quiet_kineto_without_gpu(c10::Device(c10::kCPU));  // the pass profiles CPU runs only
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
    if (e.deviceType() != c10::DeviceType::CPU || e.isAsync()) continue;
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

}  // namespace

std::optional<ProfiledTimeAccount> profile_time_account(TrainStep& step, TokenBatcher& data, const c10::Device& device,
                                                        int64_t grad_accum, int64_t iterations,
                                                        const std::function<bool()>& stop,
                                                        double host_delay_seconds) {
  if (iterations < 1) return std::nullopt;
  ProfiledTimeAccount out;
  synchronize(device);  // what is still queued belongs to the measured loop, not the pass
  step.take_exposed_comm_seconds();
  ProfilerSession session;
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
  out.pass = account::attribute_events(host_events(*result));
  return out;
}

}  // namespace tokbench::train
