// The top softmax rung, register_row (softmax.hpp): the row is read from global memory
// ONCE, into registers, and written once. f32 or bf16 in and out (T), statistics in f32.
//   x, y: (rows, cols) row-major T. Rows are read in 16-byte packs (4 f32 or 8 bf16) when
//   every row starts on a 16-byte boundary (cols % pack == 0 and both pointers 16-byte
//   aligned), else one element at a time (still coalesced: element k * G + g of the row
//   for thread g of G).
//
// What it fixes over warp_per_row / block_per_row (measured 0.67x cuDNN at cols 8192):
// those read the row twice (the online statistic, then again to normalize): 12 bytes of
// global traffic per f32 element instead of 8 where the second read misses L2. Here:
//   1. each thread loads its kN elements of the row into registers (all loads issued
//      before any is used: kN / pack independent 16-byte loads in flight per thread);
//   2. m = row max (thread max, then a group reduction);
//   3. v = exp(v - m) in place and s = row sum of v (thread sum, then a group reduction):
//      the max is known before the exps, so one exp per element and no rescaling;
//   4. y = v * (1 / s), stored from registers.
// Group = the G threads sharing a row, by row length:
//   cols <= 32            G = the power of two >= cols (1 .. 32): 256 / G rows per block,
//                         several rows per warp, reductions by xor shuffles of width G;
//   32 < cols <= 1024     G = 32 (a warp per row, 8 rows per block), kN <= 32 per lane;
//   1024 < cols <= 16384  G = 256, 512 or 1024 (a block per row), kN = 8 or 16 per
//                         thread (2-4 float4): warp shuffles, then the warp results
//                         through shared memory. Few registers per thread (~40) keep
//                         several rows in flight per SM, so one block's loads overlap
//                         another's reductions and stores;
//   cols > 16384          the row does not fit: long_row_kernel (online statistic in one
//                         read, then a second read, which mostly hits L2: <= 256 KiB/row).
// Slots past the row end hold -inf: exp(-inf - m) = 0 for a finite m. An all -inf row has
// m = -inf, exp(NaN) = NaN, s = NaN: its outputs are NaN, as softmax.hpp specifies; a row
// of rows >= `rows` (the last block's spare groups) computes like that and stores nothing.
#include <cstdint>
#include <type_traits>

#include <cuda_bf16.h>

#include "softmax/softmax.hpp"
#include "softmax/softmax_common.cuh"

namespace kernels::softmax {
namespace {
using detail::ceil_div;
using detail::MaxSum;

constexpr int kBlock = 256;  // threads per block when a group is at most a warp

template <class T>
constexpr int kPack = 16 / static_cast<int>(sizeof(T));  // elements per 16-byte load

__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
template <class T>
__device__ __forceinline__ T from_f(float v) {
  if constexpr (std::is_same_v<T, float>) return v;
  else return __float2bfloat16_rn(v);
}

// 16 bytes at p (aligned) as kPack<T> floats, and back.
template <class T>
__device__ __forceinline__ void load_pack(const T* p, float* out) {
  const uint4 q = *reinterpret_cast<const uint4*>(p);
  const unsigned w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if constexpr (std::is_same_v<T, float>) {
      out[i] = __uint_as_float(w[i]);
    } else {  // two bf16 per word, the lower address in the low half
      out[2 * i] = __uint_as_float(w[i] << 16);
      out[2 * i + 1] = __uint_as_float(w[i] & 0xFFFF0000u);
    }
  }
}

template <class T>
__device__ __forceinline__ void store_pack(T* p, const float* in) {
  uint4 q;
  unsigned w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if constexpr (std::is_same_v<T, float>) {
      w[i] = __float_as_uint(in[i]);
    } else {
      const __nv_bfloat162 h = __floats2bfloat162_rn(in[2 * i], in[2 * i + 1]);  // .x = low half
      w[i] = *reinterpret_cast<const unsigned*>(&h);
    }
  }
  q.x = w[0];
  q.y = w[1];
  q.z = w[2];
  q.w = w[3];
  *reinterpret_cast<uint4*>(p) = q;
}

struct Max {
  __device__ static float apply(float a, float b) { return fmaxf(a, b); }
};
struct Sum {
  __device__ static float apply(float a, float b) { return a + b; }
};

// All-reduce over the kG threads of a row group (every lane of the block calls it).
// kG <= 32: xor butterfly within aligned groups of kG lanes. kG > 32 (the whole block):
// warp butterfly, warp results through red[kG / 32], every thread folds them (same
// order: same result); the trailing barrier lets the next call reuse red.
template <int kG, class Op>
__device__ __forceinline__ float group_reduce(float v, float* red) {
#pragma unroll
  for (int o = (kG < 32 ? kG : 32) / 2; o > 0; o /= 2) v = Op::apply(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
  if constexpr (kG > 32) {
    constexpr int kWarps = kG / 32;
    if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = v;
    __syncthreads();
    v = red[0];
#pragma unroll
    for (int w = 1; w < kWarps; ++w) v = Op::apply(v, red[w]);
    __syncthreads();
  }
  return v;
}

// kG threads per row, kN elements per thread (capacity kG * kN >= cols), kVec: 16-byte
// packs (pack k of thread g covers elements (k * kG + g) * P .. + P - 1), else element
// k * kG + g.
template <class T, int kThreads, int kG, int kN, bool kVec>
__global__ void __launch_bounds__(kThreads)
    register_row_kernel(std::int64_t rows, std::int64_t cols, const T* __restrict__ x, T* __restrict__ y) {
  static_assert(kG <= 32 || kG == kThreads, "a group is at most a warp, or the whole block");
  constexpr int P = kPack<T>;
  static_assert(!kVec || kN % P == 0, "whole packs per thread");
  __shared__ float red[kThreads / 32];
  const int g = static_cast<int>(threadIdx.x) % kG;
  const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * (kThreads / kG) + threadIdx.x / kG;
  const bool live = r < rows;
  const std::int64_t base = (live ? r : 0) * cols;
  float v[kN];
  if constexpr (kVec) {
#pragma unroll
    for (int k = 0; k < kN / P; ++k) {
      const std::int64_t j = static_cast<std::int64_t>(k * kG + g) * P;
      if (live && j < cols) {
        load_pack(x + base + j, v + k * P);
      } else {
#pragma unroll
        for (int i = 0; i < P; ++i) v[k * P + i] = -INFINITY;
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < kN; ++k) {
      const std::int64_t j = k * kG + g;
      v[k] = live && j < cols ? to_f(x[base + j]) : -INFINITY;
    }
  }
  float m = -INFINITY;
#pragma unroll
  for (int k = 0; k < kN; ++k) m = fmaxf(m, v[k]);
  m = group_reduce<kG, Max>(m, red);
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < kN; ++k) {
    v[k] = expf(v[k] - m);
    s += v[k];
  }
  s = group_reduce<kG, Sum>(s, red);
  const float inv = 1.0f / s;
#pragma unroll
  for (int k = 0; k < kN; ++k) v[k] *= inv;
  if (!live) return;  // after the last barrier
  if constexpr (kVec) {
#pragma unroll
    for (int k = 0; k < kN / P; ++k) {
      const std::int64_t j = static_cast<std::int64_t>(k * kG + g) * P;
      if (j < cols) store_pack(y + base + j, v + k * P);
    }
  } else {
#pragma unroll
    for (int k = 0; k < kN; ++k) {
      const std::int64_t j = k * kG + g;
      if (j < cols) y[base + j] = from_f<T>(v[k]);
    }
  }
}

// Rows longer than 1024 * 16 elements: a block per row, the online statistic in one
// read (detail::push: a rescale only when the max grows), a combine over the block, then
// a second read to write. Scalar loads (coalesced), any alignment.
template <class T>
__global__ void __launch_bounds__(kBlock) long_row_kernel(std::int64_t cols, const T* __restrict__ x,
                                                          T* __restrict__ y) {
  __shared__ float red_m[kBlock / 32], red_s[kBlock / 32];
  const std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * cols;
  MaxSum a = detail::empty_stat();
  for (std::int64_t j = threadIdx.x; j < cols; j += kBlock) detail::push(a, to_f(x[base + j]));
  a = detail::warp_combine(a);
  if (threadIdx.x % 32 == 0) {
    red_m[threadIdx.x / 32] = a.m;
    red_s[threadIdx.x / 32] = a.s;
  }
  __syncthreads();
  MaxSum row = {red_m[0], red_s[0]};
  for (int w = 1; w < kBlock / 32; ++w) row = detail::combine(row, MaxSum{red_m[w], red_s[w]});
  for (std::int64_t j = threadIdx.x; j < cols; j += kBlock)
    y[base + j] = from_f<T>(detail::normalize(to_f(x[base + j]), row));
}

template <class T, int kG, int kN>
cudaError_t launch_cfg(bool vec, std::int64_t rows, std::int64_t cols, const T* x, T* y, cudaStream_t stream) {
  constexpr int kThreads = kG <= 32 ? kBlock : kG;
  const auto blocks = static_cast<unsigned>(ceil_div(rows, kThreads / kG));
  if constexpr (kN % kPack<T> == 0) {
    if (vec) {
      register_row_kernel<T, kThreads, kG, kN, true><<<blocks, kThreads, 0, stream>>>(rows, cols, x, y);
      return cudaGetLastError();
    }
  }
  register_row_kernel<T, kThreads, kG, kN, false><<<blocks, kThreads, 0, stream>>>(rows, cols, x, y);
  return cudaGetLastError();
}

template <class T>
cudaError_t run(std::int64_t rows, std::int64_t cols, const T* x, T* y, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0 || rows > 0x7FFFFFFF) return cudaErrorInvalidValue;
  const bool vec = cols % kPack<T> == 0 &&
                   ((reinterpret_cast<std::uintptr_t>(x) | reinterpret_cast<std::uintptr_t>(y)) % 16) == 0;
  if (cols <= 1) return launch_cfg<T, 1, 1>(false, rows, cols, x, y, stream);
  if (cols <= 2) return launch_cfg<T, 2, 1>(false, rows, cols, x, y, stream);
  if (cols <= 4) return launch_cfg<T, 4, 1>(false, rows, cols, x, y, stream);
  if (cols <= 8) return launch_cfg<T, 8, 1>(false, rows, cols, x, y, stream);
  if (cols <= 16) return launch_cfg<T, 16, 1>(false, rows, cols, x, y, stream);
  if (cols <= 32) return launch_cfg<T, 32, 1>(false, rows, cols, x, y, stream);
  // A warp per row. bf16 packs are 8 elements: at least 8 per lane for the vector path.
  if (cols <= 128 && kPack<T> <= 4) return launch_cfg<T, 32, 4>(vec, rows, cols, x, y, stream);
  if (cols <= 256) return launch_cfg<T, 32, 8>(vec, rows, cols, x, y, stream);
  if (cols <= 512) return launch_cfg<T, 32, 16>(vec, rows, cols, x, y, stream);
  if (cols <= 1024) return launch_cfg<T, 32, 32>(vec, rows, cols, x, y, stream);
  // A block per row: 8 or 16 elements per thread (f32: 2-4 float4 loads in flight).
  if (cols <= 2048) return launch_cfg<T, 256, 8>(vec, rows, cols, x, y, stream);
  if (cols <= 4096) return launch_cfg<T, 256, 16>(vec, rows, cols, x, y, stream);
  if (cols <= 8192) return launch_cfg<T, 512, 16>(vec, rows, cols, x, y, stream);
  if (cols <= 16384) return launch_cfg<T, 1024, 16>(vec, rows, cols, x, y, stream);
  long_row_kernel<T><<<static_cast<unsigned>(rows), kBlock, 0, stream>>>(cols, x, y);
  return cudaGetLastError();
}

}  // namespace

cudaError_t register_row(std::int64_t rows, std::int64_t cols, const float* x, float* y, cudaStream_t stream) {
  return run(rows, cols, x, y, stream);
}

cudaError_t register_row_bf16(std::int64_t rows, std::int64_t cols, const __nv_bfloat16* x, __nv_bfloat16* y,
                              cudaStream_t stream) {
  return run(rows, cols, x, y, stream);
}

}  // namespace kernels::softmax
