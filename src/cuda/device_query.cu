// CUDA runtime queries for `tokbench env` and device checks. This is the translation unit
// that keeps CUDA code compiling in CI: it is built by nvcc and links LibTorch's c10_cuda.
#include <c10/cuda/CUDAFunctions.h>
#include <cuda_runtime.h>

#include "cuda/device_query.hpp"

namespace tokbench::cuda {

CudaReport query_cuda() {
  CudaReport report;
  report.compiled = true;
  cudaRuntimeGetVersion(&report.runtime_version);
  if (cudaDriverGetVersion(&report.driver_version) != cudaSuccess || report.driver_version == 0) {
    report.status = "no CUDA driver";
    return report;
  }
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    report.status = cudaGetErrorString(err);
    cudaGetLastError();  // clear the sticky-free error so later CUDA calls start clean
    return report;
  }
  report.torch_device_count = static_cast<int>(c10::cuda::device_count());
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    report.devices.push_back({i, prop.name, static_cast<int64_t>(prop.totalGlobalMem), prop.major,
                              prop.minor, prop.multiProcessorCount});
  }
  report.status = count > 0 ? "ok" : "no CUDA devices";
  return report;
}

}  // namespace tokbench::cuda
