// The last two hand-written rungs of the softmax ladder: warp_per_row and block_per_row.
//   x, y: (rows, cols) row-major f32. Rows are read as float4 when every row starts on a
//   16-byte boundary (cols % 4 == 0 and both pointers 16-byte aligned), else as floats.
#include <cstdint>

#include "softmax/softmax.hpp"
#include "softmax/softmax_common.cuh"

namespace kernels::softmax {
namespace {
using detail::ceil_div;
using detail::MaxSum;

// One thread's share of a row: elements lane, lane + step, ... (step = threads per row),
// in float4 units when kVec. Returns the thread's online statistic.
template <bool kVec>
__device__ __forceinline__ MaxSum row_stat(const float* __restrict__ xr, std::int64_t cols, int lane, int step) {
  MaxSum a = detail::empty_stat();
  if constexpr (kVec) {
    const auto* x4 = reinterpret_cast<const float4*>(xr);
    for (std::int64_t j = lane; j < cols / 4; j += step) {
      const float4 v = x4[j];
      detail::push(a, v.x);
      detail::push(a, v.y);
      detail::push(a, v.z);
      detail::push(a, v.w);
    }
  } else {
    for (std::int64_t j = lane; j < cols; j += step) detail::push(a, xr[j]);
  }
  return a;
}

template <bool kVec>
__device__ __forceinline__ void row_write(const float* __restrict__ xr, float* __restrict__ yr, std::int64_t cols,
                                          MaxSum row, int lane, int step) {
  if constexpr (kVec) {
    const auto* x4 = reinterpret_cast<const float4*>(xr);
    auto* y4 = reinterpret_cast<float4*>(yr);
    for (std::int64_t j = lane; j < cols / 4; j += step) {
      const float4 v = x4[j];
      y4[j] = make_float4(detail::normalize(v.x, row), detail::normalize(v.y, row), detail::normalize(v.z, row),
                          detail::normalize(v.w, row));
    }
  } else {
    for (std::int64_t j = lane; j < cols; j += step) yr[j] = detail::normalize(xr[j], row);
  }
}

// ---- Rung 4, warp_per_row ----------------------------------------------------------
// Block of 256 threads = 8 warps, one row per warp. Over `online` it drops shared memory
// and every __syncthreads(): the 32 lanes' statistics meet in a 5-step shuffle butterfly,
// after which every lane holds the row's (max, sum); loads are 16 bytes where aligned.
// A warp whose row is past the end returns as a whole (no block barrier follows).
constexpr int kWarpRowsPerBlock = 8;

template <bool kVec>
__global__ void __launch_bounds__(32 * kWarpRowsPerBlock)
    warp_per_row_kernel(std::int64_t rows, std::int64_t cols, const float* __restrict__ x, float* __restrict__ y) {
  const int lane = threadIdx.x % 32;
  const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * kWarpRowsPerBlock + threadIdx.x / 32;
  if (r >= rows) return;
  const MaxSum row = detail::warp_combine(row_stat<kVec>(x + r * cols, cols, lane, 32));
  row_write<kVec>(x + r * cols, y + r * cols, cols, row, lane, 32);
}

// ---- Rung 5, block_per_row (long rows) ----------------------------------------------
// One row per block of 256 threads: a 65536-column row is 256 elements per thread instead
// of 2048 per lane of a single warp, so many more loads are in flight per row. Statistics:
// shuffles within each warp, the 8 warp results through shared memory, a final shuffle in
// warp 0, broadcast through shared memory. The second read of the row (normalize) mostly
// hits L2: a row is at most 256 KiB. Every thread reaches both barriers (no early return).
constexpr int kBlockThreads = 256, kWarps = kBlockThreads / 32;

template <bool kVec>
__global__ void __launch_bounds__(kBlockThreads)
    block_per_row_kernel(std::int64_t cols, const float* __restrict__ x, float* __restrict__ y) {
  __shared__ float warp_m[kWarps], warp_s[kWarps];
  __shared__ float row_m, row_s;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const std::int64_t r = blockIdx.x;
  const float* xr = x + r * cols;

  const MaxSum w = detail::warp_combine(row_stat<kVec>(xr, cols, tid, kBlockThreads));
  if (lane == 0) {
    warp_m[warp] = w.m;
    warp_s[warp] = w.s;
  }
  __syncthreads();
  if (warp == 0) {
    MaxSum a = lane < kWarps ? MaxSum{warp_m[lane], warp_s[lane]} : detail::empty_stat();
    a = detail::warp_combine(a);
    if (lane == 0) {
      row_m = a.m;
      row_s = a.s;
    }
  }
  __syncthreads();
  row_write<kVec>(xr, y + r * cols, cols, MaxSum{row_m, row_s}, tid, kBlockThreads);
}

bool vectorizable(std::int64_t cols, const float* x, const float* y) {
  return cols % 4 == 0 && ((reinterpret_cast<std::uintptr_t>(x) | reinterpret_cast<std::uintptr_t>(y)) % 16) == 0;
}

}  // namespace

cudaError_t warp_per_row(std::int64_t rows, std::int64_t cols, const float* x, float* y, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaErrorInvalidValue;
  const auto blocks = static_cast<unsigned>(ceil_div(rows, kWarpRowsPerBlock));
  if (vectorizable(cols, x, y))
    warp_per_row_kernel<true><<<blocks, 32 * kWarpRowsPerBlock, 0, stream>>>(rows, cols, x, y);
  else
    warp_per_row_kernel<false><<<blocks, 32 * kWarpRowsPerBlock, 0, stream>>>(rows, cols, x, y);
  return cudaGetLastError();
}

cudaError_t block_per_row(std::int64_t rows, std::int64_t cols, const float* x, float* y, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0 || rows > 0x7FFFFFFF) return cudaErrorInvalidValue;
  const auto blocks = static_cast<unsigned>(rows);
  if (vectorizable(cols, x, y))
    block_per_row_kernel<true><<<blocks, kBlockThreads, 0, stream>>>(cols, x, y);
  else
    block_per_row_kernel<false><<<blocks, kBlockThreads, 0, stream>>>(cols, x, y);
  return cudaGetLastError();
}

}  // namespace kernels::softmax
