// What the time account's profiled pass measured (time_account_pass.hpp), before the run's own
// figures (the measured iteration, the model FLOPs, the peak) turn it into an account
// (account::make_time_account). A plain record, torch-free, so the run layer's record carries
// it without LibTorch.
#pragma once

#include <optional>
#include <string>

#include "account/device_timeline.hpp"
#include "account/profiled_pass.hpp"
#include "account/time_account.hpp"

namespace tokbench::train {

struct ProfiledTimeAccount {
  // How the events were recorded: "kineto_cpu" (LibTorch's Kineto profiler, tokbench's own
  // steps), "kineto_cuda" (the same with the CUDA device's activities: the categories are the
  // device timeline's, account/device_timeline.hpp) or "torch_profiler_cpu" (torch.profiler in
  // the Python executors' child).
  std::string source = "kineto_cpu";
  account::ProfiledPass pass;
  double clock_seconds = 0;         // the pass's iterations by the host clock, summed
  // The step's own measure over the pass, summed (0 on one rank); on a CUDA device the device
  // timeline's exposed communication (the host does not wait for NCCL: docs/time-account.md).
  double exposed_comm_seconds = 0;
  std::optional<account::DeviceFigures> device;  // on a CUDA device, summed over the pass
  // Who measured exposed communication (account::kExposedCommFromStep: the step, above; or
  // account::kExposedCommFromProfiler: the pass's attribution, for the Python executors).
  std::string exposed_comm_source = account::kExposedCommFromStep;
};

}  // namespace tokbench::train
