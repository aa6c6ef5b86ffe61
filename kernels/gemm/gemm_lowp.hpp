#pragma once
// Reduced-precision GEMM for callers outside the harness (models/: mixed-precision
// training), one plain function per call site's need:
//
//   C (M, N) = alpha * op(A) * op(B) + beta * C, C row-major; layouts and dtypes as in
//   gemm_types.hpp (nt: X W^T forward, nn: dY W input gradient, tn: X^T dY weight gradient).
//
// On a Hopper GPU, bf16/f16 cases the wgmma kernel accepts (gemm_wgmma.hpp: row strides a
// multiple of 8 elements) run there; everything else runs the mma.sync kernel (gemm_mma.hpp:
// sm_80+, any shape). Both accumulate in FP32.
// Errors as gemm_mma: cudaErrorInvalidValue (bad arguments, dtype f32),
// cudaErrorNotSupported (compute capability < 8.0). Asynchronous on `stream`.
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include "gemm/gemm_mma.hpp"
#include "gemm/gemm_types.hpp"
#include "gemm/gemm_wgmma.hpp"

namespace kernels::gemm {

inline cudaError_t gemm_lowp(Layout layout, TcDType dtype, int M, int N, int K, float alpha, const void* A,
                             const void* B, float beta, void* C, cudaStream_t stream) {
  int device = 0;
  const bool aligned = reinterpret_cast<std::uintptr_t>(A) % 16 == 0 && reinterpret_cast<std::uintptr_t>(B) % 16 == 0;
  if ((dtype == TcDType::bf16 || dtype == TcDType::f16) && aligned && cudaGetDevice(&device) == cudaSuccess &&
      gemm_wgmma_unsupported(device, a_transposed(layout), b_transposed(layout), M, N, K, 2) == nullptr) {
    if (dtype == TcDType::bf16)
      return gemm_wgmma_bf16(a_transposed(layout), b_transposed(layout), M, N, K, alpha,
                             static_cast<const __nv_bfloat16*>(A), static_cast<const __nv_bfloat16*>(B), beta,
                             static_cast<__nv_bfloat16*>(C), stream);
    return gemm_wgmma_f16(a_transposed(layout), b_transposed(layout), M, N, K, alpha, static_cast<const __half*>(A),
                          static_cast<const __half*>(B), beta, static_cast<__half*>(C), stream);
  }
  return gemm_mma(dtype, layout, M, N, K, alpha, A, B, beta, C, stream);
}

// bf16 in, bf16 out, FP32 accumulation.
inline cudaError_t gemm_bf16(Layout layout, int M, int N, int K, float alpha, const __nv_bfloat16* A,
                             const __nv_bfloat16* B, float beta, __nv_bfloat16* C, cudaStream_t stream) {
  return gemm_lowp(layout, TcDType::bf16, M, N, K, alpha, A, B, beta, C, stream);
}

}  // namespace kernels::gemm
