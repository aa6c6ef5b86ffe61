// The multi-channel (CNN layer) convolution: x (N, C, H, W) * w (K, C, S, S) -> y (N, K, H, W),
// stride 1, zero padding R on every side (same size), S = 2R + 1.
//
// layer_naive: a thread per output element; block 32 x 8 pixels of one (n, k) plane, grid
//   (ceil(W/32), ceil(H/8), N*K) (z strided when N*K > 65535). C S^2 global loads of x and of
//   w per output (w: one address per warp, a broadcast).
//
// layer_tiled: direct convolution with shared-memory tiles and register blocking.
//   Block: 128 threads, an output tile of TH x TW = 8 x 16 pixels of one image n times
//   KB = 32 output channels; grid (tiles of the image, ceil(K/32), N).
//   Thread t: warp cg = t / 32 owns channels k0 + 8 cg .. + 7; lane pg = t % 32 owns row
//   pg / 4 of the tile and 4 consecutive pixels from column 4 (pg % 4): 4 x 8 = 32
//   accumulators in registers.
//   Loop over the input channels in chunks of CB (8, 4, 2, 2 for R = 1..4):
//     shared xs (CB, TH + 2R, TW + 2R): the input tile with its halo (zeros outside the
//       image and past C);
//     shared ws (CB S S, KB): the chunk's filters, output channel fastest, read from the
//       transposed copy wt (C, S, S, K) so that the global loads are coalesced rows of K;
//     for every (c, a): the thread's 4 + 2R input values of row a in registers, then for
//     every b two float4 loads of its 8 weights (the same address across the warp: a
//     broadcast) and 32 FMAs (the 4 pixels reuse the row values as a sliding window).
//   Data per chunk: CB ((TH + 2R)(TW + 2R) + S^2 KB) floats of shared memory, 15-24 KB.
//   The transpose of w (K, C, S, S) -> wt (C, S, S, K) is a separate small kernel launched
//   first on the same stream, into the caller's scratch (layer_tiled_scratch bytes).
#include <cstdint>

#include "conv2d/conv2d_common.cuh"

namespace kernels::conv2d {

namespace {

using detail::ceil_div;

bool valid_layer(const LayerShape& s, const void* x, const void* f, const void* y) {
  if (s.n < 1 || s.c < 1 || s.h < 1 || s.w < 1 || s.k < 1 || s.r < 1 || s.r > kMaxRadius) return false;
  if (x == nullptr || f == nullptr || y == nullptr) return false;
  const std::int64_t hw = static_cast<std::int64_t>(s.h) * s.w, side = 2 * s.r + 1;
  return hw * s.n * s.c <= INT32_MAX && hw * s.n * s.k <= INT32_MAX &&
         static_cast<std::int64_t>(s.k) * s.c * side * side <= INT32_MAX;
}

// ---- layer_naive ------------------------------------------------------------------------
template <int R>
__global__ void __launch_bounds__(256)
    layer_naive_kernel(LayerShape s, const float* __restrict__ x, const float* __restrict__ f, float* __restrict__ y) {
  constexpr int S = 2 * R + 1;
  const int j = static_cast<int>(blockIdx.x) * 32 + static_cast<int>(threadIdx.x);
  const int i = static_cast<int>(blockIdx.y) * 8 + static_cast<int>(threadIdx.y);
  if (i >= s.h || j >= s.w) return;
  const int hw = s.h * s.w;
  for (int nk = static_cast<int>(blockIdx.z); nk < s.n * s.k; nk += static_cast<int>(gridDim.z)) {
    const int n = nk / s.k, k = nk % s.k;
    float acc = 0.0f;
    for (int c = 0; c < s.c; ++c) {
      const float* xc = x + (n * s.c + c) * hw;
      const float* fc = f + (k * s.c + c) * S * S;
#pragma unroll
      for (int a = 0; a < S; ++a) {
        const int ii = i + a - R;
        if (ii < 0 || ii >= s.h) continue;
#pragma unroll
        for (int b = 0; b < S; ++b) {
          const int jj = j + b - R;
          if (jj >= 0 && jj < s.w) acc = fmaf(fc[a * S + b], xc[ii * s.w + jj], acc);
        }
      }
    }
    y[nk * hw + i * s.w + j] = acc;
  }
}

// ---- layer_tiled ------------------------------------------------------------------------
constexpr int kTH = 8, kTW = 16, kKB = 32, kThreads = 128, kPix = 4, kCh = 8;

// w (K, C, S, S) -> wt (C, S, S, K): element (k, q) with q = c S^2 + a S + b goes to q K + k.
__global__ void transpose_filters_kernel(int k_count, int per_k, const float* __restrict__ f, float* __restrict__ wt) {
  const int total = k_count * per_k;
  for (int idx = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); idx < total;
       idx += static_cast<int>(gridDim.x * blockDim.x)) {
    const int k = idx / per_k, q = idx % per_k;
    wt[q * k_count + k] = f[idx];
  }
}

template <int R, int CB>
__global__ void __launch_bounds__(kThreads) layer_tiled_kernel(LayerShape s, int tiles_x, const float* __restrict__ x,
                                                               const float* __restrict__ wt, float* __restrict__ y) {
  constexpr int S = 2 * R + 1, SH = kTH + 2 * R, SW = kTW + 2 * R, NV = kPix + 2 * R;
  __shared__ float xs[CB][SH][SW];
  __shared__ __align__(16) float ws[CB * S * S][kKB];

  const int t = static_cast<int>(threadIdx.x);
  const int cg = t / 32, pg = t % 32;
  const int row = pg / 4, col0 = (pg % 4) * kPix;
  const int i0 = (static_cast<int>(blockIdx.x) / tiles_x) * kTH, j0 = (static_cast<int>(blockIdx.x) % tiles_x) * kTW;
  const int k0 = static_cast<int>(blockIdx.y) * kKB, n = static_cast<int>(blockIdx.z);
  const int hw = s.h * s.w;

  float acc[kCh][kPix];
#pragma unroll
  for (int q = 0; q < kCh; ++q)
#pragma unroll
    for (int p = 0; p < kPix; ++p) acc[q][p] = 0.0f;

  for (int c0 = 0; c0 < s.c; c0 += CB) {
    // Input tile of channels c0 .. c0 + CB - 1 with its halo; zero outside the image / past C.
    for (int e = t; e < CB * SH * SW; e += kThreads) {
      const int cc = e / (SH * SW), rem = e % (SH * SW), sy = rem / SW, sx = rem % SW;
      const int c = c0 + cc, gi = i0 - R + sy, gj = j0 - R + sx;
      xs[cc][sy][sx] =
          (c < s.c && gi >= 0 && gi < s.h && gj >= 0 && gj < s.w) ? x[(n * s.c + c) * hw + gi * s.w + gj] : 0.0f;
    }
    // Filters of the chunk: rows q = cc S^2 + a S + b of wt, channels k0 .. k0 + 31.
    for (int e = t; e < CB * S * S * kKB; e += kThreads) {
      const int q = e / kKB, kk = e % kKB;
      const int c = c0 + q / (S * S), k = k0 + kk;
      ws[q][kk] = (c < s.c && k < s.k) ? wt[(c0 * S * S + q) * s.k + k] : 0.0f;
    }
    __syncthreads();
#pragma unroll 1
    for (int cc = 0; cc < CB; ++cc) {
#pragma unroll
      for (int a = 0; a < S; ++a) {
        float v[NV];
#pragma unroll
        for (int e = 0; e < NV; ++e) v[e] = xs[cc][row + a][col0 + e];
#pragma unroll
        for (int b = 0; b < S; ++b) {
          const float4* wp = reinterpret_cast<const float4*>(&ws[(cc * S + a) * S + b][cg * kCh]);
          const float4 w0 = wp[0], w1 = wp[1];
          const float wv[kCh] = {w0.x, w0.y, w0.z, w0.w, w1.x, w1.y, w1.z, w1.w};
#pragma unroll
          for (int q = 0; q < kCh; ++q)
#pragma unroll
            for (int p = 0; p < kPix; ++p) acc[q][p] = fmaf(wv[q], v[p + b], acc[q][p]);
        }
      }
    }
    __syncthreads();  // the next chunk overwrites xs and ws
  }

  const int i = i0 + row;
  if (i >= s.h) return;
#pragma unroll
  for (int q = 0; q < kCh; ++q) {
    const int k = k0 + cg * kCh + q;
    if (k >= s.k) break;
    float* yrow = y + (n * s.k + k) * hw + i * s.w;
#pragma unroll
    for (int p = 0; p < kPix; ++p)
      if (j0 + col0 + p < s.w) yrow[j0 + col0 + p] = acc[q][p];
  }
}

}  // namespace

cudaError_t layer_naive(const LayerShape& s, const float* x, const float* filters, float* y, cudaStream_t stream) {
  if (!valid_layer(s, x, filters, y)) return cudaErrorInvalidValue;
  const dim3 grid(ceil_div(s.w, 32), ceil_div(s.h, 8), static_cast<unsigned>(s.n * s.k < 65535 ? s.n * s.k : 65535));
  if (grid.y > 65535) return cudaErrorInvalidConfiguration;
  return detail::dispatch_radius(s.r, [&](auto rc) {
    layer_naive_kernel<decltype(rc)::value><<<grid, dim3(32, 8), 0, stream>>>(s, x, filters, y);
    return cudaGetLastError();
  });
}

std::size_t layer_tiled_scratch(const LayerShape& s) {
  const std::size_t side = 2 * static_cast<std::size_t>(s.r) + 1;
  return sizeof(float) * static_cast<std::size_t>(s.k) * static_cast<std::size_t>(s.c) * side * side;
}

cudaError_t layer_tiled(const LayerShape& s, const float* x, const float* filters, float* y, float* scratch,
                        cudaStream_t stream) {
  if (!valid_layer(s, x, filters, y) || scratch == nullptr) return cudaErrorInvalidValue;
  const int side = 2 * s.r + 1, per_k = s.c * side * side;
  const int total = s.k * per_k;
  transpose_filters_kernel<<<ceil_div(total, 256) < 4096 ? ceil_div(total, 256) : 4096, 256, 0, stream>>>(
      s.k, per_k, filters, scratch);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  const int tiles_x = ceil_div(s.w, kTW);
  const std::int64_t tiles = static_cast<std::int64_t>(tiles_x) * ceil_div(s.h, kTH);
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(ceil_div(s.k, kKB)), static_cast<unsigned>(s.n));
  if (tiles > INT32_MAX || grid.y > 65535 || grid.z > 65535) return cudaErrorInvalidConfiguration;
  return detail::dispatch_radius(s.r, [&](auto rc) {
    constexpr int R = decltype(rc)::value;
    constexpr int CB = R == 1 ? 8 : R == 2 ? 4 : 2;
    layer_tiled_kernel<R, CB><<<grid, kThreads, 0, stream>>>(s, tiles_x, x, scratch, y);
    return cudaGetLastError();
  });
}

}  // namespace kernels::conv2d
