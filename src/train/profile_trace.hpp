// `tokbench run --profile PATH`: a Chrome trace (chrome://tracing, Perfetto) of a few training
// iterations, recorded with LibTorch's Kineto profiler, and the named ranges ("forward",
// "backward", "optimizer") that make the trace read as a training step. The profiled
// iterations run after the measured window (train_loop.cpp), so the profiler's overhead
// never reaches a reported number.
#pragma once

#include <ATen/record_function.h>
#include <c10/core/Device.h>

#include <filesystem>
#include <memory>

#include "account/range_names.hpp"  // the ranges tokbench records, named once

namespace tokbench::train {

// A named user range: an at::RecordFunction (USER_SCOPE) that the profiler records and that
// costs a callback check when none is active; on CUDA, while a trace is being recorded, an
// NVTX range too (through LibTorch's CUDA profiler stubs), for Nsight Systems.
class TraceRange {
 public:
  explicit TraceRange(const char* name);
  ~TraceRange();
  TraceRange(const TraceRange&) = delete;
  TraceRange& operator=(const TraceRange&) = delete;

 private:
  at::RecordFunction record_{at::RecordScope::USER_SCOPE};
  bool nvtx_ = false;
};

// Kineto writes an ERROR line at every profiler start on a machine without a GPU (its query of
// the devices fails), which would reach every CPU run's stderr, as the time account profiles by
// default: on CPU runs its log is silenced (KINETO_LOG_LEVEL 5) unless the user set the level.
// Called before a profiler starts; on CUDA, Kineto's messages are kept.
void quiet_kineto_without_gpu(const c10::Device& device);

// Records everything between construction and save(): CPU operators with input shapes, and
// CUDA kernels when `device` is CUDA. One at a time per process (Kineto's profiler is).
class ProfileTrace {
 public:
  explicit ProfileTrace(const c10::Device& device);
  ~ProfileTrace();  // stops the profiler if save() was not reached (an exception)
  // Stops recording and writes the Chrome trace JSON to `path`.
  void save(const std::filesystem::path& path);
  ProfileTrace(const ProfileTrace&) = delete;
  ProfileTrace& operator=(const ProfileTrace&) = delete;

 private:
  bool active_ = false;
};

}  // namespace tokbench::train
