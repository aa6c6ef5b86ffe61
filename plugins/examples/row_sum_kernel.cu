#include "row_sum_kernel.cuh"

namespace examples {
namespace {

constexpr int kWarpsPerBlock = 8;

__global__ void row_sum_kernel(int rows, int cols, const std::int32_t* __restrict__ xi,
                               const __nv_bfloat16* __restrict__ xb, std::int32_t* __restrict__ isum,
                               __nv_bfloat16* __restrict__ bsum) {
  const int row = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const std::size_t base = static_cast<std::size_t>(row) * cols;
  std::uint32_t si = 0;  // unsigned: wrap-around is defined and matches the host's
  float sb = 0.0f;
  for (int c = lane; c < cols; c += 32) {
    si += static_cast<std::uint32_t>(xi[base + c]);
    sb += __bfloat162float(xb[base + c]);
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    si += __shfl_down_sync(0xFFFFFFFFu, si, offset);
    sb += __shfl_down_sync(0xFFFFFFFFu, sb, offset);
  }
  if (lane == 0) {
    isum[row] = static_cast<std::int32_t>(si);
    bsum[row] = __float2bfloat16_rn(sb);
  }
}

}  // namespace

cudaError_t row_sum_cuda(int rows, int cols, const std::int32_t* xi, const __nv_bfloat16* xb, std::int32_t* isum,
                         __nv_bfloat16* bsum, cudaStream_t stream) {
  if (rows < 1 || cols < 1) return cudaErrorInvalidValue;
  const int blocks = (rows + kWarpsPerBlock - 1) / kWarpsPerBlock;
  row_sum_kernel<<<blocks, kWarpsPerBlock * 32, 0, stream>>>(rows, cols, xi, xb, isum, bsum);
  return cudaGetLastError();
}

}  // namespace examples
