// The answer of a build made without nvcc: CUDA was not compiled in.
#include "cuda/device_query.hpp"

namespace tokbench::device {

CudaReport query_cuda() {
  CudaReport report;
  report.status = "this tokbench was built without nvcc; CUDA device queries are not compiled in";
  return report;
}

}  // namespace tokbench::device
