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
// workspace (optional, 16-byte aligned): gemm_lowp_workspace_bytes(...) bytes let the wgmma
// kernel split K where the shape has few output tiles (gemm_wgmma.hpp); without it every
// call runs unsplit.
#include <cstddef>
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include "gemm/gemm_mma.hpp"
#include "gemm/gemm_types.hpp"
#include "gemm/gemm_wgmma.hpp"

namespace kernels::gemm {

// Whether the wgmma kernel takes this call (a 16-bit dtype on a Hopper GPU it accepts).
inline bool gemm_lowp_on_wgmma(Layout layout, TcDType dtype, int M, int N, int K) {
  int device = 0;
  if (dtype != TcDType::bf16 && dtype != TcDType::f16) return false;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return gemm_wgmma_unsupported(device, a_transposed(layout), b_transposed(layout), M, N, K, 2) == nullptr;
}

// The workspace that lets the call split K (0: it would not split).
inline std::size_t gemm_lowp_workspace_bytes(Layout layout, TcDType dtype, int M, int N, int K) {
  return gemm_lowp_on_wgmma(layout, dtype, M, N, K) ? gemm_wgmma_splitk_workspace_bytes(M, N, K, 2) : 0;
}

// Whether this call with these operands runs on the wgmma kernel: it takes the shape
// (gemm_lowp_on_wgmma) and A, B are 16-byte aligned (TMA). Else gemm_lowp runs mma, and the
// wgmma-only entry points below (bias epilogue, f32 output) refuse.
inline bool gemm_lowp_wgmma_takes(Layout layout, TcDType dtype, int M, int N, int K, const void* A, const void* B) {
  const bool aligned = reinterpret_cast<std::uintptr_t>(A) % 16 == 0 && reinterpret_cast<std::uintptr_t>(B) % 16 == 0;
  return aligned && gemm_lowp_on_wgmma(layout, dtype, M, N, K);
}

inline cudaError_t gemm_lowp(Layout layout, TcDType dtype, int M, int N, int K, float alpha, const void* A,
                             const void* B, float beta, void* C, cudaStream_t stream, void* workspace = nullptr,
                             std::size_t workspace_bytes = 0) {
  if (gemm_lowp_wgmma_takes(layout, dtype, M, N, K, A, B)) {
    if (dtype == TcDType::bf16)
      return gemm_wgmma_bf16(a_transposed(layout), b_transposed(layout), M, N, K, alpha,
                             static_cast<const __nv_bfloat16*>(A), static_cast<const __nv_bfloat16*>(B), beta,
                             static_cast<__nv_bfloat16*>(C), stream, GemmWgmmaTuning{}, workspace, workspace_bytes);
    return gemm_wgmma_f16(a_transposed(layout), b_transposed(layout), M, N, K, alpha, static_cast<const __half*>(A),
                          static_cast<const __half*>(B), beta, static_cast<__half*>(C), stream, GemmWgmmaTuning{},
                          workspace, workspace_bytes);
  }
  return gemm_mma(dtype, layout, M, N, K, alpha, A, B, beta, C, stream);
}

// bf16 in, bf16 out, FP32 accumulation.
inline cudaError_t gemm_bf16(Layout layout, int M, int N, int K, float alpha, const __nv_bfloat16* A,
                             const __nv_bfloat16* B, float beta, __nv_bfloat16* C, cudaStream_t stream,
                             void* workspace = nullptr, std::size_t workspace_bytes = 0) {
  return gemm_lowp(layout, TcDType::bf16, M, N, K, alpha, A, B, beta, C, stream, workspace, workspace_bytes);
}

// C (M, N) bf16 = alpha op(A) op(B) + bias[col], bias (N) f32, added in f32 in the wgmma
// epilogue before the rounding (gemm_wgmma_bf16_bias); beta 0. cudaErrorNotSupported where
// gemm_lowp_wgmma_takes (bf16) is false: there the caller adds the bias in a pass of its own.
// Workspace as gemm_bf16's.
inline cudaError_t gemm_bf16_bias(Layout layout, int M, int N, int K, float alpha, const __nv_bfloat16* A,
                                  const __nv_bfloat16* B, const float* bias, __nv_bfloat16* C, cudaStream_t stream,
                                  void* workspace = nullptr, std::size_t workspace_bytes = 0) {
  if (!gemm_lowp_wgmma_takes(layout, TcDType::bf16, M, N, K, A, B)) return cudaErrorNotSupported;
  return gemm_wgmma_bf16_bias(a_transposed(layout), b_transposed(layout), M, N, K, alpha, A, B, bias, 0.f, C, stream,
                              GemmWgmmaTuning{}, workspace, workspace_bytes);
}

// bf16 A, B with an f32 C (M, N) = alpha op(A) op(B), never rounded to bf16 (gemm_wgmma_bf16_f32);
// cudaErrorNotSupported where gemm_lowp_wgmma_takes (bf16) is false (the mma kernel has no
// f32 output for bf16 inputs). Alpha 1: a split adds its sums straight into C and needs no
// workspace (gemm_wgmma_bf16_f32); else workspace as gemm_bf16's.
inline cudaError_t gemm_bf16_f32(Layout layout, int M, int N, int K, float alpha, const __nv_bfloat16* A,
                                 const __nv_bfloat16* B, float* C, cudaStream_t stream, void* workspace = nullptr,
                                 std::size_t workspace_bytes = 0) {
  if (!gemm_lowp_wgmma_takes(layout, TcDType::bf16, M, N, K, A, B)) return cudaErrorNotSupported;
  return gemm_wgmma_bf16_f32(a_transposed(layout), b_transposed(layout), M, N, K, alpha, A, B, 0.f, C, stream,
                             GemmWgmmaTuning{}, workspace, workspace_bytes);
}

}  // namespace kernels::gemm
