// LayerNorm with bf16 activations and float statistics / parameters (nn_bf16.hpp).
//
// Forward and dx: one warp per row, 8 rows per 256-thread block; each lane strides over the
// row's columns (lane, lane + 32, ...), so a warp reads 32 consecutive elements per step.
// Three passes over the row (sum -> mean, centred squares -> rstd, then the output; or in
// the backward the two row sums, then dx); the re-reads hit L1/L2. All math in float.
// dgamma / dbeta: (32, 8) threads per block of 32 columns, thread (tx, ty) sums rows ty,
// ty + 8, ... of its column, the 8 partials are added in a fixed order (deterministic).
#include <cstddef>

#include "nn/nn_bf16.hpp"
#include "nn/nn_common.cuh"

namespace kernels::nn {
namespace {
using namespace detail;

constexpr int kRowsPerBlock = kThreads / 32;
constexpr int kColTile = 32, kColRows = 8;

__device__ __forceinline__ float f(bf16 v) { return __bfloat162float(v); }

__global__ void ln_forward_kernel(const bf16* x, const float* gamma, const float* beta, bf16* y, float* mean_out,
                                  float* rstd_out, int rows, int cols, float eps) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int row = static_cast<int>(blockIdx.x) * kRowsPerBlock + (static_cast<int>(threadIdx.x) >> 5);
  if (row >= rows) return;
  const bf16* xr = x + static_cast<std::size_t>(row) * cols;
  float s = 0.f;
  for (int c = lane; c < cols; c += 32) s += f(xr[c]);
  const float mean = arch::warp_sum(s) / static_cast<float>(cols);
  float q = 0.f;
  for (int c = lane; c < cols; c += 32) {
    const float d = f(xr[c]) - mean;
    q += d * d;
  }
  const float rstd = rsqrtf(arch::warp_sum(q) / static_cast<float>(cols) + eps);
  bf16* yr = y + static_cast<std::size_t>(row) * cols;
  for (int c = lane; c < cols; c += 32) yr[c] = __float2bfloat16_rn((f(xr[c]) - mean) * rstd * gamma[c] + beta[c]);
  if (lane == 0 && mean_out != nullptr) {
    mean_out[row] = mean;
    rstd_out[row] = rstd;
  }
}

__global__ void ln_dx_kernel(const bf16* x, const float* gamma, const float* mean, const float* rstd, const bf16* dy,
                             bf16* dx, int rows, int cols) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int row = static_cast<int>(blockIdx.x) * kRowsPerBlock + (static_cast<int>(threadIdx.x) >> 5);
  if (row >= rows) return;
  const std::size_t base = static_cast<std::size_t>(row) * cols;
  const float mu = mean[row], rs = rstd[row];
  float sg = 0.f, sgx = 0.f;
  for (int c = lane; c < cols; c += 32) {
    const float g = f(dy[base + c]) * gamma[c];
    sg += g;
    sgx += g * (f(x[base + c]) - mu) * rs;
  }
  const float inv = 1.f / static_cast<float>(cols);
  const float mg = arch::warp_sum(sg) * inv, mgx = arch::warp_sum(sgx) * inv;
  for (int c = lane; c < cols; c += 32) {
    const float g = f(dy[base + c]) * gamma[c];
    const float xhat = (f(x[base + c]) - mu) * rs;
    dx[base + c] = __float2bfloat16_rn(rs * (g - mg - xhat * mgx));
  }
}

__global__ void ln_param_grad_kernel(const bf16* x, const float* mean, const float* rstd, const bf16* dy,
                                     float* dgamma, float* dbeta, int rows, int cols) {
  __shared__ float sg[kColRows][kColTile + 1], sb[kColRows][kColTile + 1];
  const int c = static_cast<int>(blockIdx.x) * kColTile + static_cast<int>(threadIdx.x);
  float ag = 0.f, ab = 0.f;
  if (c < cols)
    for (int r = static_cast<int>(threadIdx.y); r < rows; r += kColRows) {
      const std::size_t i = static_cast<std::size_t>(r) * cols + c;
      const float d = f(dy[i]);
      ag += d * (f(x[i]) - mean[r]) * rstd[r];
      ab += d;
    }
  sg[threadIdx.y][threadIdx.x] = ag;
  sb[threadIdx.y][threadIdx.x] = ab;
  __syncthreads();
  if (threadIdx.y == 0 && c < cols) {
    float tg = 0.f, tb = 0.f;
    for (int k = 0; k < kColRows; ++k) {
      tg += sg[k][threadIdx.x];
      tb += sb[k][threadIdx.x];
    }
    dgamma[c] = tg;
    dbeta[c] = tb;
  }
}

}  // namespace

cudaError_t layernorm_forward_bf16(const bf16* x, const float* gamma, const float* beta, bf16* y, float* mean,
                                   float* rstd, int rows, int cols, float eps, cudaStream_t s) {
  if (rows < 0 || cols < 1 || (mean == nullptr) != (rstd == nullptr)) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  if (x == nullptr || gamma == nullptr || beta == nullptr || y == nullptr) return cudaErrorInvalidValue;
  const unsigned blocks = static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
  ln_forward_kernel<<<blocks, kThreads, 0, s>>>(x, gamma, beta, y, mean, rstd, rows, cols, eps);
  return cudaGetLastError();
}

cudaError_t layernorm_backward_dx_bf16(const bf16* x, const float* gamma, const float* mean, const float* rstd,
                                       const bf16* dy, bf16* dx, int rows, int cols, cudaStream_t s) {
  if (rows < 0 || cols < 1) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  if (x == nullptr || gamma == nullptr || mean == nullptr || rstd == nullptr || dy == nullptr || dx == nullptr)
    return cudaErrorInvalidValue;
  const unsigned blocks = static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
  ln_dx_kernel<<<blocks, kThreads, 0, s>>>(x, gamma, mean, rstd, dy, dx, rows, cols);
  return cudaGetLastError();
}

cudaError_t layernorm_backward_bf16(const bf16* x, const float* gamma, const float* mean, const float* rstd,
                                    const bf16* dy, bf16* dx, float* dgamma, float* dbeta, int rows, int cols,
                                    cudaStream_t s) {
  if (rows < 0 || cols < 1 || gamma == nullptr || dgamma == nullptr || dbeta == nullptr) return cudaErrorInvalidValue;
  if (rows > 0 && (x == nullptr || mean == nullptr || rstd == nullptr || dy == nullptr || dx == nullptr))
    return cudaErrorInvalidValue;
  if (const cudaError_t e = layernorm_backward_dx_bf16(x, gamma, mean, rstd, dy, dx, rows, cols, s); e != cudaSuccess)
    return e;
  const unsigned col_blocks = static_cast<unsigned>((cols + kColTile - 1) / kColTile);
  ln_param_grad_kernel<<<col_blocks, dim3(kColTile, kColRows), 0, s>>>(x, mean, rstd, dy, dgamma, dbeta, rows, cols);
  return cudaGetLastError();
}

}  // namespace kernels::nn
