# Decide whether the CUDA translation unit is compiled. With nvcc present (AUTO) it is
# compiled and linked against LibTorch's CUDA libraries so CUDA code cannot rot unnoticed,
# even on machines without a GPU; without nvcc it is skipped with a one-line notice.
set(TOKBENCH_CUDA_ENABLED OFF)
if(NOT TOKBENCH_WITH_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER AND TARGET torch_cuda)
    enable_language(CUDA)
    set(TOKBENCH_CUDA_ENABLED ON)
  elseif(TOKBENCH_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "TOKBENCH_WITH_CUDA=ON but no nvcc or no CUDA-enabled LibTorch was found")
  else()
    message(STATUS "tokbench: nvcc or CUDA LibTorch not found; skipping the CUDA translation unit")
  endif()
endif()
