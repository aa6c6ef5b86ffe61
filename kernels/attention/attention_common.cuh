#pragma once
// Device helpers shared by the attention kernels: tile copies by 16-byte cp.async (sm_80+),
// float4 arithmetic, the 3xTF32 split. The instructions themselves come from kernels/arch:
// cp.async, mma.sync, the warp reductions (group8_*: the 8 lanes that share a score row),
// and fast_exp2 (MUFU.EX2 without denormal fix-up: arguments here are s - max <= 0, and a
// result below 2^-126 flushing to 0 is harmless).
#include <cstdint>
#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

#include "arch/numeric.cuh"
#include "arch/sm80_cp_async.cuh"
#include "arch/sm80_mma.cuh"
#include "arch/warp_reduce.cuh"
#include "attention.hpp"

namespace kernels::attention::detail {

inline constexpr float kLog2e = 1.4426950408889634f;  // log2(e): exp(x) = exp2(x * log2e)
inline constexpr float kLn2 = 0.6931471805599453f;

// Copies rows [row0, row0 + kRows) of a (N, kD) row-major matrix into shared memory with
// row stride kLd floats by 16-byte cp.async; rows >= n are zero-filled (src-size 0, nothing
// read), so masked keys contribute 0 * 0, never 0 * garbage (NaN). All kThreads threads
// take part.
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
    arch::cp_async16(dst + r * kLd + col, g, valid);
  }
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

// ---- 3xTF32: FP32 products on tensor cores (mma.sync m16n8k8 .tf32, sm_80+) ----
// x = hi + lo with hi = tf32(x) (round to nearest, 10 explicit mantissa bits) and
// lo = tf32(x - hi) (x - hi is exact in f32); a*b = hi_a hi_b + hi_a lo_b + lo_a hi_b +
// lo_a lo_b, and the last term (~2^-22 |ab|) is dropped: three MMAs per product, f32
// accumulation. The relative error per product is ~2^-21, about FP32's own 2^-24 times 8;
// the same split as CUTLASS's OpMultiplyAddFastF32 (which PyTorch's FP32
// memory-efficient SDPA uses on sm_80+).
// Fragments, lane = 4 g + t (m16n8k8, A row-major 16x8, B "col" 8x8, C 16x8):
//   A a0 (row g, k t)  a1 (row g+8, k t)  a2 (row g, k t+4)  a3 (row g+8, k t+4)
//   B b0 (k t, col g)  b1 (k t+4, col g)
//   C c0 (row g, col 2t)  c1 (row g, col 2t+1)  c2 (row g+8, col 2t)  c3 (row g+8, col 2t+1)
// The k index of a product may be permuted as long as A and B agree: the kernels map
// logical k = t, t+4 to physical columns 2t, 2t+1, so that a C fragment (cols 2t, 2t+1)
// is directly the A fragment of the next product (a0 = c0, a1 = c2, a2 = c1, a3 = c3).
struct Tf32x2 {
  std::uint32_t hi, lo;
};
// Both roundings are to nearest, ties away from zero (what cvt.rna.tf32.f32 does), in
// integer arithmetic: adding 0x1000 (half a tf32 ulp) to the bits and dropping the low 13
// bits. hi is masked (x - hi must be exact in f32); lo keeps its low bits, which the
// .tf32 MMA does not read. Four full-rate ALU operations per element instead of two
// conversions (cvt runs at a fraction of the FMA rate). Finite x below ~2^127 only (x
// here: inputs, scores and probabilities).
__device__ __forceinline__ Tf32x2 split_tf32(float x) {
  Tf32x2 r;
  r.hi = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
  r.lo = __float_as_uint(x - __uint_as_float(r.hi)) + 0x1000u;
  return r;
}
// c += a b in 3xTF32; a: the 4 A elements split, b0/b1: the 2 B elements split. The
// small terms go first so that they are not absorbed by a large partial sum.
__device__ __forceinline__ void mma_3xtf32(float (&c)[4], const Tf32x2 (&a)[4], Tf32x2 b0, Tf32x2 b1) {
  arch::mma_m16n8k8_tf32(c, a[0].lo, a[1].lo, a[2].lo, a[3].lo, b0.hi, b1.hi);
  arch::mma_m16n8k8_tf32(c, a[0].hi, a[1].hi, a[2].hi, a[3].hi, b0.lo, b1.lo);
  arch::mma_m16n8k8_tf32(c, a[0].hi, a[1].hi, a[2].hi, a[3].hi, b0.hi, b1.hi);
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
