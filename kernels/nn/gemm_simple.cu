// C = alpha op(A) op(B) + beta C in T (float or double), row-major, for gradient checks and
// small shapes (the float training path uses kernels/gemm or cuBLAS).
//
// A (64, 64) tile of C per 256-thread block, K in steps of 16. Thread (ty, tx) = (tid / 16,
// tid % 16) owns C rows m0 + ty + 16 i and columns n0 + tx + 16 j, i, j < 4 (interleaved,
// so a warp's shared-memory reads are broadcasts or consecutive words).
// Both operands are staged k-major in shared memory, As[k][m] = op(A)(m0 + m, k0 + k),
// Bs[k][n] = op(B)(k0 + k, n0 + n); the global loads walk each operand's contiguous
// dimension (coalesced for either transposition), rows padded to 65 to spread the banks.
// Out-of-range elements are staged as 0 (exact zeros in the sums).
#include <cstddef>

#include "nn/nn.hpp"
#include "nn/nn_common.cuh"

namespace kernels::nn {
namespace {

constexpr int kBM = 64;
constexpr int kBN = 64;
constexpr int kBK = 16;
constexpr int kGemmThreads = 256;

template <class T, bool kTransA, bool kTransB>
__global__ void __launch_bounds__(kGemmThreads)
    gemm_kernel(int M, int N, int K, T alpha, const T* __restrict__ A, const T* __restrict__ B,
                T beta, T* __restrict__ C) {
  __shared__ T As[kBK][kBM + 1];
  __shared__ T Bs[kBK][kBN + 1];
  const int tid = static_cast<int>(threadIdx.x);
  const int tx = tid % 16, ty = tid / 16;
  const int m0 = static_cast<int>(blockIdx.y) * kBM;
  const int n0 = static_cast<int>(blockIdx.x) * kBN;
  T acc[4][4] = {};

  for (int k0 = 0; k0 < K; k0 += kBK) {
#pragma unroll
    for (int it = 0; it < kBM * kBK / kGemmThreads; ++it) {
      const int e = tid + it * kGemmThreads;
      // A: stored (M, K) -> k contiguous; transA: stored (K, M) -> m contiguous.
      const int am = kTransA ? e % kBM : e / kBK;
      const int ak = kTransA ? e / kBM : e % kBK;
      const int gm = m0 + am, gk = k0 + ak;
      T av = T(0);
      if (gm < M && gk < K)
        av = kTransA ? A[static_cast<std::size_t>(gk) * M + gm] : A[static_cast<std::size_t>(gm) * K + gk];
      As[ak][am] = av;
      // B: stored (K, N) -> n contiguous; transB: stored (N, K) -> k contiguous.
      const int bn = kTransB ? e / kBK : e % kBN;
      const int bk = kTransB ? e % kBK : e / kBN;
      const int gn = n0 + bn, gkb = k0 + bk;
      T bv = T(0);
      if (gn < N && gkb < K)
        bv = kTransB ? B[static_cast<std::size_t>(gn) * K + gkb] : B[static_cast<std::size_t>(gkb) * N + gn];
      Bs[bk][bn] = bv;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) {
      T a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = As[kk][ty + 16 * i];
#pragma unroll
      for (int j = 0; j < 4; ++j) b[j] = Bs[kk][tx + 16 * j];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int m = m0 + ty + 16 * i;
    if (m >= M) continue;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int n = n0 + tx + 16 * j;
      if (n >= N) continue;
      T* c = C + static_cast<std::size_t>(m) * N + n;
      *c = beta == T(0) ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *c;
    }
  }
}

}  // namespace

template <class T>
cudaError_t gemm_simple(bool transA, bool transB, int M, int N, int K, T alpha, const T* A,
                        const T* B, T beta, T* C, cudaStream_t s) {
  if (M < 0 || N < 0 || K < 0) return cudaErrorInvalidValue;
  if (M == 0 || N == 0) return cudaSuccess;
  if (!C || (K > 0 && (!A || !B))) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>((N + kBN - 1) / kBN), static_cast<unsigned>((M + kBM - 1) / kBM));
  if (transA) {
    if (transB)
      gemm_kernel<T, true, true><<<grid, kGemmThreads, 0, s>>>(M, N, K, alpha, A, B, beta, C);
    else
      gemm_kernel<T, true, false><<<grid, kGemmThreads, 0, s>>>(M, N, K, alpha, A, B, beta, C);
  } else {
    if (transB)
      gemm_kernel<T, false, true><<<grid, kGemmThreads, 0, s>>>(M, N, K, alpha, A, B, beta, C);
    else
      gemm_kernel<T, false, false><<<grid, kGemmThreads, 0, s>>>(M, N, K, alpha, A, B, beta, C);
  }
  return cudaGetLastError();
}

template cudaError_t gemm_simple<float>(bool, bool, int, int, int, float, const float*,
                                        const float*, float, float*, cudaStream_t);
template cudaError_t gemm_simple<double>(bool, bool, int, int, int, double, const double*,
                                         const double*, double, double*, cudaStream_t);

}  // namespace kernels::nn
