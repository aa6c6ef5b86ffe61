// The teaching ladder of FP32 GEMM kernels: naive, split-K atomic, shared-memory tiled, and
// tiled with float4 accesses. Row-major, C = alpha * A * B + beta * C (see gemm.hpp).
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "gemm/common.cuh"
#include "gemm/gemm.hpp"

namespace kernels::gemm {
namespace {

// ---------------------------------------------------------------------------------------
// naive: thread (row, col) computes sum_k A(row, k) * B(k, col) from global memory.
// threadIdx.x runs along N so that a warp reads 32 consecutive floats of a row of B and
// writes 32 consecutive floats of C; all lanes of a warp read the same A(row, k).

constexpr int kNaiveX = 32;
constexpr int kNaiveY = 8;

__global__ void __launch_bounds__(kNaiveX* kNaiveY)
    naive_kernel(int M, int N, int K, float alpha, const float* __restrict__ A,
                 const float* __restrict__ B, float beta, float* __restrict__ C) {
  const int col = static_cast<int>(blockIdx.x) * kNaiveX + static_cast<int>(threadIdx.x);
  const int row = static_cast<int>(blockIdx.y) * kNaiveY + static_cast<int>(threadIdx.y);
  if (row >= M || col >= N) return;
  const float* a = A + static_cast<std::size_t>(row) * K;  // row `row` of A, K floats
  const float* b = B + col;                                // column `col` of B, stride N
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc = fmaf(a[k], b[static_cast<std::size_t>(k) * N], acc);
  float* c = C + static_cast<std::size_t>(row) * N + col;
  *c = epilogue(acc, alpha, beta, c);
}

// ---------------------------------------------------------------------------------------
// tiled: a (T, T) block computes the (T, T) tile of C at (blockIdx.y * T, blockIdx.x * T).
// For each K tile k0: As = A(rows, k0 : k0+T), Bs = B(k0 : k0+T, cols) are staged in
// shared memory, so each global element is read once per block instead of T times.
// Out-of-range elements are stored as 0, which adds exact zeros to the sums.
//
// kAtomic (split-K): block z covers only K range [z * k_slice, min(K, (z+1) * k_slice))
// and atomically adds alpha * partial to C (which the caller pre-scaled by beta).

template <int T, bool kAtomic>
__global__ void __launch_bounds__(T* T)
    tiled_kernel(int M, int N, int K, int k_slice, float alpha, const float* __restrict__ A,
                 const float* __restrict__ B, float beta, float* __restrict__ C) {
  __shared__ float As[T][T];  // As[i][k] = A(row0 + i, k0 + k)
  __shared__ float Bs[T][T];  // Bs[k][j] = B(k0 + k, col0 + j)
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const int row = static_cast<int>(blockIdx.y) * T + ty;
  const int col = static_cast<int>(blockIdx.x) * T + tx;
  const int k_begin = static_cast<int>(blockIdx.z) * k_slice;
  const int k_end = min(K, k_begin + k_slice);

  float acc = 0.0f;
  for (int k0 = k_begin; k0 < k_end; k0 += T) {
    const int ka = k0 + tx;  // the column of A this thread stages
    const int kb = k0 + ty;  // the row of B this thread stages
    As[ty][tx] = (row < M && ka < k_end) ? A[static_cast<std::size_t>(row) * K + ka] : 0.0f;
    Bs[ty][tx] = (kb < k_end && col < N) ? B[static_cast<std::size_t>(kb) * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < T; ++k) acc = fmaf(As[ty][k], Bs[k][tx], acc);
    __syncthreads();
  }
  if (row >= M || col >= N) return;
  float* c = C + static_cast<std::size_t>(row) * N + col;
  if constexpr (kAtomic) {
    atomicAdd(c, alpha * acc);
  } else {
    *c = epilogue(acc, alpha, beta, c);
  }
}

// C = beta * C over n elements; beta == 0 writes zeros without reading (C may be NaN).
__global__ void scale_kernel(std::size_t n, float beta, float* __restrict__ C) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    C[i] = beta == 0.0f ? 0.0f : beta * C[i];
}

// ---------------------------------------------------------------------------------------
// vectorized: (32, 32) tiles of C, K tiles of depth 32, 256 threads. Thread t owns row
// r = t / 8 and columns c = 4 * (t % 8) .. c + 3 of the C tile, and stages the same
// (r, c..c+3) float4 of the A tile and of the B tile: one 16-byte load each per K tile.
//
// Shared memory: As rows are padded to 36 floats (144 bytes, still 16-byte aligned) so
// that the 4 rows a warp reads at once, As[r][k..k+3] for r = r0..r0+3, start in banks
// k, k+4, k+8, k+12: disjoint, a broadcast in one wavefront. Bs[k][c..c+3] over the 8
// column groups of a warp is one contiguous 128-byte row: conflict-free.
//
// kVec: float4 global loads and stores. Requires gemm_vector_aligned (K % 4 == 0,
// N % 4 == 0, 16-byte aligned pointers): then a float4 starting at a column that is a
// multiple of 4 is either entirely inside the matrix or entirely outside, so one bounds
// check per float4 is exact. Without kVec the same tiling loads element by element.

constexpr int kVT = 32;         // tile edge in M, N and K
constexpr int kVThreads = 256;  // (32 rows) x (8 column groups of 4)
constexpr int kVPad = 4;

template <bool kVec>
__global__ void __launch_bounds__(kVThreads)
    vectorized_kernel(int M, int N, int K, float alpha, const float* __restrict__ A,
                      const float* __restrict__ B, float beta, float* __restrict__ C) {
  __shared__ __align__(16) float As[kVT][kVT + kVPad];  // As[i][k] = A(row0 + i, k0 + k)
  __shared__ __align__(16) float Bs[kVT][kVT];          // Bs[k][j] = B(k0 + k, col0 + j)
  const int t = static_cast<int>(threadIdx.x);
  const int r = t / 8;        // row within the tile (of C, of As, of Bs)
  const int c = (t % 8) * 4;  // first of 4 columns within the tile
  const int row0 = static_cast<int>(blockIdx.y) * kVT;
  const int col0 = static_cast<int>(blockIdx.x) * kVT;
  const int a_row = row0 + r;
  const int b_col = col0 + c;

  float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  for (int k0 = 0; k0 < K; k0 += kVT) {
    const int a_col = k0 + c;  // A(a_row, a_col .. a_col+3)
    const int b_row = k0 + r;  // B(b_row, b_col .. b_col+3)
    const float4 a = load4<kVec>(A, M, K, a_row, a_col);
    const float4 b = load4<kVec>(B, K, N, b_row, b_col);
    *reinterpret_cast<float4*>(&As[r][c]) = a;
    *reinterpret_cast<float4*>(&Bs[r][c]) = b;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kVT; k += 4) {
      const float4 av = *reinterpret_cast<const float4*>(&As[r][k]);
      const float a4[4] = {av.x, av.y, av.z, av.w};
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        const float4 bv = *reinterpret_cast<const float4*>(&Bs[k + kk][c]);
        acc.x = fmaf(a4[kk], bv.x, acc.x);
        acc.y = fmaf(a4[kk], bv.y, acc.y);
        acc.z = fmaf(a4[kk], bv.z, acc.z);
        acc.w = fmaf(a4[kk], bv.w, acc.w);
      }
    }
    __syncthreads();
  }
  store4<kVec>(C, M, N, a_row, b_col, acc, alpha, beta);
}

dim3 tiles_grid(int M, int N, int tile_m, int tile_n, int z = 1) {
  return dim3(static_cast<unsigned>((N + tile_n - 1) / tile_n),
              static_cast<unsigned>((M + tile_m - 1) / tile_m), static_cast<unsigned>(z));
}

}  // namespace

cudaError_t gemm_naive(int M, int N, int K, float alpha, const float* A, const float* B,
                       float beta, float* C, cudaStream_t stream) {
  if (!valid_args(M, N, K, A, B, C)) return cudaErrorInvalidValue;
  naive_kernel<<<tiles_grid(M, N, kNaiveY, kNaiveX), dim3(kNaiveX, kNaiveY), 0, stream>>>(
      M, N, K, alpha, A, B, beta, C);
  return cudaGetLastError();
}

template <int Tile>
cudaError_t gemm_tiled(int M, int N, int K, float alpha, const float* A, const float* B,
                       float beta, float* C, cudaStream_t stream) {
  static_assert(Tile >= 1 && Tile * Tile <= 1024, "a block holds at most 1024 threads");
  if (!valid_args(M, N, K, A, B, C)) return cudaErrorInvalidValue;
  tiled_kernel<Tile, false><<<tiles_grid(M, N, Tile, Tile), dim3(Tile, Tile), 0, stream>>>(
      M, N, K, K, alpha, A, B, beta, C);
  return cudaGetLastError();
}

template cudaError_t gemm_tiled<8>(int, int, int, float, const float*, const float*, float,
                                   float*, cudaStream_t);
template cudaError_t gemm_tiled<16>(int, int, int, float, const float*, const float*, float,
                                    float*, cudaStream_t);
template cudaError_t gemm_tiled<32>(int, int, int, float, const float*, const float*, float,
                                    float*, cudaStream_t);

cudaError_t gemm_atomic(int M, int N, int K, float alpha, const float* A, const float* B,
                        float beta, float* C, cudaStream_t stream, int splits) {
  constexpr int kTile = 32;
  constexpr int kMaxSlice = 512;  // longest K slice per block
  if (!valid_args(M, N, K, A, B, C) || splits < 0) return cudaErrorInvalidValue;
  int device = 0;
  int sms = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  if (cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
      e != cudaSuccess)
    return e;

  const std::size_t elements = static_cast<std::size_t>(M) * static_cast<std::size_t>(N);
  const unsigned scale_blocks = static_cast<unsigned>(
      std::min<std::size_t>((elements + 255) / 256, static_cast<std::size_t>(sms) * 8));
  scale_kernel<<<scale_blocks, 256, 0, stream>>>(elements, beta, C);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;

  // Slices of whole K tiles. Default: at most kMaxSlice long, and at least ~2 blocks of
  // 1024 threads per SM in total, so tall-skinny C (few tiles) still fills the GPU.
  const long long tiles = static_cast<long long>((M + kTile - 1) / kTile) * ((N + kTile - 1) / kTile);
  const int k_tiles = (K + kTile - 1) / kTile;
  if (splits == 0) {
    const long long for_length = (K + kMaxSlice - 1) / kMaxSlice;
    const long long for_occupancy = (2LL * sms + tiles - 1) / tiles;
    splits = static_cast<int>(std::max(for_length, for_occupancy));
  }
  splits = std::clamp(splits, 1, std::min(k_tiles, 65535));
  const int k_slice = ((k_tiles + splits - 1) / splits) * kTile;
  splits = (K + k_slice - 1) / k_slice;  // no empty slices
  tiled_kernel<kTile, true>
      <<<tiles_grid(M, N, kTile, kTile, splits), dim3(kTile, kTile), 0, stream>>>(
          M, N, K, k_slice, alpha, A, B, beta, C);
  return cudaGetLastError();
}

cudaError_t gemm_vectorized(int M, int N, int K, float alpha, const float* A,
                            const float* B, float beta, float* C, cudaStream_t stream) {
  if (!valid_args(M, N, K, A, B, C)) return cudaErrorInvalidValue;
  const dim3 grid = tiles_grid(M, N, kVT, kVT);
  if (gemm_vector_aligned(N, K, A, B, C)) {
    vectorized_kernel<true><<<grid, kVThreads, 0, stream>>>(M, N, K, alpha, A, B, beta, C);
  } else {
    vectorized_kernel<false><<<grid, kVThreads, 0, stream>>>(M, N, K, alpha, A, B, beta, C);
  }
  return cudaGetLastError();
}

bool gemm_vector_aligned(int N, int K, const float* A, const float* B, const float* C) {
  const auto aligned = [](const float* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  return K % 4 == 0 && N % 4 == 0 && aligned(A) && aligned(B) && aligned(C);
}

}  // namespace kernels::gemm
