// What the time account's profiled pass measured (time_account_pass.hpp), before the run's own
// figures (the measured iteration, the model FLOPs, the peak) turn it into an account
// (account::make_time_account). A plain record, torch-free, so the run layer's record carries
// it without LibTorch.
#pragma once

#include <string>

#include "account/profiled_pass.hpp"
#include "account/time_account.hpp"

namespace tokbench::train {

struct ProfiledTimeAccount {
  // How the events were recorded: "kineto_cpu" (LibTorch's Kineto profiler, tokbench's own
  // steps) or "torch_profiler_cpu" (torch.profiler in the Python executors' child).
  std::string source = "kineto_cpu";
  account::ProfiledPass pass;
  double clock_seconds = 0;         // the pass's iterations by the host clock, summed
  double exposed_comm_seconds = 0;  // the step's own measure over the pass, summed (0 on one rank)
  // Who measured exposed communication (account::kExposedCommFromStep: the step, above; or
  // account::kExposedCommFromProfiler: the pass's attribution, for the Python executors).
  std::string exposed_comm_source = account::kExposedCommFromStep;
};

}  // namespace tokbench::train
