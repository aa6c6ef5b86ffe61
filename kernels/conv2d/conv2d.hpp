#pragma once
// 2D convolution (as in CNNs: cross-correlation, the mask is not flipped), f32, stride 1,
// "same" output size, ZERO PADDING: input positions outside the image count as 0.
//
// Single channel (the course notes' form), mask radius r in 1..4, S = 2r + 1:
//   x (H, W), mask (S, S), y (H, W)
//   y[i][j] = sum_{a,b in 0..S-1} mask[a][b] * x[i + a - r][j + b - r]
// The ladder:
//   naive              a thread per output, mask read from global memory
//   constant_mask      the same, mask in __constant__ memory (one broadcast per warp)
//   tiled_out          strategy 1: the block covers the output tile; the input tile with
//                      its halo is loaded into shared memory (some threads load more)
//   tiled_in           strategy 2: the block covers the input tile (halo included), one
//                      load per thread; threads of the halo ring idle in the output step
//   tiled_cached_halo  strategy 3: the block covers the output tile; only the core goes to
//                      shared memory, halo values are read from global memory (L1/L2)
// The tiled kernels are register-blocked (each thread computes 4 consecutive outputs of a
// row, strategies 1 and 3 a 4 x 4 patch, stored as 16-byte words; loads are 16-byte words
// where W % 4 == 0); conv2d_tiled.cu gives the tile shapes.
// The tiled kernels take the mask from constant memory too (as the notes do). The mask
// operand lives in device memory; every launch copies it to the constant bank first
// (cudaMemcpyToSymbolAsync, device to device, on the stream): that copy is in the timing.
// The constant bank is one per library: two concurrent launches on different streams with
// different masks would race (the harness runs one stream).
//
// Multi-channel layer form (a CNN layer), same padding and stride 1:
//   x (N, C, H, W), w (K, C, S, S), y (N, K, H, W)
//   y[n][k][i][j] = sum_{c, a, b} w[k][c][a][b] * x[n][c][i + a - r][j + b - r]
//   layer_naive   a thread per output element
//   layer_tiled   input tile of a chunk of channels in shared memory, 32 output channels
//                 per block, 4 pixels x 8 channels per thread in registers; the filters are
//                 first transposed to (C, S, S, K) in a scratch buffer (layer_tiled_scratch)
//
// Every launch function checks its arguments (cudaErrorInvalidValue) and returns the
// launch status; none allocates.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace kernels::conv2d {

inline constexpr int kMaxRadius = 4;

// Single channel: x, mask, y are device pointers (host pointers for cpu).
cudaError_t naive(int h, int w, int r, const float* x, const float* mask, float* y, cudaStream_t stream);
cudaError_t constant_mask(int h, int w, int r, const float* x, const float* mask, float* y, cudaStream_t stream);
cudaError_t tiled_out(int h, int w, int r, const float* x, const float* mask, float* y, cudaStream_t stream);
cudaError_t tiled_in(int h, int w, int r, const float* x, const float* mask, float* y, cudaStream_t stream);
cudaError_t tiled_cached_halo(int h, int w, int r, const float* x, const float* mask, float* y, cudaStream_t stream);

// The reference on the host: double accumulation, rounded to f32 once.
void cpu(int h, int w, int r, const float* x, const float* mask, float* y);

// Layer form. Sizes: n, c, k >= 1, h, w >= 1, r in 1..4; every tensor under 2^31 elements.
struct LayerShape {
  int n, c, h, w, k, r;
};
cudaError_t layer_naive(const LayerShape& s, const float* x, const float* filters, float* y, cudaStream_t stream);
// Scratch bytes layer_tiled needs (the transposed filters: K * C * S * S floats).
std::size_t layer_tiled_scratch(const LayerShape& s);
cudaError_t layer_tiled(const LayerShape& s, const float* x, const float* filters, float* y, float* scratch,
                        cudaStream_t stream);
void layer_cpu(const LayerShape& s, const float* x, const float* filters, float* y);

}  // namespace kernels::conv2d
