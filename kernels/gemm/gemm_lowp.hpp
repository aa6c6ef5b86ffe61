#pragma once
// Reduced-precision GEMM for callers outside the harness (models/: mixed-precision
// training), one plain function per call site's need:
//
//   C (M, N) = alpha * op(A) * op(B) + beta * C, C row-major; layouts and dtypes as in
//   gemm_types.hpp (nt: X W^T forward, nn: dY W input gradient, tn: X^T dY weight gradient).
//
// Today it runs the mma.sync kernel (gemm_mma.hpp: sm_80+, any shape, FP32 accumulation);
// a faster kernel for a GPU (Hopper wgmma) can be routed in here without touching callers.
// Errors as gemm_mma: cudaErrorInvalidValue (bad arguments, dtype f32),
// cudaErrorNotSupported (compute capability < 8.0). Asynchronous on `stream`.
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include "gemm/gemm_mma.hpp"
#include "gemm/gemm_types.hpp"

namespace kernels::gemm {

inline cudaError_t gemm_lowp(Layout layout, TcDType dtype, int M, int N, int K, float alpha, const void* A,
                             const void* B, float beta, void* C, cudaStream_t stream) {
  return gemm_mma(dtype, layout, M, N, K, alpha, A, B, beta, C, stream);
}

// bf16 in, bf16 out, FP32 accumulation.
inline cudaError_t gemm_bf16(Layout layout, int M, int N, int K, float alpha, const __nv_bfloat16* A,
                             const __nv_bfloat16* B, float beta, __nv_bfloat16* C, cudaStream_t stream) {
  return gemm_lowp(layout, TcDType::bf16, M, N, K, alpha, A, B, beta, C, stream);
}

}  // namespace kernels::gemm
