// src/cuda/rope_kernels.cu itself, compiled as C++ against the emulated CUDA runtime (include/).
#include "cuda/rope_kernels.cu"
