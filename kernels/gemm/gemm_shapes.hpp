#pragma once
// Shape-specific FP32 GEMM kernels behind `auto` (kernels/gemm/gemm_auto.hpp), with the
// conventions of gemm.hpp: C = alpha * op(A) * op(B) + beta * C, C (M, N) row-major, in every
// layout of gemm_types.hpp (A 'n' (M, K) or 't' (K, M), B 'n' (K, N) or 't' (N, K), read in
// place: the transposed operand is read along its stored rows, no transpose pass; the
// overloads without a Layout are nn); beta == 0: C is not read; launch functions return cudaErrorInvalidValue for bad
// arguments before launching anything, else cudaGetLastError(); asynchronous on `stream`;
// they allocate nothing (scratch is the caller's `workspace`).
#include <cstddef>

#include <cuda_runtime_api.h>

#include "gemm/gemm_types.hpp"

namespace kernels::gemm {

// The warp-tiled register-blocked tile of `coarsened` (gemm_tile.cuh) in four sizes: every
// warp computes a (32, 64) sub-tile, 8 x 8 outputs per thread; the block has (BM/32) x
// (BN/64) warps. K tiles of depth 8.
enum class Tile { t128x128, t128x64, t64x64, t32x64 };

struct TileShape {
  int bm, bn, threads;
};
constexpr TileShape tile_shape(Tile t) {
  switch (t) {
    case Tile::t128x128: return {128, 128, 256};
    case Tile::t128x64: return {128, 64, 128};
    case Tile::t64x64: return {64, 64, 64};
    case Tile::t32x64: return {32, 64, 32};
  }
  return {128, 128, 256};
}
const char* tile_name(Tile t);  // "128x128"
// Output tiles of an (M, N) result.
constexpr long long tile_count(Tile t, int M, int N) {
  const TileShape s = tile_shape(t);
  return static_cast<long long>((M + s.bm - 1) / s.bm) * ((N + s.bn - 1) / s.bn);
}
// Resident blocks per SM a tile kernel is built for (its __launch_bounds__ minimum):
// 256 threads: 2 (<= 128 registers); smaller blocks: 65536 / (168 * threads) (<= 168).
constexpr int tile_min_blocks(int threads) { return threads >= 256 ? 512 / threads : 390 / threads; }
constexpr int tile_blocks_per_sm(Tile t) { return tile_min_blocks(tile_shape(t).threads); }

// The whole of K per block, epilogue in the kernel. Any M, N, K >= 1.
cudaError_t gemm_tile(Layout layout, Tile tile, int M, int N, int K, float alpha, const float* A, const float* B,
                      float beta, float* C, cudaStream_t stream);
inline cudaError_t gemm_tile(Tile tile, int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                             float* C, cudaStream_t stream) {
  return gemm_tile(Layout::nn, tile, M, N, K, alpha, A, B, beta, C, stream);
}
// The tile kernels' 16-byte path: every stored leading dimension (A: K or M, B: N or K) and
// N (C) multiples of 4, A, B, C 16-byte aligned; else element-wise bounds-checked accesses.
bool tile_vector_aligned(Layout layout, int M, int N, int K, const float* A, const float* B, const float* C);

// Split-K (deterministic): K is cut into `splits` slices of splitk_slice(K, splits) (a
// multiple of 8, so float4 loads stay whole); block (x, y, z) computes output tile (x, y)
// over slice z into the z-th (M, N) panel of `workspace`; a second kernel sums the panels in
// slice order and applies alpha and beta. Same result bits on every run. `workspace` needs
// splitk_workspace_bytes(M, N, K, splits) bytes, 16-byte aligned. splits == 1 (or fewer
// slices than asked after rounding) runs gemm_tile. Every tile (128x128 too).
int splitk_slice(int K, int splits);
int splitk_slices(int K, int splits);  // the slices that are actually used
std::size_t splitk_workspace_bytes(int M, int N, int K, int splits);
cudaError_t gemm_splitk(Layout layout, Tile tile, int splits, int M, int N, int K, float alpha, const float* A,
                        const float* B, float beta, float* C, void* workspace, std::size_t workspace_bytes,
                        cudaStream_t stream);
inline cudaError_t gemm_splitk(Tile tile, int splits, int M, int N, int K, float alpha, const float* A, const float* B,
                               float beta, float* C, void* workspace, std::size_t workspace_bytes,
                               cudaStream_t stream) {
  return gemm_splitk(Layout::nn, tile, splits, M, N, K, alpha, A, B, beta, C, workspace, workspace_bytes, stream);
}

// GEMV, memory bound (every element of the matrix operand read once, 16-byte loads where
// aligned):
//   M == 1: C (1, N) = alpha * a (1, K) * B (K, N) + beta * C: blocks of 8 warps own 128
//           columns (4 per lane, each warp one row of B at a time: 512 contiguous bytes),
//           the warps split the block's rows, K is cut into `splits` slices over grid y;
//           splits > 1 writes (splits, N) panels to `workspace` and a reduce applies
//           alpha, beta (deterministic, as split-K).
//   N == 1: C (M, 1) = alpha * A (M, K) * b (K, 1) + beta * C: one warp per row of A,
//           shuffle reduction; `splits` and `workspace` unused.
// Layouts: the vector operand is K contiguous floats in every layout (A (1, K) or (K, 1);
// B (K, 1) or (1, K)), and the matrix operand stored with K contiguous is the N == 1 case
// of the other: M == 1 with B 't' (N, K) runs the warp-per-row kernel over B's N rows, N == 1
// with A 't' (K, M) the column-block kernel over A's M columns (with K slices).
// gemv_uses_cols says which kernel (and so whether `splits` applies).
// Other shapes: cudaErrorInvalidValue.
constexpr bool gemv_uses_cols(Layout layout, int M, int N) {
  return M == 1 ? !b_transposed(layout) : (N == 1 && a_transposed(layout));
}
int gemv_splits(int N, int K, int sm_count);  // for the column-block kernel over N columns
// Workspace of `splits` slices (the column-block kernel; 0 for splits <= 1): splits panels of
// the output length (N for M == 1, else M).
std::size_t gemv_workspace_bytes(int M, int N, int splits);
cudaError_t gemm_gemv(Layout layout, int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                      float* C, int splits, void* workspace, std::size_t workspace_bytes, cudaStream_t stream);
inline cudaError_t gemm_gemv(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C,
                             int splits, void* workspace, std::size_t workspace_bytes, cudaStream_t stream) {
  return gemm_gemv(Layout::nn, M, N, K, alpha, A, B, beta, C, splits, workspace, workspace_bytes, stream);
}

// K == 1, a rank-1 update C = alpha * a b^T + beta * C (a = A (M, 1), b = B (1, N)): one
// thread per 4 elements of C, float4 stores where N % 4 == 0. Other K: cudaErrorInvalidValue.
// Every layout: with K == 1 both operands are contiguous vectors however they are stored.
cudaError_t gemm_outer(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                       float* C, cudaStream_t stream);

// C[i] = alpha * sum_{s < slices} P[s * count + i] + beta * C[i] for i < count, summed in
// slice order (split-K's and GEMV's second pass).
cudaError_t reduce_panels(long long count, int slices, float alpha, const float* P, float beta,
                          float* C, cudaStream_t stream);

}  // namespace kernels::gemm
