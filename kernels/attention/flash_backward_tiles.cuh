#pragma once
// Pieces shared by the two FP32 backward kernels of flash_backward.cu (CUDA cores and
// 3xTF32): the shared-memory layout, the staging of one query tile, accumulator zeroing
// and vector atomics. All force-inlined; the kernels compile to the same code as with the
// pieces written out.
#include <cstdint>

#include <cuda_runtime.h>

#include "attention_common.cuh"

namespace kernels::attention::detail {

// Shared memory of a backward block, in this order (floats):
//   K, V   (Bc, d) at row stride Ld     the block's keys, resident for the whole block
//   Q, dO  (Br, d) at row stride Ld     the current query tile
//   P^T    (Bc, Br) at row stride LdS   only with kWithPT (the CUDA-core kernel)
//   dS^T   (Bc, Br) at row stride LdS
//   lse2, delta (Br)                    LSE * log2e and D = rowsum(dO * O) of the tile's rows
// Each pointer is the previous one plus its size, as the kernels wrote it out (the same
// address arithmetic, hence the same code).
template <int kBc, int kBr, int kLd, int kLdS, bool kWithPT>
struct BwdSmem {
  float* k;
  float* v;
  float* q;
  float* d_o;
  float* p_t;
  float* ds_t;
  float* lse2;
  float* delta;
  __device__ __forceinline__ explicit BwdSmem(float* base)
      : k(base),
        v(k + kBc * kLd),
        q(v + kBc * kLd),
        d_o(q + kBr * kLd),
        p_t(d_o + kBr * kLd),
        ds_t(kWithPT ? p_t + kBc * kLdS : p_t),
        lse2(ds_t + kBc * kLdS),
        delta(lse2 + kBr) {}
};

// Stages query tile r0 of one (b, h): Q and dO rows [r0, r0 + Br) by cp.async (rows past
// N zero-filled), LSE * log2e and D of those rows (past N: lse_pad and 0), then waits and
// syncs so that the whole tile is visible to the block. row_base: (b * H + h) * N, the
// offset of the head's rows in LSE and D; qh, doh: the head's (N, d) Q and dO.
template <int kBr, int kD, int kLd, int kThreads, class Smem>
__device__ __forceinline__ void stage_query_tile(const Smem& sm, const float* qh,
                                                 const float* doh,
                                                 const float* lse,
                                                 const float* delta,
                                                 std::int64_t row_base, int r0, int n, int tid,
                                                 float lse_pad) {
  cp_async_tile<kBr, kD, kLd, kThreads>(sm.q, qh, r0, n, tid);
  cp_async_tile<kBr, kD, kLd, kThreads>(sm.d_o, doh, r0, n, tid);
  arch::cp_async_commit();
  for (int r = tid; r < kBr; r += kThreads) {
    const bool in = r0 + r < n;
    sm.lse2[r] = in ? lse[row_base + r0 + r] * kLog2e : lse_pad;
    sm.delta[r] = in ? delta[row_base + r0 + r] : 0.0f;
  }
  arch::cp_async_wait<0>();
  __syncthreads();
}

// a = b = 0 for two register accumulators of the same shape.
template <int kRows, int kCols>
__device__ __forceinline__ void zero2(float (&a)[kRows][kCols], float (&b)[kRows][kCols]) {
#pragma unroll
  for (int i = 0; i < kRows; ++i)
#pragma unroll
    for (int j = 0; j < kCols; ++j) a[i][j] = b[i][j] = 0.0f;
}

// *p += v for a float2 or float4 at an 8- or 16-byte aligned address: one vector
// red.global on sm_90, one scalar atomic per component before.
template <class Vec>
__device__ __forceinline__ void atomic_add_vec(float* p, Vec v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  atomicAdd(reinterpret_cast<Vec*>(p), v);
#else
  atomicAdd(p, v.x);
  atomicAdd(p + 1, v.y);
  if constexpr (sizeof(Vec) == 4 * sizeof(float)) {
    atomicAdd(p + 2, v.z);
    atomicAdd(p + 3, v.w);
  }
#endif
}

}  // namespace kernels::attention::detail
