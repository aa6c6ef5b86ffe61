// bf16 casts (single and multi-tensor), residual add, bias add with a float bias, the
// float column sum of a bf16 gradient, and ReLU / GeLU forward and backward (nn_bf16.hpp).
//
// Elementwise kernels: grid-stride loops, one element per thread step, loads widened to
// float, one rounding on the store. Multi-tensor cast: grid (x blocks, tensors of this
// launch); block y walks its tensor grid-stride, the pointers and sizes travel in the
// kernel arguments (kMultiCastTensors * 24 bytes, well under the 4 KiB limit).
// Column sum: (32, 8) threads per block of 32 columns; thread (tx, ty) sums rows ty,
// ty + 8, ... of column 32 bx + tx (each warp reads 32 consecutive elements of a row), then
// the 8 partials of a column are added in a fixed order through shared memory.
#include <algorithm>
#include <cmath>
#include <cstddef>

#include "nn/nn_bf16.hpp"
#include "nn/nn_common.cuh"

namespace kernels::nn {
namespace {
using namespace detail;

__device__ __forceinline__ float f(bf16 v) { return __bfloat162float(v); }
__device__ __forceinline__ bf16 b(float v) { return __float2bfloat16_rn(v); }

#define GRID_STRIDE(i, n)                                                                          \
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)

__global__ void to_bf16_kernel(const float* x, bf16* y, std::size_t n) {
  GRID_STRIDE(i, n) y[i] = b(x[i]);
}
__global__ void to_f32_kernel(const bf16* x, float* y, std::size_t n) {
  GRID_STRIDE(i, n) y[i] = f(x[i]);
}

struct MultiCastArgs {
  const float* src[kMultiCastTensors];
  bf16* dst[kMultiCastTensors];
  std::size_t n[kMultiCastTensors];
};

__global__ void multi_cast_kernel(MultiCastArgs args) {
  const int t = static_cast<int>(blockIdx.y);
  const float* x = args.src[t];
  bf16* y = args.dst[t];
  GRID_STRIDE(i, args.n[t]) y[i] = b(x[i]);
}

__global__ void add_kernel(const bf16* a, const bf16* c_b, bf16* c, std::size_t n) {
  GRID_STRIDE(i, n) c[i] = b(f(a[i]) + f(c_b[i]));
}

__global__ void bias_add_kernel(const bf16* x, const float* bias, bf16* y, int cols, std::size_t n) {
  GRID_STRIDE(i, n) y[i] = b(f(x[i]) + bias[i % static_cast<std::size_t>(cols)]);
}

__device__ __forceinline__ float gelu_tanh(float x, float* dydx) {
  constexpr float kC = 0.7978845608028654f;  // sqrt(2 / pi)
  const float u = kC * (x + 0.044715f * x * x * x);
  const float t = tanhf(u);
  if (dydx != nullptr) *dydx = 0.5f * (1.f + t) + 0.5f * x * (1.f - t * t) * kC * (1.f + 3.f * 0.044715f * x * x);
  return 0.5f * x * (1.f + t);
}

__global__ void act_forward_kernel(Act act, const bf16* x, bf16* y, std::size_t n) {
  GRID_STRIDE(i, n) {
    const float v = f(x[i]);
    y[i] = b(act == Act::relu ? fmaxf(v, 0.f) : act == Act::gelu ? gelu_tanh(v, nullptr) : v);
  }
}

__global__ void act_backward_kernel(Act act, const bf16* x, const bf16* dy, bf16* dx, std::size_t n) {
  GRID_STRIDE(i, n) {
    const float v = f(x[i]);
    float d = 1.f;
    if (act == Act::relu) d = v > 0.f ? 1.f : 0.f;
    else if (act == Act::gelu) gelu_tanh(v, &d);
    dx[i] = b(f(dy[i]) * d);
  }
}

constexpr int kColTile = 32, kColRows = 8;

__global__ void column_sum_kernel(const bf16* dy, float* dbias, int rows, int cols) {
  __shared__ float sh[kColRows][kColTile + 1];
  const int c = static_cast<int>(blockIdx.x) * kColTile + static_cast<int>(threadIdx.x);
  float acc = 0.f;
  if (c < cols)
    for (int r = static_cast<int>(threadIdx.y); r < rows; r += kColRows)
      acc += f(dy[static_cast<std::size_t>(r) * cols + c]);
  sh[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && c < cols) {
    float sum = 0.f;
    for (int k = 0; k < kColRows; ++k) sum += sh[k][threadIdx.x];
    dbias[c] = sum;
  }
}

bool bad(std::size_t n, const void* p) { return n > 0 && p == nullptr; }

}  // namespace

cudaError_t cast_f32_to_bf16(const float* x, bf16* y, std::size_t n, cudaStream_t s) {
  if (bad(n, x) || bad(n, y)) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  to_bf16_kernel<<<grid_for(n), kThreads, 0, s>>>(x, y, n);
  return cudaGetLastError();
}

cudaError_t cast_bf16_to_f32(const bf16* x, float* y, std::size_t n, cudaStream_t s) {
  if (bad(n, x) || bad(n, y)) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  to_f32_kernel<<<grid_for(n), kThreads, 0, s>>>(x, y, n);
  return cudaGetLastError();
}

cudaError_t cast_f32_to_bf16_multi(const float* const* src, bf16* const* dst, const std::size_t* n, int count,
                                   cudaStream_t s) {
  if (count < 0 || (count > 0 && (src == nullptr || dst == nullptr || n == nullptr))) return cudaErrorInvalidValue;
  for (int i = 0; i < count; ++i)
    if (bad(n[i], src[i]) || bad(n[i], dst[i])) return cudaErrorInvalidValue;
  for (int first = 0; first < count; first += kMultiCastTensors) {
    const int m = std::min(kMultiCastTensors, count - first);
    MultiCastArgs args{};
    std::size_t largest = 0;
    for (int i = 0; i < m; ++i) {
      args.src[i] = src[first + i];
      args.dst[i] = dst[first + i];
      args.n[i] = n[first + i];
      largest = std::max(largest, n[first + i]);
    }
    if (largest == 0) continue;
    // Blocks per tensor: enough for the largest, the whole grid at most ~8 blocks per SM.
    const unsigned per_sm_budget = std::max(1u, grid_for(largest * static_cast<std::size_t>(m)) / static_cast<unsigned>(m));
    const unsigned bx = std::min(grid_for(largest), per_sm_budget);
    multi_cast_kernel<<<dim3(bx, static_cast<unsigned>(m)), kThreads, 0, s>>>(args);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

cudaError_t add_bf16(const bf16* a, const bf16* bb, bf16* c, std::size_t n, cudaStream_t s) {
  if (bad(n, a) || bad(n, bb) || bad(n, c)) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  add_kernel<<<grid_for(n), kThreads, 0, s>>>(a, bb, c, n);
  return cudaGetLastError();
}

cudaError_t bias_add_bf16(const bf16* x, const float* bias, bf16* y, int rows, int cols, cudaStream_t s) {
  if (rows < 0 || cols < 0) return cudaErrorInvalidValue;
  const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  if (bad(n, x) || bad(n, bias) || bad(n, y)) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  bias_add_kernel<<<grid_for(n), kThreads, 0, s>>>(x, bias, y, cols, n);
  return cudaGetLastError();
}

cudaError_t column_sum_bf16(const bf16* dy, float* dbias, int rows, int cols, cudaStream_t s) {
  if (rows < 0 || cols < 0 || bad(static_cast<std::size_t>(cols), dbias) ||
      bad(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols), dy))
    return cudaErrorInvalidValue;
  if (cols == 0) return cudaSuccess;
  const unsigned blocks = static_cast<unsigned>((cols + kColTile - 1) / kColTile);
  column_sum_kernel<<<blocks, dim3(kColTile, kColRows), 0, s>>>(dy, dbias, rows, cols);
  return cudaGetLastError();
}

cudaError_t activation_forward_bf16(Act act, const bf16* x, bf16* y, std::size_t n, cudaStream_t s) {
  if (bad(n, x) || bad(n, y)) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  act_forward_kernel<<<grid_for(n), kThreads, 0, s>>>(act, x, y, n);
  return cudaGetLastError();
}

cudaError_t activation_backward_bf16(Act act, const bf16* x, const bf16* dy, bf16* dx, std::size_t n,
                                     cudaStream_t s) {
  if (bad(n, x) || bad(n, dy) || bad(n, dx)) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  act_backward_kernel<<<grid_for(n), kThreads, 0, s>>>(act, x, dy, dx, n);
  return cudaGetLastError();
}

}  // namespace kernels::nn
