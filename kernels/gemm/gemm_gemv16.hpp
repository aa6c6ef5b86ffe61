#pragma once
// GEMV in 16 bits (bf16, f16 in and out, f32 sums): the decode-like GEMM shapes M == 1 or
// N == 1, memory bound, where a 128-row tensor-core tile would compute 127 wasted rows.
//
//   M == 1: C (1, N) = alpha * a (1, K) * B^T + beta * C with B stored (N, K) (layouts nt, tt):
//           out[n] = alpha * dot(B row n, a) + beta * C[n]
//   N == 1: C (M, 1) = alpha * A (M, K) * b (K, 1) + beta * C with A stored (M, K) (nn, nt)
//   M == N == 1: any layout (both operands are K contiguous elements)
// The vector operand is K contiguous elements in every layout. One warp per output element
// reads its K-contiguous matrix row once (gemm_gemv16.cu). The other layouts (the matrix
// operand stored with its output dimension contiguous) are not taken here:
// gemm_gemv16_unsupported says why, and the caller runs a GEMM kernel instead.
#include <cuda_runtime_api.h>

#include "gemm/gemm_types.hpp"

namespace kernels::gemm {

// nullptr when gemm_gemv16 takes (layout, M, N), else the reason (a static string). Any dtype:
// the 16-bit rule only (host arithmetic).
const char* gemm_gemv16_unsupported(Layout layout, int M, int N);

// dtype bf16 or f16; A, B, C of that type; beta == 0 does not read C. Alignment: 16-byte
// loads where K % 8 == 0 and both operands are 16-byte aligned, else element by element.
// cudaErrorInvalidValue: another dtype, a dimension < 1, a null pointer, or a case
// gemm_gemv16_unsupported refuses. Asynchronous on `stream`.
cudaError_t gemm_gemv16(TcDType dtype, Layout layout, int M, int N, int K, float alpha, const void* A, const void* B,
                        float beta, void* C, cudaStream_t stream);

// The multi-vector form: layout nt (both operands K contiguous) with min(M, N) in 2..8: the big
// operand's rows against every row of the small one at once (4 rows a warp, 16-byte streaming
// loads, f32 sums); K % 8 == 0. nullptr when it takes the case, else the reason.
constexpr int kGemv16MaxVectors = 8;
const char* gemm_gemv16_multi_unsupported(Layout layout, int M, int N, int K);

// As gemm_gemv16, for the cases gemm_gemv16_multi_unsupported accepts; A and B 16-byte aligned
// (else cudaErrorInvalidValue).
cudaError_t gemm_gemv16_multi(TcDType dtype, Layout layout, int M, int N, int K, float alpha, const void* A,
                              const void* B, float beta, void* C, cudaStream_t stream);

}  // namespace kernels::gemm
