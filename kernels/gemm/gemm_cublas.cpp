#include "gemm/gemm_cublas.hpp"

namespace kernels::gemm {

cublasStatus_t gemm_cublas(cublasHandle_t handle, int M, int N, int K, float alpha,
                           const float* A, const float* B, float beta, float* C,
                           cudaStream_t stream, void* workspace,
                           std::size_t workspace_bytes) {
  if (handle == nullptr || M < 1 || N < 1 || K < 1 || A == nullptr || B == nullptr ||
      C == nullptr)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (cublasStatus_t s = cublasSetStream(handle, stream); s != CUBLAS_STATUS_SUCCESS) return s;
  if (workspace != nullptr) {
    // After cublasSetStream, which resets the workspace.
    if (cublasStatus_t s = cublasSetWorkspace(handle, workspace, workspace_bytes);
        s != CUBLAS_STATUS_SUCCESS)
      return s;
  }
  if (cublasStatus_t s = cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH); s != CUBLAS_STATUS_SUCCESS)
    return s;
  // Row-major C = A B as column-major C^T = B^T A^T (see the header).
  return cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, N, A, K, &beta, C, N);
}

}  // namespace kernels::gemm
