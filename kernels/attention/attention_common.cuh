#pragma once
// Device helpers shared by the attention kernels: 16-byte async copies (sm_80+), warp
// reductions over the 8-lane groups that share a score row, float4 arithmetic.
#include <cstdint>
#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

#include "attention.hpp"

namespace kernels::attention::detail {

inline constexpr float kLog2e = 1.4426950408889634f;  // log2(e): exp(x) = exp2(x * log2e)
inline constexpr float kLn2 = 0.6931471805599453f;

// 16-byte global -> shared copy that bypasses registers (cp.async.cg, L2 only). With
// `valid` false nothing is read and the 16 bytes are zero-filled (src-size 0): tails past
// N become zeros, so masked keys contribute 0 * 0, never 0 * garbage (NaN).
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, bool valid) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const int src_size = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem),
               "r"(src_size)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
// Waits until at most `kPending` of this thread's committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// Copies rows [row0, row0 + kRows) of a (N, kD) row-major matrix into shared memory with
// row stride kLd floats; rows >= n are zero-filled. All kThreads threads take part.
template <int kRows, int kD, int kLd, int kThreads>
__device__ __forceinline__ void cp_async_tile(float* dst, const float* __restrict__ src, int row0,
                                              int n, int tid) {
  constexpr int kChunksPerRow = kD / 4;
  constexpr int kChunks = kRows * kChunksPerRow;
  static_assert(kChunks % kThreads == 0, "tile must split evenly over the block");
#pragma unroll
  for (int it = 0; it < kChunks / kThreads; ++it) {
    const int c = tid + it * kThreads;
    const int r = c / kChunksPerRow;
    const int col = (c % kChunksPerRow) * 4;
    const bool valid = row0 + r < n;
    const float* g = valid ? src + static_cast<std::int64_t>(row0 + r) * kD + col : src;
    cp_async16(dst + r * kLd + col, g, valid);
  }
}

// Max / sum over the 8 consecutive lanes (lane & 7) that hold one row's columns.
__device__ __forceinline__ float group8_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 4));
  return x;
}
__device__ __forceinline__ float group8_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  x += __shfl_xor_sync(0xffffffffu, x, 2);
  x += __shfl_xor_sync(0xffffffffu, x, 4);
  return x;
}
__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}
__device__ __forceinline__ float warp_max(float x) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
  return x;
}

// 2^x with one MUFU.EX2 (no denormal fix-up: arguments here are s - max <= 0, and a
// result below 2^-126 flushing to 0 is harmless; -inf gives +0).
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float dot4(float4 a, float4 b, float acc) {
  acc = fmaf(a.x, b.x, acc);
  acc = fmaf(a.y, b.y, acc);
  acc = fmaf(a.z, b.z, acc);
  acc = fmaf(a.w, b.w, acc);
  return acc;
}
__device__ __forceinline__ float get(const float4& v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;  // i is a compile-time constant
}

// Sets the dynamic shared memory limit of a kernel once per process (and prefers the
// largest shared-memory carveout so that two blocks fit per SM).
template <typename Kernel>
cudaError_t prepare_kernel(Kernel kernel, int smem_bytes) {
  cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       smem_bytes);
  if (e != cudaSuccess) return e;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                              cudaSharedmemCarveoutMaxShared);
}

// D = rowsum(dO * O) for every query row, (B*H*N). Shared by both backward passes.
cudaError_t launch_row_dot(const float* d_o, const float* o, float* delta, std::int64_t rows,
                           int head_dim, cudaStream_t stream);

inline void require_valid(const Shape& shape) {
  const std::string why = shape_error(shape);
  if (!why.empty()) throw std::invalid_argument("attention: " + why);
}

}  // namespace kernels::attention::detail
