// The two untiled single-channel kernels: a thread per output pixel, every input read from
// global memory (through L1/L2). They differ only in where the mask lives.
//   block 32 x 8 threads (x along W: a warp reads 32 consecutive pixels of a row), grid
//   ceil(W / 32) x ceil(H / 8); threads past the image return at once.
//   Per output: S^2 multiply-adds, S^2 input loads, S^2 mask loads (naive: global memory,
//   the same address in every lane; constant_mask: the constant cache, one broadcast).
#include "conv2d/conv2d_common.cuh"

namespace kernels::conv2d {

namespace {

using detail::ceil_div;

constexpr int kBlockX = 32, kBlockY = 8;

// The mask for constant_mask: (2 kMaxRadius + 1)^2 floats, the first S^2 used.
__constant__ float c_mask[(2 * kMaxRadius + 1) * (2 * kMaxRadius + 1)];

// y[i][j] = sum_{a,b} mask[a][b] x[i + a - R][j + b - R], zero outside the image.
// kConst: the mask from c_mask, else from `mask` in global memory.
template <int R, bool kConst>
__global__ void __launch_bounds__(kBlockX* kBlockY)
    direct_kernel(int h, int w, const float* __restrict__ x, const float* __restrict__ mask, float* __restrict__ y) {
  constexpr int S = 2 * R + 1;
  const int j = static_cast<int>(blockIdx.x) * kBlockX + static_cast<int>(threadIdx.x);
  const int i = static_cast<int>(blockIdx.y) * kBlockY + static_cast<int>(threadIdx.y);
  if (i >= h || j >= w) return;
  float acc = 0.0f;
#pragma unroll
  for (int a = 0; a < S; ++a) {
    const int ii = i + a - R;
    if (ii < 0 || ii >= h) continue;  // zero padding: the row contributes nothing
#pragma unroll
    for (int b = 0; b < S; ++b) {
      const int jj = j + b - R;
      if (jj < 0 || jj >= w) continue;
      const float m = kConst ? c_mask[a * S + b] : mask[a * S + b];
      acc = fmaf(m, x[ii * w + jj], acc);
    }
  }
  y[i * w + j] = acc;
}

template <bool kConst>
cudaError_t launch(int h, int w, int r, const float* x, const float* mask, float* y, cudaStream_t stream) {
  if (!detail::valid_single(h, w, r, x, mask, y)) return cudaErrorInvalidValue;
  if (kConst) {
    const int s = 2 * r + 1;
    // The mask operand is in device memory: copy it into the constant bank on the stream.
    if (cudaError_t e =
            cudaMemcpyToSymbolAsync(c_mask, mask, sizeof(float) * s * s, 0, cudaMemcpyDeviceToDevice, stream);
        e != cudaSuccess)
      return e;
  }
  const dim3 block(kBlockX, kBlockY), grid(ceil_div(w, kBlockX), ceil_div(h, kBlockY));
  if (grid.y > 65535) return cudaErrorInvalidConfiguration;
  return detail::dispatch_radius(r, [&](auto rc) {
    direct_kernel<decltype(rc)::value, kConst><<<grid, block, 0, stream>>>(h, w, x, mask, y);
    return cudaGetLastError();
  });
}

}  // namespace

cudaError_t naive(int h, int w, int r, const float* x, const float* mask, float* y, cudaStream_t stream) {
  return launch<false>(h, w, r, x, mask, y, stream);
}

cudaError_t constant_mask(int h, int w, int r, const float* x, const float* mask, float* y, cudaStream_t stream) {
  return launch<true>(h, w, r, x, mask, y, stream);
}

}  // namespace kernels::conv2d
