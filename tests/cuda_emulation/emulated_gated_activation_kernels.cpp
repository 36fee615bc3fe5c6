// src/cuda/gated_activation_kernels.cu itself, compiled as C++ against the emulated CUDA runtime (include/).
#include "cuda/gated_activation_kernels.cu"
