// src/cuda/cross_entropy_kernels.cu itself, compiled as C++ against the emulated CUDA runtime (include/).
#include "cuda/cross_entropy_kernels.cu"
