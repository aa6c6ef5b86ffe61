// The notes' three tiling strategies for the single-channel convolution (section 1.7).
// Every kernel reads the mask from constant memory (copied there from the mask operand at
// the start of each launch), computes one output per thread and accumulates in the same
// (a, b) row-major order as the untiled kernels. Zero padding: an input position outside
// the image is stored (or taken) as 0.
//
//   tiled_out (strategy 1): block 32 x 8 threads = the output tile (TW x TH = 32 x 8).
//     Shared memory holds the input tile with its halo, (8 + 2R) x (32 + 2R) floats; the
//     256 threads load it in a strided loop (some load twice: the halo costs extra loads,
//     not idle threads). Then every thread computes its output from shared memory.
//   tiled_in (strategy 2): block 32 x 32 threads = the input tile (halo included), one
//     load per thread; the output tile is (32 - 2R)^2: threads in the R-wide ring idle in
//     the output step (r = 1: 12% idle, r = 4: 44%).
//   tiled_cached_halo (strategy 3): block 32 x 8 = output tile = the core tile in shared
//     memory (one load per thread, no halo). A tap that falls outside the core (the
//     halo) is read from global memory through the read-only/L1 path (__ldg): the
//     neighbouring blocks have just brought those lines into L1/L2. Divergent at the tile
//     edges, but the shared tile is smallest.
#include "conv2d/conv2d_common.cuh"

namespace kernels::conv2d {

namespace {

using detail::ceil_div;

__constant__ float c_mask[(2 * kMaxRadius + 1) * (2 * kMaxRadius + 1)];

constexpr int kTileW = 32, kTileH = 8;  // strategies 1 and 3: the output tile = the block
constexpr int kInTile = 32;             // strategy 2: the input tile = the block (square)

// Strategy 1. x (h, w) -> y (h, w); block (32, 8); grid (ceil(w/32), ceil(h/8)).
template <int R>
__global__ void __launch_bounds__(kTileW* kTileH)
    tiled_out_kernel(int h, int w, const float* __restrict__ x, float* __restrict__ y) {
  constexpr int S = 2 * R + 1, SW = kTileW + 2 * R, SH = kTileH + 2 * R;
  __shared__ float tile[SH][SW];
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const int j0 = static_cast<int>(blockIdx.x) * kTileW, i0 = static_cast<int>(blockIdx.y) * kTileH;
  // The input tile rows i0 - R .. i0 + TH + R - 1, columns j0 - R .. j0 + TW + R - 1.
  for (int idx = ty * kTileW + tx; idx < SH * SW; idx += kTileW * kTileH) {
    const int sy = idx / SW, sx = idx % SW;
    const int gi = i0 - R + sy, gj = j0 - R + sx;
    tile[sy][sx] = (gi >= 0 && gi < h && gj >= 0 && gj < w) ? x[gi * w + gj] : 0.0f;
  }
  __syncthreads();
  const int i = i0 + ty, j = j0 + tx;
  if (i >= h || j >= w) return;
  float acc = 0.0f;
#pragma unroll
  for (int a = 0; a < S; ++a)
#pragma unroll
    for (int b = 0; b < S; ++b) acc = fmaf(c_mask[a * S + b], tile[ty + a][tx + b], acc);
  y[i * w + j] = acc;
}

// Strategy 2. Block (32, 32) covers input rows bi*OUT - R .. + 31 (OUT = 32 - 2R); thread
// (tx, ty) loads input (bi*OUT - R + ty, bj*OUT - R + tx) and, if it is not in the halo
// ring, computes the output at that same position.
template <int R>
__global__ void __launch_bounds__(kInTile* kInTile)
    tiled_in_kernel(int h, int w, const float* __restrict__ x, float* __restrict__ y) {
  constexpr int S = 2 * R + 1, OUT = kInTile - 2 * R;
  __shared__ float tile[kInTile][kInTile];
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const int i = static_cast<int>(blockIdx.y) * OUT - R + ty, j = static_cast<int>(blockIdx.x) * OUT - R + tx;
  tile[ty][tx] = (i >= 0 && i < h && j >= 0 && j < w) ? x[i * w + j] : 0.0f;
  __syncthreads();
  const int oy = ty - R, ox = tx - R;                                          // position in the output tile
  if (oy < 0 || oy >= OUT || ox < 0 || ox >= OUT || i >= h || j >= w) return;  // halo ring / past the image
  float acc = 0.0f;
#pragma unroll
  for (int a = 0; a < S; ++a)
#pragma unroll
    for (int b = 0; b < S; ++b) acc = fmaf(c_mask[a * S + b], tile[oy + a][ox + b], acc);
  y[i * w + j] = acc;
}

// Strategy 3. Block (32, 8) = output tile = the shared core tile.
template <int R>
__global__ void __launch_bounds__(kTileW* kTileH)
    tiled_cached_halo_kernel(int h, int w, const float* __restrict__ x, float* __restrict__ y) {
  constexpr int S = 2 * R + 1;
  __shared__ float tile[kTileH][kTileW];
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const int i = static_cast<int>(blockIdx.y) * kTileH + ty, j = static_cast<int>(blockIdx.x) * kTileW + tx;
  const bool inside = i < h && j < w;
  tile[ty][tx] = inside ? x[i * w + j] : 0.0f;
  __syncthreads();
  if (!inside) return;
  float acc = 0.0f;
#pragma unroll
  for (int a = 0; a < S; ++a) {
    const int sy = ty + a - R, ii = i + a - R;
#pragma unroll
    for (int b = 0; b < S; ++b) {
      const int sx = tx + b - R, jj = j + b - R;
      float v;
      if (sy >= 0 && sy < kTileH && sx >= 0 && sx < kTileW)
        v = tile[sy][sx];  // core: shared memory (positions past the image hold 0)
      else if (ii >= 0 && ii < h && jj >= 0 && jj < w)
        v = __ldg(&x[ii * w + jj]);  // halo: global memory through the cache
      else
        v = 0.0f;  // outside the image: zero padding
      acc = fmaf(c_mask[a * S + b], v, acc);
    }
  }
  y[i * w + j] = acc;
}

cudaError_t upload_mask(int r, const float* mask, cudaStream_t stream) {
  const int s = 2 * r + 1;
  return cudaMemcpyToSymbolAsync(c_mask, mask, sizeof(float) * s * s, 0, cudaMemcpyDeviceToDevice, stream);
}

enum class Strategy { out, in, cached_halo };

template <Strategy kS>
cudaError_t launch(int h, int w, int r, const float* x, const float* mask, float* y, cudaStream_t stream) {
  if (!detail::valid_single(h, w, r, x, mask, y)) return cudaErrorInvalidValue;
  if (cudaError_t e = upload_mask(r, mask, stream); e != cudaSuccess) return e;
  return detail::dispatch_radius(r, [&](auto rc) {
    constexpr int R = decltype(rc)::value;
    if constexpr (kS == Strategy::in) {
      constexpr int out = kInTile - 2 * R;
      const dim3 grid(ceil_div(w, out), ceil_div(h, out));
      if (grid.y > 65535) return cudaErrorInvalidConfiguration;
      tiled_in_kernel<R><<<grid, dim3(kInTile, kInTile), 0, stream>>>(h, w, x, y);
    } else {
      const dim3 grid(ceil_div(w, kTileW), ceil_div(h, kTileH));
      if (grid.y > 65535) return cudaErrorInvalidConfiguration;
      if constexpr (kS == Strategy::out)
        tiled_out_kernel<R><<<grid, dim3(kTileW, kTileH), 0, stream>>>(h, w, x, y);
      else
        tiled_cached_halo_kernel<R><<<grid, dim3(kTileW, kTileH), 0, stream>>>(h, w, x, y);
    }
    return cudaGetLastError();
  });
}

}  // namespace

cudaError_t tiled_out(int h, int w, int r, const float* x, const float* mask, float* y, cudaStream_t stream) {
  return launch<Strategy::out>(h, w, r, x, mask, y, stream);
}

cudaError_t tiled_in(int h, int w, int r, const float* x, const float* mask, float* y, cudaStream_t stream) {
  return launch<Strategy::in>(h, w, r, x, mask, y, stream);
}

cudaError_t tiled_cached_halo(int h, int w, int r, const float* x, const float* mask, float* y, cudaStream_t stream) {
  return launch<Strategy::cached_halo>(h, w, r, x, mask, y, stream);
}

}  // namespace kernels::conv2d
