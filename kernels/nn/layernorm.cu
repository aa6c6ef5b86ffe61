// LayerNorm over the last dimension, forward and backward (see nn.hpp for the math).
//
// Forward and the dx part of the backward: one warp per row, 8 rows per 256-thread block.
// Two variants of each:
//   cached<kVecs>: the row is 16-byte aligned with cols % W == 0 and cols / W <= 32 kVecs;
//                  lane l holds vectors l, l + 32, ... of the row in registers, so x (and
//                  dy) are read from global memory once. kVecs = 1, 2, 4, 8 (up to 1024
//                  floats / 512 doubles per row; d_model 512 in float is kVecs = 4).
//   generic:       any cols and alignment; scalar loops that re-read the row (from L1).
// Mean and variance are two-pass (variance of x - mean), never E[x^2] - mean^2.
// dgamma, dbeta: a column reduction, (32, 32) blocks owning 32 columns each, fixed order.
#include <cstddef>
#include <initializer_list>

#include "nn/nn.hpp"
#include "nn/nn_common.cuh"

namespace kernels::nn {
namespace {
using namespace detail;

constexpr int kRowsPerBlock = 8;  // warps per block, one row each
constexpr int kRowThreads = 32 * kRowsPerBlock;

template <class T, int kVecs>
__global__ void __launch_bounds__(kRowThreads)
    ln_forward_cached(const T* __restrict__ x, const T* __restrict__ gamma,
                      const T* __restrict__ beta, T* __restrict__ y, T* __restrict__ mean,
                      T* __restrict__ rstd, int rows, int cols, T eps) {
  constexpr int W = kWidth<T>;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int row = static_cast<int>(blockIdx.x) * kRowsPerBlock + static_cast<int>(threadIdx.x >> 5);
  if (row >= rows) return;
  const int nv = cols / W;
  const T* xr = x + static_cast<std::size_t>(row) * cols;
  Vec<T> buf[kVecs];
  T sum = T(0);
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int v = lane + 32 * k;
    if (v < nv) {
      buf[k] = load_vec(xr, v);
#pragma unroll
      for (int e = 0; e < W; ++e) sum += buf[k].v[e];
    }
  }
  const T mu = arch::warp_sum(sum) / T(cols);
  T sq = T(0);
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    if (lane + 32 * k < nv) {
#pragma unroll
      for (int e = 0; e < W; ++e) {
        const T dlt = buf[k].v[e] - mu;
        sq += dlt * dlt;
      }
    }
  }
  const T r = T(1) / sqrt(arch::warp_sum(sq) / T(cols) + eps);
  T* yr = y + static_cast<std::size_t>(row) * cols;
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int v = lane + 32 * k;
    if (v < nv) {
      const Vec<T> g = load_vec(gamma, v);
      const Vec<T> b = load_vec(beta, v);
      Vec<T> out;
#pragma unroll
      for (int e = 0; e < W; ++e) out.v[e] = (buf[k].v[e] - mu) * r * g.v[e] + b.v[e];
      store_vec(yr, v, out);
    }
  }
  if (lane == 0) {
    if (mean) mean[row] = mu;
    if (rstd) rstd[row] = r;
  }
}

template <class T>
__global__ void __launch_bounds__(kRowThreads)
    ln_forward_generic(const T* __restrict__ x, const T* __restrict__ gamma,
                       const T* __restrict__ beta, T* __restrict__ y, T* __restrict__ mean,
                       T* __restrict__ rstd, int rows, int cols, T eps) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int row = static_cast<int>(blockIdx.x) * kRowsPerBlock + static_cast<int>(threadIdx.x >> 5);
  if (row >= rows) return;
  const T* xr = x + static_cast<std::size_t>(row) * cols;
  T sum = T(0);
  for (int c = lane; c < cols; c += 32) sum += xr[c];
  const T mu = arch::warp_sum(sum) / T(cols);
  T sq = T(0);
  for (int c = lane; c < cols; c += 32) {
    const T dlt = xr[c] - mu;
    sq += dlt * dlt;
  }
  const T r = T(1) / sqrt(arch::warp_sum(sq) / T(cols) + eps);
  T* yr = y + static_cast<std::size_t>(row) * cols;
  for (int c = lane; c < cols; c += 32) yr[c] = (xr[c] - mu) * r * gamma[c] + beta[c];
  if (lane == 0) {
    if (mean) mean[row] = mu;
    if (rstd) rstd[row] = r;
  }
}

// dx = rstd (g - mean_c(g) - xhat mean_c(g xhat)), g = dy gamma, xhat = (x - mean) rstd.
template <class T, int kVecs>
__global__ void __launch_bounds__(kRowThreads)
    ln_backward_dx_cached(const T* __restrict__ x, const T* __restrict__ gamma,
                          const T* __restrict__ mean, const T* __restrict__ rstd,
                          const T* __restrict__ dy, T* __restrict__ dx, int rows, int cols) {
  constexpr int W = kWidth<T>;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int row = static_cast<int>(blockIdx.x) * kRowsPerBlock + static_cast<int>(threadIdx.x >> 5);
  if (row >= rows) return;
  const int nv = cols / W;
  const std::size_t off = static_cast<std::size_t>(row) * cols;
  const T mu = mean[row];
  const T r = rstd[row];
  Vec<T> xh[kVecs];  // xhat
  Vec<T> gg[kVecs];  // g = dy gamma
  T sum_g = T(0), sum_gx = T(0);
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int v = lane + 32 * k;
    if (v < nv) {
      const Vec<T> xv = load_vec(x + off, v);
      const Vec<T> dv = load_vec(dy + off, v);
      const Vec<T> gm = load_vec(gamma, v);
#pragma unroll
      for (int e = 0; e < W; ++e) {
        xh[k].v[e] = (xv.v[e] - mu) * r;
        gg[k].v[e] = dv.v[e] * gm.v[e];
        sum_g += gg[k].v[e];
        sum_gx += gg[k].v[e] * xh[k].v[e];
      }
    }
  }
  const T mean_g = arch::warp_sum(sum_g) / T(cols);
  const T mean_gx = arch::warp_sum(sum_gx) / T(cols);
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int v = lane + 32 * k;
    if (v < nv) {
      Vec<T> out;
#pragma unroll
      for (int e = 0; e < W; ++e) out.v[e] = r * (gg[k].v[e] - mean_g - xh[k].v[e] * mean_gx);
      store_vec(dx + off, v, out);
    }
  }
}

template <class T>
__global__ void __launch_bounds__(kRowThreads)
    ln_backward_dx_generic(const T* __restrict__ x, const T* __restrict__ gamma,
                           const T* __restrict__ mean, const T* __restrict__ rstd,
                           const T* __restrict__ dy, T* __restrict__ dx, int rows, int cols) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int row = static_cast<int>(blockIdx.x) * kRowsPerBlock + static_cast<int>(threadIdx.x >> 5);
  if (row >= rows) return;
  const std::size_t off = static_cast<std::size_t>(row) * cols;
  const T* xr = x + off;
  const T* dyr = dy + off;
  const T mu = mean[row];
  const T r = rstd[row];
  T sum_g = T(0), sum_gx = T(0);
  for (int c = lane; c < cols; c += 32) {
    const T g = dyr[c] * gamma[c];
    sum_g += g;
    sum_gx += g * (xr[c] - mu) * r;
  }
  const T mean_g = arch::warp_sum(sum_g) / T(cols);
  const T mean_gx = arch::warp_sum(sum_gx) / T(cols);
  T* dxr = dx + off;
  for (int c = lane; c < cols; c += 32)
    dxr[c] = r * (dyr[c] * gamma[c] - mean_g - (xr[c] - mu) * r * mean_gx);
}

// dgamma[c] = sum_r dy[r, c] xhat[r, c], dbeta[c] = sum_r dy[r, c]; (32, 32) blocks, block
// x owns columns 32 x .. 32 x + 31, thread (tx, ty) rows ty, ty + 32, ... of one column.
constexpr int kColTile = 32;
constexpr int kColRows = 32;

template <class T>
__global__ void __launch_bounds__(kColTile* kColRows)
    ln_backward_params(const T* __restrict__ x, const T* __restrict__ mean,
                       const T* __restrict__ rstd, const T* __restrict__ dy,
                       T* __restrict__ dgamma, T* __restrict__ dbeta, int rows, int cols) {
  __shared__ T part_g[kColRows][kColTile + 1];
  __shared__ T part_b[kColRows][kColTile + 1];
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const int c = static_cast<int>(blockIdx.x) * kColTile + tx;
  T acc_g = T(0), acc_b = T(0);
  if (c < cols) {
#pragma unroll 4
    for (int r = ty; r < rows; r += kColRows) {
      const std::size_t i = static_cast<std::size_t>(r) * cols + c;
      const T d = dy[i];
      acc_g += d * (x[i] - mean[r]) * rstd[r];
      acc_b += d;
    }
  }
  part_g[ty][tx] = acc_g;
  part_b[ty][tx] = acc_b;
  __syncthreads();
  const T g = arch::warp_sum(part_g[tx][ty]);
  const T b = arch::warp_sum(part_b[tx][ty]);
  const int oc = static_cast<int>(blockIdx.x) * kColTile + ty;
  if (tx == 0 && oc < cols) {
    dgamma[oc] = g;
    dbeta[oc] = b;
  }
}

// Smallest kVecs in {1, 2, 4, 8} covering cols, or 0 (generic) when the row cannot be
// cached: unaligned pointers, cols % W != 0, or too long.
template <class T>
int cached_vecs(int cols, std::initializer_list<const void*> ptrs) {
  constexpr int W = kWidth<T>;
  if (cols % W != 0) return 0;
  for (const void* p : ptrs)
    if (!aligned16(p)) return 0;
  const int nv = cols / W;
  for (int k : {1, 2, 4, 8})
    if (nv <= 32 * k) return k;
  return 0;
}

}  // namespace

template <class T>
cudaError_t layernorm_forward(const T* x, const T* gamma, const T* beta, T* y, T* mean,
                              T* rstd, int rows, int cols, T eps, cudaStream_t s) {
  if (rows < 0 || cols < 0) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  if (cols == 0 || !x || !gamma || !beta || !y) return cudaErrorInvalidValue;
  const unsigned blocks = static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
  switch (cached_vecs<T>(cols, {x, gamma, beta, y})) {
    case 1:
      ln_forward_cached<T, 1><<<blocks, kRowThreads, 0, s>>>(x, gamma, beta, y, mean, rstd, rows, cols, eps);
      break;
    case 2:
      ln_forward_cached<T, 2><<<blocks, kRowThreads, 0, s>>>(x, gamma, beta, y, mean, rstd, rows, cols, eps);
      break;
    case 4:
      ln_forward_cached<T, 4><<<blocks, kRowThreads, 0, s>>>(x, gamma, beta, y, mean, rstd, rows, cols, eps);
      break;
    case 8:
      ln_forward_cached<T, 8><<<blocks, kRowThreads, 0, s>>>(x, gamma, beta, y, mean, rstd, rows, cols, eps);
      break;
    default:
      ln_forward_generic<T><<<blocks, kRowThreads, 0, s>>>(x, gamma, beta, y, mean, rstd, rows, cols, eps);
  }
  return cudaGetLastError();
}

template <class T>
cudaError_t layernorm_backward_dx(const T* x, const T* gamma, const T* mean, const T* rstd, const T* dy, T* dx,
                                  int rows, int cols, cudaStream_t s) {
  if (rows < 0 || cols < 0) return cudaErrorInvalidValue;
  if (rows == 0 || cols == 0) return cudaSuccess;
  if (!x || !gamma || !mean || !rstd || !dy || !dx) return cudaErrorInvalidValue;
  const unsigned blocks = static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
  switch (cached_vecs<T>(cols, {x, gamma, dy, dx})) {
    case 1:
      ln_backward_dx_cached<T, 1><<<blocks, kRowThreads, 0, s>>>(x, gamma, mean, rstd, dy, dx, rows, cols);
      break;
    case 2:
      ln_backward_dx_cached<T, 2><<<blocks, kRowThreads, 0, s>>>(x, gamma, mean, rstd, dy, dx, rows, cols);
      break;
    case 4:
      ln_backward_dx_cached<T, 4><<<blocks, kRowThreads, 0, s>>>(x, gamma, mean, rstd, dy, dx, rows, cols);
      break;
    case 8:
      ln_backward_dx_cached<T, 8><<<blocks, kRowThreads, 0, s>>>(x, gamma, mean, rstd, dy, dx, rows, cols);
      break;
    default:
      ln_backward_dx_generic<T><<<blocks, kRowThreads, 0, s>>>(x, gamma, mean, rstd, dy, dx, rows, cols);
  }
  return cudaGetLastError();
}

template <class T>
cudaError_t layernorm_backward(const T* x, const T* gamma, const T* mean, const T* rstd,
                               const T* dy, T* dx, T* dgamma, T* dbeta, int rows, int cols,
                               cudaStream_t s) {
  if (rows < 0 || cols < 0) return cudaErrorInvalidValue;
  if (cols == 0) return cudaSuccess;
  if (!dgamma || !dbeta) return cudaErrorInvalidValue;
  if (rows > 0 && (!x || !gamma || !mean || !rstd || !dy || !dx)) return cudaErrorInvalidValue;
  if (cudaError_t e = layernorm_backward_dx(x, gamma, mean, rstd, dy, dx, rows, cols, s); e != cudaSuccess) return e;
  const unsigned col_blocks = static_cast<unsigned>((cols + kColTile - 1) / kColTile);
  ln_backward_params<T><<<col_blocks, dim3(kColTile, kColRows), 0, s>>>(x, mean, rstd, dy, dgamma,
                                                                      dbeta, rows, cols);
  return cudaGetLastError();
}

#define KERNELS_NN_LAYERNORM(T)                                                              \
  template cudaError_t layernorm_forward<T>(const T*, const T*, const T*, T*, T*, T*, int, int, \
                                            T, cudaStream_t);                                 \
  template cudaError_t layernorm_backward<T>(const T*, const T*, const T*, const T*, const T*,  \
                                             T*, T*, T*, int, int, cudaStream_t);                \
  template cudaError_t layernorm_backward_dx<T>(const T*, const T*, const T*, const T*,          \
                                                const T*, T*, int, int, cudaStream_t);

KERNELS_NN_LAYERNORM(float)
KERNELS_NN_LAYERNORM(double)
#undef KERNELS_NN_LAYERNORM

}  // namespace kernels::nn
