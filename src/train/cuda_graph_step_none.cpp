// cuda_graph_step.hpp for builds without the CUDA unit (no nvcc): nothing can be captured, so
// `--cuda-graphs auto` falls back (run_benchmark.cpp asks cuda_graphs_built()) and `on` is
// refused before any work; a call that reaches the factory anyway says why.
#include "train/cuda_graph_step.hpp"

#include <stdexcept>

namespace tokbench::train {

bool cuda_graphs_built() { return false; }

std::unique_ptr<TrainStep> make_cuda_graph_step(std::unique_ptr<TrainStep>, const c10::Device&,
                                                const CudaGraphStepOptions&) {
  throw std::invalid_argument("--cuda-graphs: this tokbench was built without its CUDA unit (no nvcc); valid: "
                              "--cuda-graphs off, or a build with nvcc");
}

}  // namespace tokbench::train
