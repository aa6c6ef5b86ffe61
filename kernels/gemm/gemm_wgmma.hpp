#pragma once
// Hopper (sm_90a) tensor-core GEMM: TMA loads, wgmma.mma_async, warp specialization and a
// persistent tile scheduler. 16-bit inputs and output, f32 accumulation:
//
//   C (M, N) = alpha * op(A) (M, K) * op(B) (K, N) + beta * C, C row-major (leading dim N)
//
// Layout letters as cuBLAS's op(A), op(B), for row-major storage:
//   a_trans = false ('n'): A stored (M, K) row-major        a_trans = true ('t'): A stored (K, M)
//   b_trans = false ('n'): B stored (K, N) row-major        b_trans = true ('t'): B stored (N, K)
// All four layouts run: K-major operands (A 'n', B 't') natively, M/N-major ones (A 't',
// B 'n') through wgmma's transpose bits, which exist for 16-bit types.
//
// beta == 0: C is written only, never read (BLAS semantics).
//
// Constraints (gemm_wgmma_unsupported says which one fails): a device of compute capability
// 9.0 (the kernel is built for sm_90a only); 2-byte elements; M, N, K >= 1; the tensor
// memory accelerator (TMA) needs 16-byte aligned row strides, so the stored leading
// dimension of A and of B (K for A 'n' and B 't', M for A 't', N for B 'n') must be a
// multiple of 8 elements. C has no alignment constraint (the epilogue stores are
// predicated per element). Pointers A and B must be 16-byte aligned (cudaMalloc's are);
// the launch functions return cudaErrorInvalidValue otherwise.
//
// The launch functions are asynchronous on `stream`, allocate nothing, and return
// cudaErrorInvalidValue for bad arguments, cudaErrorNotSupported for a case
// gemm_wgmma_unsupported rejects, else the launch status.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

namespace kernels::gemm {

// nullptr when gemm_wgmma_* can run this case on `device`, else the reason (a static
// string). elem_bytes: size of one input element (2 for bf16 and f16).
const char* gemm_wgmma_unsupported(int device, bool a_trans, bool b_trans, int M, int N, int K,
                                   int elem_bytes);

cudaError_t gemm_wgmma_bf16(bool a_trans, bool b_trans, int M, int N, int K, float alpha,
                            const __nv_bfloat16* A, const __nv_bfloat16* B, float beta,
                            __nv_bfloat16* C, cudaStream_t stream);

cudaError_t gemm_wgmma_f16(bool a_trans, bool b_trans, int M, int N, int K, float alpha,
                           const __half* A, const __half* B, float beta, __half* C,
                           cudaStream_t stream);

}  // namespace kernels::gemm
