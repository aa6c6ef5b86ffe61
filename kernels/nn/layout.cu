// Layout changes for attention and a tiled transpose.
//
// Head split/merge: a block per token row (b, n) (grid-stride over the B*N rows), whose
// threads walk that row's contiguous (3,) H, d part of qkv / (B, N, H, d) and read or write
// the matching (b, h, n, :) rows of the (B, H, N, d) tensors: contiguous runs of d
// elements on that side. 16-byte vectors along d when d % W == 0 and all pointers are
// aligned. Index math per row is 32-bit (H * d and 3 * H * d fit an int).
//
// Transpose: (32, 32) tiles through shared memory padded to 33 columns (no bank
// conflicts on the column reads), (32, 8) threads, reads and writes both coalesced.
#include <algorithm>
#include <cstddef>
#include <type_traits>

#include <cuda_bf16.h>

#include "nn/nn.hpp"
#include "nn/nn_common.cuh"

namespace kernels::nn {
namespace {
using namespace detail;

constexpr int kLayoutThreads = 128;

// Element type moved per step: a 16-byte vector or one T.
template <class T, bool kVec>
using Unit = typename std::conditional<kVec, Vec<T>, T>::type;

// kSplit: q/k/v (B, H, N, d) <- qkv (B, N, parts, H, d); else qkv <- q/k/v.
// parts = 3 (split_qkv / merge_qkv) or 1 (bnhd <-> bhnd, only `a` used).
// du = d in units (d / W for vectors).
template <class T, bool kVec, bool kSplit>
__global__ void __launch_bounds__(kLayoutThreads)
    heads_kernel(const T* src_packed, const T* src_a, const T* src_b, const T* src_c,
                 T* dst_packed, T* dst_a, T* dst_b, T* dst_c, int B, int N, int H, int du,
                 int parts) {
  using U = Unit<T, kVec>;
  const int hd = H * du;        // units per part of a token row
  const int row_units = parts * hd;
  const std::size_t rows = static_cast<std::size_t>(B) * N;
  for (std::size_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int b = static_cast<int>(row / N);
    const int n = static_cast<int>(row - static_cast<std::size_t>(b) * N);
    const std::size_t packed_base = row * row_units;
    for (int j = static_cast<int>(threadIdx.x); j < row_units; j += kLayoutThreads) {
      const int part = j / hd;
      const int rem = j - part * hd;
      const int h = rem / du;
      const int e = rem - h * du;
      const std::size_t head_index =
          ((static_cast<std::size_t>(b) * H + h) * N + n) * du + e;
      if constexpr (kSplit) {
        T* dst = part == 0 ? dst_a : (part == 1 ? dst_b : dst_c);
        reinterpret_cast<U*>(dst)[head_index] = reinterpret_cast<const U*>(src_packed)[packed_base + j];
      } else {
        const T* src = part == 0 ? src_a : (part == 1 ? src_b : src_c);
        reinterpret_cast<U*>(dst_packed)[packed_base + j] = reinterpret_cast<const U*>(src)[head_index];
      }
    }
  }
}

template <class T, bool kSplit>
cudaError_t launch_heads(const T* src_packed, const T* sa, const T* sb, const T* sc,
                         T* dst_packed, T* da, T* db, T* dc, int B, int N, int H, int d, int parts,
                         cudaStream_t s) {
  constexpr int W = kWidth<T>;
  const bool vec = d % W == 0 &&
                   (kSplit ? aligned16(src_packed) && aligned16(da) &&
                                 (parts == 1 || (aligned16(db) && aligned16(dc)))
                           : aligned16(dst_packed) && aligned16(sa) &&
                                 (parts == 1 || (aligned16(sb) && aligned16(sc))));
  const std::size_t rows = static_cast<std::size_t>(B) * N;
  const unsigned blocks = static_cast<unsigned>(
      std::min<std::size_t>(rows, static_cast<std::size_t>(sm_count()) * 16));
  if (vec)
    heads_kernel<T, true, kSplit><<<blocks, kLayoutThreads, 0, s>>>(
        src_packed, sa, sb, sc, dst_packed, da, db, dc, B, N, H, d / W, parts);
  else
    heads_kernel<T, false, kSplit><<<blocks, kLayoutThreads, 0, s>>>(
        src_packed, sa, sb, sc, dst_packed, da, db, dc, B, N, H, d, parts);
  return cudaGetLastError();
}

// Shape check shared by the head functions: negative sizes are errors, an empty tensor
// is a no-op (returns false with e = cudaSuccess), 3 H d must fit an int.
bool heads_shape_ok(int B, int N, int H, int d, cudaError_t& e) {
  e = cudaSuccess;
  if (B < 0 || N < 0 || H < 0 || d < 0 || static_cast<long long>(H) * d * 3 > 0x7fffffffLL) {
    e = cudaErrorInvalidValue;
    return false;
  }
  return static_cast<long long>(B) * N * H * d > 0;
}

constexpr int kTile = 32;
constexpr int kTileRows = 8;

// y (cols, rows) = x (rows, cols)^T. Tile (ty0, tx0) = (tile row, tile col) of x.
template <class T>
__global__ void __launch_bounds__(kTile* kTileRows)
    transpose_kernel(const T* __restrict__ x, T* __restrict__ y, int rows, int cols,
                     int row_tiles) {
  __shared__ T tile[kTile][kTile + 1];
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const int c0 = static_cast<int>(blockIdx.x) * kTile;
  for (int rt = static_cast<int>(blockIdx.y); rt < row_tiles; rt += static_cast<int>(gridDim.y)) {
    const int r0 = rt * kTile;
#pragma unroll
    for (int i = ty; i < kTile; i += kTileRows) {
      const int r = r0 + i, c = c0 + tx;
      if (r < rows && c < cols) tile[i][tx] = x[static_cast<std::size_t>(r) * cols + c];
    }
    __syncthreads();
#pragma unroll
    for (int i = ty; i < kTile; i += kTileRows) {
      const int c = c0 + i, r = r0 + tx;  // y(c, r) = x(r, c)
      if (c < cols && r < rows) y[static_cast<std::size_t>(c) * rows + r] = tile[tx][i];
    }
    __syncthreads();
  }
}

}  // namespace

template <class T>
cudaError_t split_qkv(const T* qkv, T* q, T* k, T* v, int B, int N, int H, int d,
                      cudaStream_t s) {
  cudaError_t e;
  if (!heads_shape_ok(B, N, H, d, e)) return e;
  if (!qkv || !q || !k || !v) return cudaErrorInvalidValue;
  return launch_heads<T, true>(qkv, nullptr, nullptr, nullptr, nullptr, q, k, v, B, N, H, d, 3, s);
}

template <class T>
cudaError_t merge_qkv(const T* dq, const T* dk, const T* dv, T* dqkv, int B, int N, int H,
                      int d, cudaStream_t s) {
  cudaError_t e;
  if (!heads_shape_ok(B, N, H, d, e)) return e;
  if (!dq || !dk || !dv || !dqkv) return cudaErrorInvalidValue;
  return launch_heads<T, false>(nullptr, dq, dk, dv, dqkv, nullptr, nullptr, nullptr, B, N, H, d,
                                3, s);
}

template <class T>
cudaError_t bnhd_to_bhnd(const T* x, T* y, int B, int N, int H, int d, cudaStream_t s) {
  cudaError_t e;
  if (!heads_shape_ok(B, N, H, d, e)) return e;
  if (!x || !y) return cudaErrorInvalidValue;
  return launch_heads<T, true>(x, nullptr, nullptr, nullptr, nullptr, y, nullptr, nullptr, B, N, H,
                               d, 1, s);
}

template <class T>
cudaError_t bhnd_to_bnhd(const T* x, T* y, int B, int N, int H, int d, cudaStream_t s) {
  cudaError_t e;
  if (!heads_shape_ok(B, N, H, d, e)) return e;
  if (!x || !y) return cudaErrorInvalidValue;
  return launch_heads<T, false>(nullptr, x, nullptr, nullptr, y, nullptr, nullptr, nullptr, B, N,
                                H, d, 1, s);
}

template <class T>
cudaError_t transpose(const T* x, T* y, int rows, int cols, cudaStream_t s) {
  if (rows < 0 || cols < 0) return cudaErrorInvalidValue;
  if (rows == 0 || cols == 0) return cudaSuccess;
  if (!x || !y) return cudaErrorInvalidValue;
  const int row_tiles = (rows + kTile - 1) / kTile;
  const int col_tiles = (cols + kTile - 1) / kTile;
  const dim3 grid(static_cast<unsigned>(col_tiles), static_cast<unsigned>(std::min(row_tiles, 65535)));
  transpose_kernel<<<grid, dim3(kTile, kTileRows), 0, s>>>(x, y, rows, cols, row_tiles);
  return cudaGetLastError();
}

#define KERNELS_NN_LAYOUT(T)                                                                   \
  template cudaError_t split_qkv<T>(const T*, T*, T*, T*, int, int, int, int, cudaStream_t);   \
  template cudaError_t merge_qkv<T>(const T*, const T*, const T*, T*, int, int, int, int,      \
                                    cudaStream_t);                                             \
  template cudaError_t bnhd_to_bhnd<T>(const T*, T*, int, int, int, int, cudaStream_t);        \
  template cudaError_t bhnd_to_bnhd<T>(const T*, T*, int, int, int, int, cudaStream_t);        \
  template cudaError_t transpose<T>(const T*, T*, int, int, cudaStream_t);

KERNELS_NN_LAYOUT(float)
KERNELS_NN_LAYOUT(double)
#undef KERNELS_NN_LAYOUT

// bf16 activations of the mixed-precision engine: the head layouts only (pure data
// movement; 16-byte vectors of 8 elements when d % 8 == 0).
template cudaError_t split_qkv<__nv_bfloat16>(const __nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*,
                                              int, int, int, int, cudaStream_t);
template cudaError_t merge_qkv<__nv_bfloat16>(const __nv_bfloat16*, const __nv_bfloat16*, const __nv_bfloat16*,
                                              __nv_bfloat16*, int, int, int, int, cudaStream_t);
template cudaError_t bnhd_to_bhnd<__nv_bfloat16>(const __nv_bfloat16*, __nv_bfloat16*, int, int, int, int,
                                                 cudaStream_t);
template cudaError_t bhnd_to_bnhd<__nv_bfloat16>(const __nv_bfloat16*, __nv_bfloat16*, int, int, int, int,
                                                 cudaStream_t);

}  // namespace kernels::nn
