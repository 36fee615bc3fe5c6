// The time account on a CUDA device (docs/time-account.md, "On a CUDA device"): the device's
// timeline, not the host's, is split into the categories. The host events say what each
// stretch of device time was for:
//   - a kernel, copy or fill belongs to the host event that launched it: its runtime call
//     (cudaLaunchKernel, cuLaunchKernel, cudaMemcpyAsync, ...; matched by the correlation id
//     CUPTI gives both) happened at an instant on a host thread, and the innermost host event
//     enclosing that instant, classified by the same rules as on the CPU (classify_events),
//     gives its category. So the categories mean the same on either device;
//   - time when several activities run at once (streams) is counted once: each elementary
//     stretch of the iteration goes to one place. Compute (any non-communication activity) is
//     split evenly between the compute activities running then (whole nanoseconds, the
//     remainder to the earliest started). Communication kernels (NCCL) running beside compute
//     are hidden and cost nothing; running alone they are exposed_comm, as HTA defines it;
//   - when nothing runs the device is idle: that time is data_host when the host is then in
//     data_host's work (tokbench::data, or the iteration range's own gaps: the host between
//     iterations), else device_idle (the device waits for the host's launches);
//   - where that host event says nothing (its category is other: a compiled graph's range, a
//     fusion's call, the framework's glue between operators) or the launch is not found (no
//     runtime call with its correlation id, or the call in no host event; such activities are
//     counted), the kernel's own name decides (op_rules.hpp, category_of_kernel); a name that
//     says nothing leaves it in other.
// The iteration ranges are the host's (on the loop's thread); the host and the device events
// are on one clock (Kineto converts CUPTI's timestamps to the host's). Each iteration ends
// after a device synchronisation, so its device work lies inside its range; an activity is
// clipped to the range all the same. The categories sum to the ranges exactly (integer
// nanoseconds until the final conversion). Torch-free: the train layer converts the profiler's
// events.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "account/profiled_pass.hpp"

namespace tokbench::account {

// A kernel, memcpy or memset on the device, as CUPTI recorded it.
struct DeviceActivity {
  std::string name;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t stream = 0;
  uint64_t correlation_id = 0;  // CUPTI's: the same as its launching runtime call's; 0 when none
};

// A host runtime or driver call that launched device work (cudaLaunchKernel, cuLaunchKernel,
// cudaMemcpyAsync, ...): where and when the launch happened.
struct LaunchCall {
  uint64_t correlation_id = 0;
  int64_t start_ns = 0;
  uint64_t thread = 0;  // the host thread it ran on (the profiler's thread ids, as ProfiledEvent's)
};

// What the device timeline adds to a pass's figures, summed over its iterations.
struct DeviceFigures {
  double busy_seconds = 0;            // the union of the activities' time inside the iteration ranges
  int64_t activities = 0;             // kernels, copies and fills inside the iteration ranges
  int64_t unlaunched_activities = 0;  // of them, those whose launch was not found (their time is other)
  double unlaunched_seconds = 0;      // the time attributed to those
  double hidden_comm_seconds = 0;     // communication kernels' time overlapped by compute (no category)
};

struct DevicePass {
  ProfiledPass pass;  // seconds per category from the device timeline; FLOPs from the host operators
  DeviceFigures device;
};

// Communication kernels: NCCL's (ncclKernel_..., ncclDevKernel_...).
bool is_communication_kernel(const std::string& name);

// The account of a pass on a CUDA device: `host` the host events of every thread (as for
// attribute_events), `launches` the runtime calls, `activities` the device's (one device: the
// caller keeps only the run's). The pass's iterations, ranges, matrix FLOPs and events are the
// host's; its seconds per category are the device timeline's; other_by_name names the launching
// host event (or the activity, when its launch is unknown).
DevicePass attribute_device_timeline(const std::vector<ProfiledEvent>& host, const std::vector<LaunchCall>& launches,
                                     std::vector<DeviceActivity> activities);

}  // namespace tokbench::account
