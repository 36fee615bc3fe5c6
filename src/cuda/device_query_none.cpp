// The answer of a build made without nvcc: CUDA was not compiled in.
#include "cuda/device_query.hpp"

namespace tokbench::cuda {

CudaReport query_cuda() {
  CudaReport report;
  report.status = "this tokbench was built without nvcc; CUDA device queries are not compiled in";
  return report;
}

}  // namespace tokbench::cuda
