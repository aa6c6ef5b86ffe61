#pragma once
// Device helpers shared by the GEMM kernels (internal to kernels/gemm).
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace kernels::gemm {

// A pointer a 16-byte vector load or store may use.
inline bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

inline bool valid_args(int M, int N, int K, const float* A, const float* B, const float* C) {
  return M >= 1 && N >= 1 && K >= 1 && A != nullptr && B != nullptr && C != nullptr;
}

// One element of the result: alpha * acc + beta * c. BLAS semantics: with beta == 0 the old
// C is not read, so NaN (or the harness's poison) in C cannot leak into the result.
__device__ __forceinline__ float epilogue(float acc, float alpha, float beta, const float* c) {
  return beta == 0.0f ? alpha * acc : fmaf(beta, *c, alpha * acc);
}

// P(r, c .. c+3) of a (rows, cols) row-major matrix, zeros outside it.
// kVec: one 16-byte load; the caller guarantees cols % 4 == 0, c % 4 == 0 and a 16-byte
// aligned P, so the float4 is entirely inside or entirely outside the matrix.
template <bool kVec>
__device__ __forceinline__ float4 load4(const float* __restrict__ P, int rows, int cols, int r,
                                        int c) {
  if (r >= rows) return make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  const float* p = P + static_cast<std::size_t>(r) * cols + c;
  if constexpr (kVec) {
    return c < cols ? *reinterpret_cast<const float4*>(p) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  } else {
    return make_float4(c < cols ? p[0] : 0.0f, c + 1 < cols ? p[1] : 0.0f,
                       c + 2 < cols ? p[2] : 0.0f, c + 3 < cols ? p[3] : 0.0f);
  }
}

// C(r, c .. c+3) = alpha * acc + beta * C(r, c .. c+3) for the elements inside (M, N);
// the same alignment contract as load4 for kVec.
template <bool kVec>
__device__ __forceinline__ void store4(float* __restrict__ C, int M, int N, int r, int c,
                                       float4 acc, float alpha, float beta) {
  if (r >= M) return;
  float* p = C + static_cast<std::size_t>(r) * N + c;
  if constexpr (kVec) {
    if (c >= N) return;
    float4 out = make_float4(alpha * acc.x, alpha * acc.y, alpha * acc.z, alpha * acc.w);
    if (beta != 0.0f) {
      const float4 old = *reinterpret_cast<const float4*>(p);
      out = make_float4(fmaf(beta, old.x, out.x), fmaf(beta, old.y, out.y),
                        fmaf(beta, old.z, out.z), fmaf(beta, old.w, out.w));
    }
    *reinterpret_cast<float4*>(p) = out;
  } else {
    const float v[4] = {acc.x, acc.y, acc.z, acc.w};
#pragma unroll
    for (int i = 0; i < 4; ++i)
      if (c + i < N) p[i] = epilogue(v[i], alpha, beta, p + i);
  }
}

}  // namespace kernels::gemm
