#include "gemm/gemm_cublaslt_fp8.hpp"

#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>

namespace kernels::gemm {
namespace {

// Descriptors and the chosen algorithm of one (handle, shape, scales, workspace). Cached for
// the process's life and never destroyed: a static destructor would run after the CUDA
// runtime may have shut down.
struct Plan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;  // cuBLASLt's A (our B), B (our A), C = D
  cublasLtMatmulAlgo_t algo{};
};

using Key = std::tuple<cublasLtHandle_t, int, int, int, const float*, const float*, std::size_t>;

#define LT_TRY(expr)                                          \
  do {                                                        \
    if (cublasStatus_t lt_status_ = (expr); lt_status_ != CUBLAS_STATUS_SUCCESS) return lt_status_; \
  } while (0)

// The column-major problem (see the header): m = N, n = M, k = K, TN.
cublasStatus_t make_plan(cublasLtHandle_t handle, int M, int N, int K, const float* scale_a, const float* scale_b,
                         std::size_t workspace_bytes, Plan* plan) {
  LT_TRY(cublasLtMatmulDescCreate(&plan->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
  LT_TRY(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa)));
  LT_TRY(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof(transb)));
  // cuBLASLt's A is our B (scale_b), its B our A (scale_a).
  LT_TRY(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_b, sizeof(scale_b)));
  LT_TRY(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_a, sizeof(scale_a)));
  const std::int8_t fast_accum = 0;  // keep the periodic promotion to FP32
  LT_TRY(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast_accum, sizeof(fast_accum)));
  LT_TRY(cublasLtMatrixLayoutCreate(&plan->a, CUDA_R_8F_E4M3, K, N, K));  // our B (N, K) row-major
  LT_TRY(cublasLtMatrixLayoutCreate(&plan->b, CUDA_R_8F_E4M3, K, M, K));  // our A (M, K) row-major
  LT_TRY(cublasLtMatrixLayoutCreate(&plan->c, CUDA_R_16BF, N, M, N));     // our C (M, N) row-major
  cublasLtMatmulPreference_t pref = nullptr;
  LT_TRY(cublasLtMatmulPreferenceCreate(&pref));
  cublasStatus_t s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                          &workspace_bytes, sizeof(workspace_bytes));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  if (s == CUBLAS_STATUS_SUCCESS)
    s = cublasLtMatmulAlgoGetHeuristic(handle, plan->op, plan->a, plan->b, plan->c, plan->c, pref, 1, &result, &found);
  if (cublasStatus_t d = cublasLtMatmulPreferenceDestroy(pref); s == CUBLAS_STATUS_SUCCESS) s = d;
  if (s != CUBLAS_STATUS_SUCCESS) return s;
  if (found < 1) return CUBLAS_STATUS_NOT_SUPPORTED;
  plan->algo = result.algo;
  return CUBLAS_STATUS_SUCCESS;
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace

const char* gemm_cublaslt_fp8_unsupported(int cc, int M, int N, int K) {
  if (M < 1 || N < 1 || K < 1) return "M, N, K must be >= 1";
  if (cc < kCublasLtFp8MinComputeCapability)
    return "no FP8 tensor cores: cuBLASLt's FP8 matmul needs compute capability 8.9 or higher";
  if (K % 16 != 0) return "alignment: cuBLASLt FP8 needs 16-byte aligned rows of A and B (K % 16 != 0)";
  if (N % 8 != 0) return "alignment: cuBLASLt FP8 needs 16-byte aligned rows of the bf16 C (N % 8 != 0)";
  return nullptr;
}

cublasStatus_t gemm_cublaslt_fp8_e4m3(cublasLtHandle_t handle, int M, int N, int K, const float* scale_a,
                                      const float* scale_b, const void* A, const void* B, __nv_bfloat16* C,
                                      cudaStream_t stream, void* workspace, std::size_t workspace_bytes) {
  if (handle == nullptr || M < 1 || N < 1 || K < 1 || A == nullptr || B == nullptr || C == nullptr ||
      scale_a == nullptr || scale_b == nullptr || !aligned16(A) || !aligned16(B) || !aligned16(C) ||
      !aligned16(scale_a) || !aligned16(scale_b))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (workspace == nullptr) workspace_bytes = 0;
  static std::mutex mutex;
  static std::map<Key, Plan> plans;
  Plan plan;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    const Key key{handle, M, N, K, scale_a, scale_b, workspace_bytes};
    auto it = plans.find(key);
    if (it == plans.end()) {
      Plan fresh;
      // A failed plan is not cached (its descriptors leak: an error path, once per shape).
      if (cublasStatus_t s = make_plan(handle, M, N, K, scale_a, scale_b, workspace_bytes, &fresh);
          s != CUBLAS_STATUS_SUCCESS)
        return s;
      it = plans.emplace(key, fresh).first;
    }
    plan = it->second;
  }
  const float alpha = 1.0f, beta = 0.0f;
  return cublasLtMatmul(handle, plan.op, &alpha, B, plan.a, A, plan.b, &beta, C, plan.c, C, plan.c, &plan.algo,
                        workspace, workspace_bytes, stream);
}

#undef LT_TRY

}  // namespace kernels::gemm
