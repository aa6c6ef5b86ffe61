#pragma once
// cuBLASLt's FP8 matmul with this folder's row-major convention (gemm_types.hpp), the
// reference variant of dtype fp8_e4m3:
//
//   C (M, N) bf16 = scale_a * scale_b * A (M, K) B (N, K)^T     (row-major layout nt)
//
// A, B in FP8 E4M3 (CUDA_R_8F_E4M3), CUBLAS_COMPUTE_32F with f32 scale type, bf16 C and D,
// alpha = 1, beta = 0, per-tensor scales as device pointers (CUBLASLT_MATMUL_DESC_A/B_SCALE_
// POINTER), CUBLASLT_MATMUL_DESC_FAST_ACCUM off (cuBLASLt then promotes the tensor cores'
// partial sums to FP32 periodically).
//
// cuBLASLt's FP8 kernels take the "TN" format only: its A transposed, its B not, both
// column-major. Row-major C (M, N) is column-major C^T (N, M) = B A^T, where row-major
// B (N, K) is column-major (K, N) with ld K (so cuBLASLt's A = our B with op T) and
// row-major A (M, K) is column-major (K, M) with ld K (cuBLASLt's B = our A, op N):
// m = N, n = M, k = K, lda = ldb = K, ldc = ldd = N. Our row-major `nt` is exactly TN.
//
// Alignment (cuBLASLt's FP8 requirement: pointers and dimensions 16-byte aligned, as its
// "Tensor Core Usage" rules): K % 16 == 0 (rows of A and B), N % 8 == 0 (rows of C in
// bf16), every pointer 16-byte aligned; gemm_cublaslt_fp8_unsupported says which fails.
//
// Plans (descriptors and the heuristic's algorithm) are cached per (handle, shape, scale
// pointers, workspace): the heuristic query costs tens of microseconds of host time, which a
// timed launch must not include. Asynchronous on `stream`.
#include <cstddef>

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

namespace kernels::gemm {

// Lowest compute capability (major * 10 + minor) with FP8 tensor cores (Ada 8.9, Hopper 9.0).
inline constexpr int kCublasLtFp8MinComputeCapability = 89;

// nullptr when gemm_cublaslt_fp8_e4m3 can run layout nt at (M, N, K) on a device of compute
// capability `cc` (major * 10 + minor), else the reason (a static string).
const char* gemm_cublaslt_fp8_unsupported(int cc, int M, int N, int K);

// scale_a, scale_b: device pointers to one float each, each 16-byte aligned (cuBLASLt
// answers CUBLAS_STATUS_NOT_SUPPORTED otherwise; here: INVALID_VALUE before asking it).
// A, B: e4m3 bytes (row-major (M, K),
// (N, K)). Returns the first failing cuBLASLt status; CUBLAS_STATUS_INVALID_VALUE for a
// dimension < 1 or a null pointer, CUBLAS_STATUS_NOT_SUPPORTED when the heuristic finds no
// algorithm.
cublasStatus_t gemm_cublaslt_fp8_e4m3(cublasLtHandle_t handle, int M, int N, int K, const float* scale_a,
                                      const float* scale_b, const void* A, const void* B, __nv_bfloat16* C,
                                      cudaStream_t stream, void* workspace, std::size_t workspace_bytes);

}  // namespace kernels::gemm
