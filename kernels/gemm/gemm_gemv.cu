// GEMV and rank-1 kernels for the degenerate GEMM shapes, all memory bound: the matrix
// operand is read once with 16-byte loads where aligned, the vector operand comes from L1/L2.
//
// cols (M == 1): C (1, N) = alpha * a (1, K) * B (K, N) + beta * C.
//   Block: 256 threads = 8 warps; the block owns 128 columns (lane l: columns
//   c0 + 4l .. c0 + 4l + 3), warp w reads rows k = kb + w, kb + w + 8, ... of its slice, so a
//   warp reads one contiguous 512-byte segment of B per row (coalesced across N). Grid
//   (ceil(N / 128), S): grid y cuts K into S slices so that 128-column blocks still fill the
//   GPU when N is small (N = 4096: 32 column blocks, S ~ 17). The 8 warps' sums meet in
//   shared memory (8, 128) and warp-row 0 adds them in warp order; with S > 1 each slice
//   writes its panel (S, N) of the workspace and reduce_panels (gemm_splitk.cu) finishes.
// rows (N == 1): C (M, 1) = alpha * A (M, K) * b (K, 1) + beta * C.
//   One warp per row of A, 8 rows per 256-thread block: lane l reads float4 l, l + 32, ...
//   of the row (512 contiguous bytes per warp step), then a shuffle tree sums the 32 lanes.
// outer (K == 1): C (M, N) = alpha * a b^T + beta * C, a = A (M, 1), b = B (1, N).
//   Block (64, 4): thread (x, y) writes C(row, 4 col4 .. +3) with store4, row =
//   4 blockIdx.y + y, col4 = 64 blockIdx.x + x.
#include <cstddef>
#include <cstdint>

#include "arch/warp_reduce.cuh"
#include "gemm/common.cuh"
#include "gemm/gemm_shapes.hpp"

namespace kernels::gemm {
namespace {

constexpr int kColsWarps = 8;
constexpr int kColsPerBlock = 128;  // 32 lanes x 4 columns
constexpr int kMinRowsPerSlice = 64;

// kVec: N % 4 == 0 and B, C (or the panel) 16-byte aligned.
template <bool kVec>
__global__ void __launch_bounds__(256) gemv_cols_kernel(int N, int K, int k_slice, float alpha,
                                                        const float* __restrict__ a,
                                                        const float* __restrict__ B, float beta,
                                                        float* __restrict__ out, bool partial) {
  __shared__ float4 sums[kColsWarps][32];
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int c = static_cast<int>(blockIdx.x) * kColsPerBlock + 4 * lane;
  const int kb = static_cast<int>(blockIdx.y) * k_slice;
  const int ke = min(K, kb + k_slice);
  float4 s = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  if (c < N) {
#pragma unroll 4
    for (int k = kb + warp; k < ke; k += kColsWarps) {
      const float x = a[k];
      const float* row = B + static_cast<std::size_t>(k) * N + c;
      float4 b;
      if constexpr (kVec) {
        b = *reinterpret_cast<const float4*>(row);
      } else {
        b = make_float4(row[0], c + 1 < N ? row[1] : 0.0f, c + 2 < N ? row[2] : 0.0f,
                        c + 3 < N ? row[3] : 0.0f);
      }
      s.x = fmaf(x, b.x, s.x);
      s.y = fmaf(x, b.y, s.y);
      s.z = fmaf(x, b.z, s.z);
      s.w = fmaf(x, b.w, s.w);
    }
  }
  sums[warp][lane] = s;
  __syncthreads();
  if (warp != 0 || c >= N) return;
  for (int w = 1; w < kColsWarps; ++w) {
    const float4 t = sums[w][lane];
    s.x += t.x;
    s.y += t.y;
    s.z += t.z;
    s.w += t.w;
  }
  if (partial) {  // panel blockIdx.y of (S, N): raw sums
    store4<kVec>(out + static_cast<std::size_t>(blockIdx.y) * N, 1, N, 0, c, s, 1.0f, 0.0f);
  } else {
    store4<kVec>(out, 1, N, 0, c, s, alpha, beta);
  }
}

// kVec: K % 4 == 0 and A, b 16-byte aligned.
template <bool kVec>
__global__ void __launch_bounds__(256) gemv_rows_kernel(int M, int K, float alpha,
                                                        const float* __restrict__ A,
                                                        const float* __restrict__ b, float beta,
                                                        float* __restrict__ C) {
  const int row = static_cast<int>(blockIdx.x) * 8 + static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  if (row >= M) return;  // whole warps leave together: the shuffles below stay full-warp
  const float* r = A + static_cast<std::size_t>(row) * K;
  float s = 0.0f;
  if constexpr (kVec) {
    const int quads = K / 4;
#pragma unroll 4
    for (int q = lane; q < quads; q += 32) {
      const float4 x = reinterpret_cast<const float4*>(r)[q];
      const float4 y = reinterpret_cast<const float4*>(b)[q];
      s = fmaf(x.x, y.x, s);
      s = fmaf(x.y, y.y, s);
      s = fmaf(x.z, y.z, s);
      s = fmaf(x.w, y.w, s);
    }
  } else {
#pragma unroll 4
    for (int k = lane; k < K; k += 32) s = fmaf(r[k], b[k], s);
  }
  s = arch::warp_sum(s);
  if (lane == 0) C[row] = epilogue(s, alpha, beta, C + row);
}

template <bool kVec>
__global__ void outer_kernel(int M, int N, float alpha, const float* __restrict__ a,
                             const float* __restrict__ b, float beta, float* __restrict__ C) {
  const int row = static_cast<int>(blockIdx.y) * 4 + static_cast<int>(threadIdx.y);
  const int c = 4 * (static_cast<int>(blockIdx.x) * 64 + static_cast<int>(threadIdx.x));
  if (row >= M || c >= N) return;
  const float x = a[row];
  float4 bv;
  if constexpr (kVec) {
    bv = *reinterpret_cast<const float4*>(b + c);
  } else {
    bv = make_float4(b[c], c + 1 < N ? b[c + 1] : 0.0f, c + 2 < N ? b[c + 2] : 0.0f,
                     c + 3 < N ? b[c + 3] : 0.0f);
  }
  store4<kVec>(C, M, N, row, c, make_float4(x * bv.x, x * bv.y, x * bv.z, x * bv.w), alpha, beta);
}

int cols_slice(int K, int splits) { return (K + splits - 1) / splits; }
int cols_slices(int K, int splits) {
  const int slice = cols_slice(K, splits);
  return (K + slice - 1) / slice;
}

}  // namespace

// Enough (column block, slice) blocks for ~4 blocks per SM, each slice at least 64 rows.
// Returns the slice count gemm_gemv will use for it (rounding may use fewer than asked).
int gemv_splits(int N, int K, int sm_count) {
  if (N < 1 || K < 1) return 1;
  const long long col_blocks = (N + kColsPerBlock - 1) / kColsPerBlock;
  const long long target = 4LL * (sm_count > 0 ? sm_count : 1);
  long long s = (target + col_blocks - 1) / col_blocks;
  const long long max_s = K / kMinRowsPerSlice > 1 ? K / kMinRowsPerSlice : 1;
  if (s > max_s) s = max_s;
  if (s > 65535) s = 65535;
  // The slice count that reproduces itself (gemm_gemv recomputes slices from it).
  int used = static_cast<int>(s < 1 ? 1 : s);
  for (int next = cols_slices(K, used); next != used; next = cols_slices(K, used)) used = next;
  return used;
}

std::size_t gemv_workspace_bytes(int M, int N, int splits) {
  if (M < 1 || N < 1 || splits <= 1) return 0;
  return static_cast<std::size_t>(splits) * static_cast<std::size_t>(M == 1 ? N : M) * sizeof(float);
}

// The layout's vector shape as one of the two kernels (see gemm_shapes.hpp): cols computes
// C (1, N) = a (1, K) * B (K, N), rows computes C (M, 1) = A (M, K) * b (K, 1); here with
// (M, N, A, B) renamed so that the kernel's B or A is the operand stored with the right
// contiguity.
cudaError_t gemm_gemv(Layout layout, int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                      float* C, int splits, void* workspace, std::size_t workspace_bytes, cudaStream_t stream) {
  if (!valid_args(M, N, K, A, B, C) || (M != 1 && N != 1) || splits < 1) return cudaErrorInvalidValue;
  const float* vec = M == 1 ? A : B;  // K contiguous floats in every layout
  const float* mat = M == 1 ? B : A;
  const int len = M == 1 ? N : M;     // the output's length
  if (gemv_uses_cols(layout, M, N)) {  // mat stored (K, len)
    M = 1;
    N = len;
    A = vec;
    B = mat;
  } else {  // mat stored (len, K)
    M = len;
    N = 1;
    A = mat;
    B = vec;
  }
  if (M == 1) {
    const int slices = cols_slices(K, splits);
    const int k_slice = cols_slice(K, splits);
    if (slices > 65535) return cudaErrorInvalidValue;
    const dim3 grid(static_cast<unsigned>((N + kColsPerBlock - 1) / kColsPerBlock), static_cast<unsigned>(slices));
    float* out = C;
    if (slices > 1) {
      out = static_cast<float*>(workspace);
      if (out == nullptr || !aligned16(out) || workspace_bytes < gemv_workspace_bytes(M, N, slices))
        return cudaErrorInvalidValue;
    }
    const bool vec = N % 4 == 0 && aligned16(B) && aligned16(C);
    if (vec) {
      gemv_cols_kernel<true><<<grid, 256, 0, stream>>>(N, K, k_slice, alpha, A, B, beta, out, slices > 1);
    } else {
      gemv_cols_kernel<false><<<grid, 256, 0, stream>>>(N, K, k_slice, alpha, A, B, beta, out, slices > 1);
    }
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess || slices == 1) return e;
    return reduce_panels(N, slices, alpha, out, beta, C, stream);
  }
  // N == 1, M > 1.
  const auto blocks = static_cast<unsigned>((M + 7) / 8);
  if (K % 4 == 0 && aligned16(A) && aligned16(B)) {
    gemv_rows_kernel<true><<<blocks, 256, 0, stream>>>(M, K, alpha, A, B, beta, C);
  } else {
    gemv_rows_kernel<false><<<blocks, 256, 0, stream>>>(M, K, alpha, A, B, beta, C);
  }
  return cudaGetLastError();
}

cudaError_t gemm_outer(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                       float* C, cudaStream_t stream) {
  if (!valid_args(M, N, K, A, B, C) || K != 1) return cudaErrorInvalidValue;
  const int quads = (N + 3) / 4;
  const dim3 block(64, 4);
  const dim3 grid(static_cast<unsigned>((quads + 63) / 64), static_cast<unsigned>((M + 3) / 4));
  if (grid.y > 65535) return cudaErrorInvalidConfiguration;
  if (N % 4 == 0 && aligned16(B) && aligned16(C)) {
    outer_kernel<true><<<grid, block, 0, stream>>>(M, N, alpha, A, B, beta, C);
  } else {
    outer_kernel<false><<<grid, block, 0, stream>>>(M, N, alpha, A, B, beta, C);
  }
  return cudaGetLastError();
}

}  // namespace kernels::gemm
