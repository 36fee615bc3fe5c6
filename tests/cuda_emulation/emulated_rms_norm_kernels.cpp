// src/cuda/rms_norm_kernels.cu itself, compiled as C++ against the emulated CUDA runtime (include/).
#include "cuda/rms_norm_kernels.cu"
