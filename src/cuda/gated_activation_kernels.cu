// The gated activation kernels (gated_activation_kernels.hpp): a grid-stride loop over packs of
// 16 bytes per thread (one element per thread where sizes or addresses do not allow that), the
// activation chosen at compile time. The derivatives are those of
// PyTorch's own kernels: silu'(x) = s·(1 + x·(1 − s)) with s = sigmoid(x); exact GELU's
// Φ(x) + x·φ(x); the tanh form's 0.5·(1 + t) + 0.5·x·(1 − t²)·√(2/π)·(1 + 3·0.044715·x²),
// t = tanh(√(2/π)·(x + 0.044715·x³)). The kernels' names say "elementwise", so that a profile's
// time account (account/op_rules.cpp) counts them with the ATen operators they replace.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>

#include "cuda/gated_activation_kernels.hpp"
#include "cuda/float_conversion.cuh"
#include "cuda/kernel_launch.cuh"

namespace tokbench::cuda {
namespace {

constexpr float kSqrt2OverPi = 0.7978845608028654f;  // √(2/π)
constexpr float kInvSqrt2 = 0.7071067811865476f;     // 1/√2
constexpr float kInvSqrt2Pi = 0.3989422804014327f;   // 1/√(2π)
constexpr float kGeluCubic = 0.044715f;

// act(x) and act'(x) for one activation.
template <GateActivation A>
struct Act;

template <>
struct Act<GateActivation::silu> {
  __device__ static float value(float x) { return x / (1.0f + expf(-x)); }
  __device__ static float derivative(float x) {
    const float s = 1.0f / (1.0f + expf(-x));
    return s * (1.0f + x * (1.0f - s));
  }
};

template <>
struct Act<GateActivation::gelu> {
  __device__ static float value(float x) { return 0.5f * x * (1.0f + erff(x * kInvSqrt2)); }
  __device__ static float derivative(float x) {
    return 0.5f * (1.0f + erff(x * kInvSqrt2)) + x * kInvSqrt2Pi * expf(-0.5f * x * x);
  }
};

template <>
struct Act<GateActivation::gelu_tanh> {
  __device__ static float value(float x) {
    return 0.5f * x * (1.0f + tanhf(kSqrt2OverPi * (x + kGeluCubic * x * x * x)));
  }
  __device__ static float derivative(float x) {
    const float t = tanhf(kSqrt2OverPi * (x + kGeluCubic * x * x * x));
    return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * x * x);
  }
};

// N consecutive elements, loaded and stored as one 16-byte access.
template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

// Each thread takes N consecutive elements per step (one 16-byte load per input, one store
// per output: 8 bf16 or 4 fp32), the width ATen's own elementwise kernels use; N = 1 is the
// path for counts or addresses that do not allow it. count: elements, a multiple of N.
template <typename T, int N, GateActivation A>
__global__ void gated_activation_elementwise_forward(const T* __restrict__ gate, const T* __restrict__ up,
                                                     T* __restrict__ h, int64_t count) {
  using P = Pack<T, N>;
  const int64_t packs = count / N;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < packs; i += stride) {
    const P g = reinterpret_cast<const P*>(gate)[i];
    const P u = reinterpret_cast<const P*>(up)[i];
    P out;
#pragma unroll
    for (int k = 0; k < N; ++k) out.v[k] = from_float<T>(Act<A>::value(to_float(g.v[k])) * to_float(u.v[k]));
    reinterpret_cast<P*>(h)[i] = out;
  }
}

template <typename T, int N, GateActivation A>
__global__ void gated_activation_elementwise_backward(const T* __restrict__ grad_h, const T* __restrict__ gate,
                                                      const T* __restrict__ up, T* __restrict__ grad_gate,
                                                      T* __restrict__ grad_up, int64_t count) {
  using P = Pack<T, N>;
  const int64_t packs = count / N;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < packs; i += stride) {
    const P gh = reinterpret_cast<const P*>(grad_h)[i];
    const P x = reinterpret_cast<const P*>(gate)[i];
    const P u = reinterpret_cast<const P*>(up)[i];
    P dg, du;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const float g = to_float(gh.v[k]);
      const float xk = to_float(x.v[k]);
      dg.v[k] = from_float<T>(g * to_float(u.v[k]) * Act<A>::derivative(xk));
      du.v[k] = from_float<T>(g * Act<A>::value(xk));
    }
    reinterpret_cast<P*>(grad_gate)[i] = dg;
    reinterpret_cast<P*>(grad_up)[i] = du;
  }
}

constexpr unsigned kThreads = 256;
// Enough blocks to fill any current GPU many times over; larger tensors loop.
constexpr int64_t kMaxBlocks = 65536;

dim3 grid_for(int64_t items) {
  return dim3(static_cast<unsigned>(std::min<int64_t>(kMaxBlocks, (items + kThreads - 1) / kThreads)));
}

// Whether every pointer allows 16-byte accesses and count is whole packs of `n`.
bool packable(int64_t count, int64_t n, std::initializer_list<const void*> pointers) {
  if (count % n != 0) return false;
  for (const void* p : pointers)
    if (reinterpret_cast<std::uintptr_t>(p) % 16 != 0) return false;
  return true;
}

template <typename T, GateActivation A>
void launch_forward(const void* gate, const void* up, void* h, int64_t count, cudaStream_t s) {
  constexpr int N = 16 / sizeof(T);
  const auto* g = static_cast<const T*>(gate);
  const auto* u = static_cast<const T*>(up);
  auto* out = static_cast<T*>(h);
  if (packable(count, N, {gate, up, h}))
    launch(gated_activation_elementwise_forward<T, N, A>, grid_for(count / N), kThreads, s, g, u, out, count);
  else
    launch(gated_activation_elementwise_forward<T, 1, A>, grid_for(count), kThreads, s, g, u, out, count);
}

template <typename T, GateActivation A>
void launch_backward(const void* grad_h, const void* gate, const void* up, void* grad_gate, void* grad_up,
                     int64_t count, cudaStream_t s) {
  constexpr int N = 16 / sizeof(T);
  const auto* gh = static_cast<const T*>(grad_h);
  const auto* g = static_cast<const T*>(gate);
  const auto* u = static_cast<const T*>(up);
  auto* dg = static_cast<T*>(grad_gate);
  auto* du = static_cast<T*>(grad_up);
  if (packable(count, N, {grad_h, gate, up, grad_gate, grad_up}))
    launch(gated_activation_elementwise_backward<T, N, A>, grid_for(count / N), kThreads, s, gh, g, u, dg, du, count);
  else
    launch(gated_activation_elementwise_backward<T, 1, A>, grid_for(count), kThreads, s, gh, g, u, dg, du, count);
}

template <typename T>
void forward_of(GateActivation activation, const void* gate, const void* up, void* h, int64_t count, cudaStream_t s) {
  switch (activation) {
    case GateActivation::silu: return launch_forward<T, GateActivation::silu>(gate, up, h, count, s);
    case GateActivation::gelu: return launch_forward<T, GateActivation::gelu>(gate, up, h, count, s);
    case GateActivation::gelu_tanh: return launch_forward<T, GateActivation::gelu_tanh>(gate, up, h, count, s);
  }
}

template <typename T>
void backward_of(GateActivation activation, const void* grad_h, const void* gate, const void* up, void* grad_gate,
                 void* grad_up, int64_t count, cudaStream_t s) {
  switch (activation) {
    case GateActivation::silu:
      return launch_backward<T, GateActivation::silu>(grad_h, gate, up, grad_gate, grad_up, count, s);
    case GateActivation::gelu:
      return launch_backward<T, GateActivation::gelu>(grad_h, gate, up, grad_gate, grad_up, count, s);
    case GateActivation::gelu_tanh:
      return launch_backward<T, GateActivation::gelu_tanh>(grad_h, gate, up, grad_gate, grad_up, count, s);
  }
}

}  // namespace

std::string gated_activation_forward(RowType type, GateActivation activation, const void* gate, const void* up,
                                     void* h, int64_t count, void* stream) {
  if (count <= 0) return {};  // an MoE expert without tokens
  const auto s = static_cast<cudaStream_t>(stream);
  if (type == RowType::bf16)
    forward_of<__nv_bfloat16>(activation, gate, up, h, count, s);
  else
    forward_of<float>(activation, gate, up, h, count, s);
  return launch_result("gated_activation_forward");
}

std::string gated_activation_backward(RowType type, GateActivation activation, const void* grad_h, const void* gate,
                                      const void* up, void* grad_gate, void* grad_up, int64_t count, void* stream) {
  if (count <= 0) return {};
  const auto s = static_cast<cudaStream_t>(stream);
  if (type == RowType::bf16)
    backward_of<__nv_bfloat16>(activation, grad_h, gate, up, grad_gate, grad_up, count, s);
  else
    backward_of<float>(activation, grad_h, gate, up, grad_gate, grad_up, count, s);
  return launch_result("gated_activation_backward");
}

}  // namespace tokbench::cuda
