// src/cuda/layer_norm_kernels.cu itself, compiled as C++ against the emulated CUDA runtime (include/).
#include "cuda/layer_norm_kernels.cu"
