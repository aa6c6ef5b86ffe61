#pragma once
// cuBLAS GEMM with this folder's row-major convention (see gemm.hpp, gemm_types.hpp):
//   C (M, N) = alpha * op(A) * op(B) + beta * C, all row-major.
//
// cuBLAS is column-major. A row-major (R, S) matrix is the column-major (S, R) matrix of
// its transpose, so computing C^T (N, M) = op(B)^T (N, K) * op(A)^T (K, M) in column-major
// writes exactly the row-major C. For nn that is cublasSgemm(N, N, n=N, m=M, k=K, B,
// ldb=N, A, lda=K, C, ldc=N); a transposed operand (stored (N, K) for B, (K, M) for A)
// is already op()^T in column-major view, so it is passed with CUBLAS_OP_T and its own
// leading dimension (K for B, M for A).
//
// The handle is the caller's (creating one costs milliseconds and memory: never do it per
// call, nor at static-initialization time). These functions bind it to `stream` and set
// CUBLAS_DEFAULT_MATH, which for FP32 means true FP32 (no TF32 tensor cores; the
// environment variable NVIDIA_TF32_OVERRIDE can only force TF32 off, never on).
// beta == 0: cuBLAS does not read C (BLAS semantics).
//
// Workspace: cublasSetStream resets the handle's workspace to cuBLAS's internal pool, which
// allocates on its own (and anew for each CUDA graph capture). Pass a device buffer
// (kCublasWorkspaceBytes is what NVIDIA recommends for Hopper) to make cuBLAS use only
// it; nullptr keeps the internal pool.
#include <cstddef>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "gemm/gemm_types.hpp"

namespace kernels::gemm {

// FP32, layout nn. Returns the first failing cuBLAS status, or CUBLAS_STATUS_INVALID_VALUE
// for a dimension < 1 or a null pointer. Asynchronous on `stream`.
cublasStatus_t gemm_cublas(cublasHandle_t handle, int M, int N, int K, float alpha,
                           const float* A, const float* B, float beta, float* C,
                           cudaStream_t stream, void* workspace = nullptr,
                           std::size_t workspace_bytes = 0);

// Every dtype and layout: f32 -> cublasSgemm (FP32 math); tf32 -> cublasGemmEx with
// CUBLAS_COMPUTE_32F_FAST_TF32 on float storage; bf16 / f16 -> cublasGemmEx with
// CUDA_R_16BF / CUDA_R_16F for A, B and C and CUBLAS_COMPUTE_32F (FP32 accumulation,
// float alpha and beta). A, B, C point to elements of the dtype (float for f32 / tf32).
// fp8_e4m3: CUBLAS_STATUS_NOT_SUPPORTED (cuBLASLt only: gemm_cublaslt_fp8.hpp).
cublasStatus_t gemm_cublas_ex(cublasHandle_t handle, TcDType dtype, Layout layout, int M, int N,
                              int K, float alpha, const void* A, const void* B, float beta,
                              void* C, cudaStream_t stream, void* workspace = nullptr,
                              std::size_t workspace_bytes = 0);

inline constexpr std::size_t kCublasWorkspaceBytes = std::size_t{32} << 20;

}  // namespace kernels::gemm
