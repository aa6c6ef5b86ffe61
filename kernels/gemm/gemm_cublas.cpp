#include "gemm/gemm_cublas.hpp"

namespace kernels::gemm {
namespace {

cublasStatus_t bind(cublasHandle_t handle, cudaStream_t stream, void* workspace, std::size_t workspace_bytes) {
  if (cublasStatus_t s = cublasSetStream(handle, stream); s != CUBLAS_STATUS_SUCCESS) return s;
  if (workspace != nullptr) {
    // After cublasSetStream, which resets the workspace.
    if (cublasStatus_t s = cublasSetWorkspace(handle, workspace, workspace_bytes); s != CUBLAS_STATUS_SUCCESS)
      return s;
  }
  return cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH);
}

}  // namespace

cublasStatus_t gemm_cublas(cublasHandle_t handle, int M, int N, int K, float alpha,
                           const float* A, const float* B, float beta, float* C,
                           cudaStream_t stream, void* workspace,
                           std::size_t workspace_bytes) {
  return gemm_cublas_ex(handle, TcDType::f32, Layout::nn, M, N, K, alpha, A, B, beta, C, stream, workspace,
                        workspace_bytes);
}

cublasStatus_t gemm_cublas_ex(cublasHandle_t handle, TcDType dtype, Layout layout, int M, int N, int K, float alpha,
                              const void* A, const void* B, float beta, void* C, cudaStream_t stream, void* workspace,
                              std::size_t workspace_bytes) {
  if (handle == nullptr || M < 1 || N < 1 || K < 1 || A == nullptr || B == nullptr || C == nullptr)
    return CUBLAS_STATUS_INVALID_VALUE;
  // cublasGemmEx has no FP8: gemm_cublaslt_fp8_e4m3 (cuBLASLt) takes it.
  if (dtype == TcDType::fp8_e4m3) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (cublasStatus_t s = bind(handle, stream, workspace, workspace_bytes); s != CUBLAS_STATUS_SUCCESS) return s;
  // Row-major C = op(A) op(B) as column-major C^T = op(B)^T op(A)^T (see the header).
  const cublasOperation_t opb = b_transposed(layout) ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opa = a_transposed(layout) ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int ldb = b_transposed(layout) ? K : N;
  const int lda = a_transposed(layout) ? M : K;
  if (dtype == TcDType::f32)
    return cublasSgemm(handle, opb, opa, N, M, K, &alpha, static_cast<const float*>(B), ldb,
                       static_cast<const float*>(A), lda, &beta, static_cast<float*>(C), N);
  cudaDataType_t type = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  switch (dtype) {
    case TcDType::tf32: compute = CUBLAS_COMPUTE_32F_FAST_TF32; break;
    case TcDType::bf16: type = CUDA_R_16BF; break;
    case TcDType::f16: type = CUDA_R_16F; break;
    case TcDType::f32:
    case TcDType::fp8_e4m3: break;
  }
  return cublasGemmEx(handle, opb, opa, N, M, K, &alpha, B, type, ldb, A, type, lda, &beta, C, type, N, compute,
                      CUBLAS_GEMM_DEFAULT);
}

}  // namespace kernels::gemm
