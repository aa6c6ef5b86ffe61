// The first three rungs of the softmax ladder: naive, smem_max, online.
//   x, y: (rows, cols) row-major f32. Index arithmetic in 64 bits (rows * cols may pass 2^31).
#include <algorithm>
#include <cmath>

#include "softmax/softmax.hpp"
#include "softmax/softmax_common.cuh"

namespace kernels::softmax {
namespace {
using detail::ceil_div;
using detail::MaxSum;

constexpr int kThreads = 256;

// ---- Rung 1, naive: three kernels, a thread per row for the two reductions. ----------
// Each pass reads the whole matrix (3 reads + 1 write) and in the two reductions the 32
// threads of a warp read 32 different rows: no coalescing, a 4-byte access per 32-byte
// sector. The row statistics go through global scratch between launches.
__global__ void naive_row_max(std::int64_t rows, std::int64_t cols, const float* __restrict__ x,
                              float* __restrict__ row_max) {
  const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* xr = x + r * cols;
  float m = -INFINITY;
  for (std::int64_t j = 0; j < cols; ++j) m = fmaxf(m, xr[j]);
  row_max[r] = m;
}

// s_r = sum_j exp(x - m_r): NaN for an all -inf row (exp(-inf - -inf)), as the contract says.
__global__ void naive_row_sum(std::int64_t rows, std::int64_t cols, const float* __restrict__ x,
                              const float* __restrict__ row_max, float* __restrict__ row_sum) {
  const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* xr = x + r * cols;
  const float m = row_max[r];
  float s = 0.0f;
  for (std::int64_t j = 0; j < cols; ++j) s += expf(xr[j] - m);
  row_sum[r] = s;
}

// A thread per element (grid-stride): coalesced.
__global__ void naive_normalize(std::int64_t rows, std::int64_t cols, const float* __restrict__ x,
                                const float* __restrict__ row_max, const float* __restrict__ row_sum,
                                float* __restrict__ y) {
  const std::int64_t total = rows * cols;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const std::int64_t r = i / cols;
    y[i] = expf(x[i] - row_max[r]) / row_sum[r];
  }
}

// ---- Rung 2, smem_max: the A100 slides' shared-memory max reduction. ----------------
// Block (32, 8): threadIdx.y picks one of 8 rows, the 32 threads of that row (one warp)
// stride over its columns, so a warp reads 32 consecutive floats (coalesced, fixing the
// naive rung's access pattern), and one kernel does all three passes (no scratch, one
// launch). Each partial max, then each partial sum, is reduced by a halving tree in
// shared memory red[8][32]. The slides' loop `if (c_block >= stride) continue;` skips the
// __syncthreads() in the loop body for some threads (a barrier not reached by the whole
// block: undefined); here the update is conditional and every thread reaches every barrier.
constexpr int kRowThreads = 32, kRowsPerBlock = 8;

__global__ void __launch_bounds__(kRowThreads * kRowsPerBlock)
    smem_max_kernel(std::int64_t rows, std::int64_t cols, const float* __restrict__ x, float* __restrict__ y) {
  __shared__ float red[kRowsPerBlock][kRowThreads];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * kRowsPerBlock + ty;
  const bool valid = r < rows;  // rows past the end still take part in the barriers
  const float* xr = x + (valid ? r : 0) * cols;

  float m = -INFINITY;
  if (valid)
    for (std::int64_t j = tx; j < cols; j += kRowThreads) m = fmaxf(m, xr[j]);
  red[ty][tx] = m;
  __syncthreads();
  for (int stride = kRowThreads / 2; stride > 0; stride /= 2) {
    if (tx < stride) red[ty][tx] = fmaxf(red[ty][tx], red[ty][tx + stride]);
    __syncthreads();
  }
  const float row_max = red[ty][0];
  __syncthreads();  // everyone has read red[ty][0] before it is overwritten

  float s = 0.0f;
  if (valid)
    for (std::int64_t j = tx; j < cols; j += kRowThreads) s += expf(xr[j] - row_max);
  red[ty][tx] = s;
  __syncthreads();
  for (int stride = kRowThreads / 2; stride > 0; stride /= 2) {
    if (tx < stride) red[ty][tx] += red[ty][tx + stride];
    __syncthreads();
  }
  const float row_sum = red[ty][0];

  if (valid) {
    float* yr = y + r * cols;
    for (std::int64_t j = tx; j < cols; j += kRowThreads) yr[j] = expf(xr[j] - row_max) / row_sum;
  }
}

// ---- Rung 3, online: the running (max, sum) in one pass over the row. ---------------
// Same block shape as smem_max, but each thread keeps the online statistic (max and the
// sum rescaled whenever the max grows), so the row is read twice instead of three times
// (2 reads + 1 write) and one shared-memory tree of (max, sum) pairs replaces two trees.
__global__ void __launch_bounds__(kRowThreads * kRowsPerBlock)
    online_kernel(std::int64_t rows, std::int64_t cols, const float* __restrict__ x, float* __restrict__ y) {
  __shared__ float red_m[kRowsPerBlock][kRowThreads];
  __shared__ float red_s[kRowsPerBlock][kRowThreads];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * kRowsPerBlock + ty;
  const bool valid = r < rows;
  const float* xr = x + (valid ? r : 0) * cols;

  MaxSum a = detail::empty_stat();
  if (valid)
    for (std::int64_t j = tx; j < cols; j += kRowThreads) detail::push(a, xr[j]);
  red_m[ty][tx] = a.m;
  red_s[ty][tx] = a.s;
  __syncthreads();
  for (int stride = kRowThreads / 2; stride > 0; stride /= 2) {
    if (tx < stride) {
      const MaxSum c = detail::combine({red_m[ty][tx], red_s[ty][tx]}, {red_m[ty][tx + stride], red_s[ty][tx + stride]});
      red_m[ty][tx] = c.m;
      red_s[ty][tx] = c.s;
    }
    __syncthreads();
  }
  const MaxSum row{red_m[ty][0], red_s[ty][0]};

  if (valid) {
    float* yr = y + r * cols;
    for (std::int64_t j = tx; j < cols; j += kRowThreads) yr[j] = detail::normalize(xr[j], row);
  }
}

}  // namespace

cudaError_t naive(std::int64_t rows, std::int64_t cols, const float* x, float* y, float* row_max,
                  float* row_sum, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaErrorInvalidValue;
  const auto row_blocks = static_cast<unsigned>(ceil_div(rows, kThreads));
  naive_row_max<<<row_blocks, kThreads, 0, stream>>>(rows, cols, x, row_max);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  naive_row_sum<<<row_blocks, kThreads, 0, stream>>>(rows, cols, x, row_max, row_sum);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>(ceil_div(rows * cols, kThreads), 1 << 20));
  naive_normalize<<<blocks, kThreads, 0, stream>>>(rows, cols, x, row_max, row_sum, y);
  return cudaGetLastError();
}

cudaError_t smem_max(std::int64_t rows, std::int64_t cols, const float* x, float* y, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaErrorInvalidValue;
  const dim3 block(kRowThreads, kRowsPerBlock);
  smem_max_kernel<<<static_cast<unsigned>(ceil_div(rows, kRowsPerBlock)), block, 0, stream>>>(rows, cols, x, y);
  return cudaGetLastError();
}

cudaError_t online(std::int64_t rows, std::int64_t cols, const float* x, float* y, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaErrorInvalidValue;
  const dim3 block(kRowThreads, kRowsPerBlock);
  online_kernel<<<static_cast<unsigned>(ceil_div(rows, kRowsPerBlock)), block, 0, stream>>>(rows, cols, x, y);
  return cudaGetLastError();
}

}  // namespace kernels::softmax
