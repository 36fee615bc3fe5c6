// What CUDA devices this process can see, asked through the CUDA runtime. The CUDA build
// (device_query.cu, compiled by nvcc and linked against LibTorch's c10_cuda) answers for real;
// a build without nvcc answers "not compiled" from device_query_none.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tokbench::cuda {

struct CudaDeviceInfo {
  int index = 0;
  std::string name;              // as the driver reports it, e.g. "NVIDIA H200"
  int64_t total_memory_bytes = 0;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int multiprocessors = 0;
};

struct CudaReport {
  bool compiled = false;   // was the CUDA translation unit built?
  std::string status;      // "ok", or why no device is usable ("no CUDA driver", ...)
  int driver_version = 0;  // e.g. 13000
  int runtime_version = 0;
  int torch_device_count = 0;  // what LibTorch's c10_cuda sees
  std::vector<CudaDeviceInfo> devices;
};

CudaReport query_cuda();

}  // namespace tokbench::cuda
