#pragma once
// cuBLAS SGEMM with this folder's row-major convention (see gemm.hpp):
//   C (M, N) = alpha * A (M, K) * B (K, N) + beta * C, all row-major.
//
// cuBLAS is column-major. A row-major (R, S) matrix is the column-major (S, R) matrix of
// its transpose, so computing C^T (N, M) = B^T (N, K) * A^T (K, M) in column-major with
// no transposes writes exactly the row-major C: cublasSgemm(N, N, n=N, m=M, k=K,
// B, ldb=N, A, lda=K, C, ldc=N).
//
// The handle is the caller's (creating one costs milliseconds and memory: never do it per
// call, nor at static-initialization time). This function binds it to `stream` and sets
// CUBLAS_DEFAULT_MATH, which for SGEMM means true FP32 (no TF32 tensor cores; the
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

namespace kernels::gemm {

// Returns the first failing cuBLAS status, or CUBLAS_STATUS_INVALID_VALUE for a
// dimension < 1 or a null pointer. Asynchronous on `stream`.
cublasStatus_t gemm_cublas(cublasHandle_t handle, int M, int N, int K, float alpha,
                           const float* A, const float* B, float beta, float* C,
                           cudaStream_t stream, void* workspace = nullptr,
                           std::size_t workspace_bytes = 0);

inline constexpr std::size_t kCublasWorkspaceBytes = std::size_t{32} << 20;

}  // namespace kernels::gemm
