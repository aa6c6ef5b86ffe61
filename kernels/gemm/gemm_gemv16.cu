// GEMV in 16 bits (gemm_gemv16.hpp): out[r] = alpha * sum_k mat[r K + k] vec[k] + beta out[r]
// for r < rows, mat (rows, K) row-major (K contiguous), vec (K), out (rows); bf16 or f16
// elements, f32 products and sums.
//
// Block: 256 threads = 8 warps, one row each (8 rows a block, ceil(rows / 8) blocks). Lane l
// reads the 16-byte chunks (8 elements) l, l + 32, ... of its row: 512 contiguous bytes per
// warp step, four steps in flight per loop trip (the row is read once; 16 KB of loads in
// flight per 8-warp block), and the same chunks of vec (K = 4096: 8 KB, from L1/L2). Then
// arch::warp_sum, and lane 0 writes out[r]. kVec: K % 8 == 0 and mat, vec 16-byte aligned;
// else one element per lane per step.
// The bytes: M = 1, N = 14336, K = 4096 reads B's 117 MB once (4.8 TB/s peak on an H200:
// ~24 us).
#include "gemm/gemm_gemv16.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "arch/numeric.cuh"
#include "arch/warp_reduce.cuh"
#include "gemm/common.cuh"

namespace kernels::gemm {
namespace {

constexpr int kRowsPerBlock = 8;

// s + the dot product of two 16-byte chunks (8 elements each), in f32.
template <typename T>
__device__ __forceinline__ float dot8(uint4 x, uint4 y, float s) {
  const std::uint32_t xw[4] = {x.x, x.y, x.z, x.w}, yw[4] = {y.x, y.y, y.z, y.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 a = arch::unpack2<T>(xw[i]);
    const float2 b = arch::unpack2<T>(yw[i]);
    s = fmaf(a.x, b.x, s);
    s = fmaf(a.y, b.y, s);
  }
  return s;
}

template <typename T, bool kVec>
__global__ void __launch_bounds__(256) gemv16_rows_kernel(int rows, int K, float alpha, const T* __restrict__ mat,
                                                          const T* __restrict__ vec, float beta, T* __restrict__ out) {
  const int row = static_cast<int>(blockIdx.x) * kRowsPerBlock + static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  if (row >= rows) return;  // whole warps leave together: warp_sum below stays full-warp
  const T* r = mat + static_cast<std::size_t>(row) * static_cast<std::size_t>(K);
  float s = 0.f;
  if constexpr (kVec) {
    const int chunks = K / 8;
    const uint4* rc = reinterpret_cast<const uint4*>(r);
    const uint4* vc = reinterpret_cast<const uint4*>(vec);
    int q = lane;
    for (; q + 96 < chunks; q += 128) {
      uint4 x[4], y[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        x[i] = __ldcs(rc + q + 32 * i);  // read once: streaming (evict-first)
        y[i] = __ldg(vc + q + 32 * i);
      }
#pragma unroll
      for (int i = 0; i < 4; ++i) s = dot8<T>(x[i], y[i], s);
    }
    for (; q < chunks; q += 32) s = dot8<T>(__ldcs(rc + q), __ldg(vc + q), s);
  } else {
    for (int k = lane; k < K; k += 32) s = fmaf(arch::to_float(r[k]), arch::to_float(vec[k]), s);
  }
  s = arch::warp_sum(s);
  if (lane == 0) {
    float v = alpha * s;
    if (beta != 0.f) v += beta * arch::to_float(out[row]);
    out[row] = arch::from_float<T>(v);
  }
}

template <typename T>
cudaError_t launch_rows(int rows, int K, float alpha, const void* mat, const void* vec, float beta, void* out,
                        cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
  const T* m = static_cast<const T*>(mat);
  const T* v = static_cast<const T*>(vec);
  if (K % 8 == 0 && aligned16(mat) && aligned16(vec))
    gemv16_rows_kernel<T, true><<<blocks, 256, 0, stream>>>(rows, K, alpha, m, v, beta, static_cast<T*>(out));
  else
    gemv16_rows_kernel<T, false><<<blocks, 256, 0, stream>>>(rows, K, alpha, m, v, beta, static_cast<T*>(out));
  return cudaGetLastError();
}

// The multi-vector form: out(r, v) = alpha * sum_k mat(r, k) vecs(v, k) + beta * out(r, v) for
// r < rows, v < nvec <= kVecs, stored at out[r * stride_r + v * stride_v]; mat (rows, K) and
// vecs (nvec, K) K contiguous, K % 8 == 0, both 16-byte aligned.
// Block: 128 threads = 4 warps; warp w takes mat rows 4 w' .. 4 w' + 3 (w' its global index).
// Lane l reads the 16-byte chunks l, l + 32, ... of those 4 rows (four 512-byte contiguous
// pieces a warp instruction: the whole row read once, two chunks of each row in flight a lane)
// and the same chunks of every vector (L1/L2: all warps read them), unpacks the 4 rows' chunks
// to f32 once and multiplies them with each vector's (4 x kVecs accumulators a lane); then
// arch::warp_sum of each, lane 0 writes.
constexpr int kMultiRowsPerWarp = 4;
constexpr int kMultiWarps = 4;

template <typename T, int kVecs>
__global__ void __launch_bounds__(32 * kMultiWarps) gemv16_multi_kernel(int rows, int nvec, int K, float alpha,
                                                                        const T* __restrict__ mat,
                                                                        const T* __restrict__ vecs, float beta,
                                                                        T* __restrict__ out, std::size_t stride_r,
                                                                        std::size_t stride_v) {
  const int warp = static_cast<int>(blockIdx.x) * kMultiWarps + static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int r0 = warp * kMultiRowsPerWarp;
  if (r0 >= rows) return;  // whole warps leave together: warp_sum below stays full-warp
  const int chunks = K / 8;
  const uint4* m[kMultiRowsPerWarp];
#pragma unroll
  for (int i = 0; i < kMultiRowsPerWarp; ++i)  // rows past the end re-read row r0 (not written)
    m[i] = reinterpret_cast<const uint4*>(mat + static_cast<std::size_t>(r0 + i < rows ? r0 + i : r0) * K);
  const uint4* v[kVecs];
#pragma unroll
  for (int j = 0; j < kVecs; ++j)  // vectors past nvec re-read the last one (not written)
    v[j] = reinterpret_cast<const uint4*>(vecs + static_cast<std::size_t>(j < nvec ? j : nvec - 1) * K);

  float acc[kMultiRowsPerWarp][kVecs] = {};
  const auto step = [&](const uint4 (&w)[kMultiRowsPerWarp], int q) {
    float wf[kMultiRowsPerWarp][8];
#pragma unroll
    for (int i = 0; i < kMultiRowsPerWarp; ++i) {
      const std::uint32_t ww[4] = {w[i].x, w[i].y, w[i].z, w[i].w};
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float2 f = arch::unpack2<T>(ww[e]);
        wf[i][2 * e] = f.x;
        wf[i][2 * e + 1] = f.y;
      }
    }
#pragma unroll
    for (int j = 0; j < kVecs; ++j) {
      const uint4 x = __ldg(v[j] + q);
      const std::uint32_t xw[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float2 f = arch::unpack2<T>(xw[e]);
#pragma unroll
        for (int i = 0; i < kMultiRowsPerWarp; ++i) {
          acc[i][j] = fmaf(wf[i][2 * e], f.x, acc[i][j]);
          acc[i][j] = fmaf(wf[i][2 * e + 1], f.y, acc[i][j]);
        }
      }
    }
  };
  int q = lane;
  for (; q + 32 < chunks; q += 64) {  // two chunks of each row in flight
    uint4 a[kMultiRowsPerWarp], b[kMultiRowsPerWarp];
#pragma unroll
    for (int i = 0; i < kMultiRowsPerWarp; ++i) {
      a[i] = __ldcs(m[i] + q);
      b[i] = __ldcs(m[i] + q + 32);
    }
    step(a, q);
    step(b, q + 32);
  }
  if (q < chunks) {
    uint4 a[kMultiRowsPerWarp];
#pragma unroll
    for (int i = 0; i < kMultiRowsPerWarp; ++i) a[i] = __ldcs(m[i] + q);
    step(a, q);
  }
#pragma unroll
  for (int i = 0; i < kMultiRowsPerWarp; ++i) {
#pragma unroll
    for (int j = 0; j < kVecs; ++j) {
      const float s = arch::warp_sum(acc[i][j]);
      if (lane == 0 && r0 + i < rows && j < nvec) {
        T* o = out + static_cast<std::size_t>(r0 + i) * stride_r + static_cast<std::size_t>(j) * stride_v;
        float y = alpha * s;
        if (beta != 0.f) y = fmaf(beta, arch::to_float(*o), y);
        *o = arch::from_float<T>(y);
      }
    }
  }
}

template <typename T, int kVecs>
cudaError_t launch_multi(int rows, int nvec, int K, float alpha, const void* mat, const void* vecs, float beta,
                         void* out, std::size_t stride_r, std::size_t stride_v, cudaStream_t stream) {
  const int warps = (rows + kMultiRowsPerWarp - 1) / kMultiRowsPerWarp;
  const auto blocks = static_cast<unsigned>((warps + kMultiWarps - 1) / kMultiWarps);
  gemv16_multi_kernel<T, kVecs><<<blocks, 32 * kMultiWarps, 0, stream>>>(
      rows, nvec, K, alpha, static_cast<const T*>(mat), static_cast<const T*>(vecs), beta, static_cast<T*>(out),
      stride_r, stride_v);
  return cudaGetLastError();
}

template <typename T>
cudaError_t launch_multi_typed(int rows, int nvec, int K, float alpha, const void* mat, const void* vecs,
                               float beta, void* out, std::size_t stride_r, std::size_t stride_v,
                               cudaStream_t stream) {
  if (nvec <= 2) return launch_multi<T, 2>(rows, nvec, K, alpha, mat, vecs, beta, out, stride_r, stride_v, stream);
  if (nvec <= 4) return launch_multi<T, 4>(rows, nvec, K, alpha, mat, vecs, beta, out, stride_r, stride_v, stream);
  return launch_multi<T, 8>(rows, nvec, K, alpha, mat, vecs, beta, out, stride_r, stride_v, stream);
}

}  // namespace

const char* gemm_gemv16_unsupported(Layout layout, int M, int N) {
  if (M != 1 && N != 1) return "gemv: needs M == 1 or N == 1";
  if (M == 1 && (N == 1 || b_transposed(layout))) return nullptr;
  if (N == 1 && !a_transposed(layout)) return nullptr;
  return M == 1 ? "gemv (16-bit): M == 1 needs B stored (N, K), K contiguous (layouts nt, tt)"
                : "gemv (16-bit): N == 1 needs A stored (M, K), K contiguous (layouts nn, nt)";
}

const char* gemm_gemv16_multi_unsupported(Layout layout, int M, int N, int K) {
  if (layout != Layout::nt) return "gemv (16-bit, several vectors): layout nt only (both operands K contiguous)";
  if (std::min(M, N) > kGemv16MaxVectors) return "gemv (16-bit, several vectors): min(M, N) must be <= 8";
  if (K % 8 != 0) return "gemv (16-bit, several vectors): K % 8 == 0 needed (16-byte rows)";
  return nullptr;
}

cudaError_t gemm_gemv16_multi(TcDType dtype, Layout layout, int M, int N, int K, float alpha, const void* A,
                              const void* B, float beta, void* C, cudaStream_t stream) {
  if ((dtype != TcDType::bf16 && dtype != TcDType::f16) || M < 1 || N < 1 || K < 1 || A == nullptr ||
      B == nullptr || C == nullptr || !aligned16(A) || !aligned16(B) ||
      gemm_gemv16_multi_unsupported(layout, M, N, K) != nullptr)
    return cudaErrorInvalidValue;
  // M <= N: B's N rows against A's M vectors, out(n, m) = C[m N + n]; else A's rows against B's.
  const bool over_b = M <= N;
  const int rows = over_b ? N : M, nvec = over_b ? M : N;
  const void* mat = over_b ? B : A;
  const void* vecs = over_b ? A : B;
  const std::size_t stride_r = over_b ? 1 : static_cast<std::size_t>(N);
  const std::size_t stride_v = over_b ? static_cast<std::size_t>(N) : 1;
  return dtype == TcDType::bf16
             ? launch_multi_typed<__nv_bfloat16>(rows, nvec, K, alpha, mat, vecs, beta, C, stride_r, stride_v, stream)
             : launch_multi_typed<__half>(rows, nvec, K, alpha, mat, vecs, beta, C, stride_r, stride_v, stream);
}

cudaError_t gemm_gemv16(TcDType dtype, Layout layout, int M, int N, int K, float alpha, const void* A, const void* B,
                        float beta, void* C, cudaStream_t stream) {
  if ((dtype != TcDType::bf16 && dtype != TcDType::f16) || M < 1 || N < 1 || K < 1 || A == nullptr ||
      B == nullptr || C == nullptr || gemm_gemv16_unsupported(layout, M, N) != nullptr)
    return cudaErrorInvalidValue;
  // M == 1: B's N rows against a; else A's M rows against b (see the header).
  const bool over_b = M == 1;
  const int rows = over_b ? N : M;
  const void* mat = over_b ? B : A;
  const void* vec = over_b ? A : B;
  return dtype == TcDType::bf16 ? launch_rows<__nv_bfloat16>(rows, K, alpha, mat, vec, beta, C, stream)
                                : launch_rows<__half>(rows, K, alpha, mat, vec, beta, C, stream);
}

}  // namespace kernels::gemm
