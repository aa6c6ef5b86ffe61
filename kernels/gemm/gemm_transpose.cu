// FP32 transpose through shared memory (gemm_transpose.hpp).
//
// Tiles of (32, 32): block (32, 8) reads the tile's 32 rows of `in` as 4 passes of 8 rows,
// each warp one 128-byte row (coalesced), into tile[32][33]; then writes the 32 rows of the
// transposed tile the same way. The 33-float row pitch puts tile[x][y] for the 32 lanes
// (x = lane, fixed y) in 32 different banks (bank (33 x + y) % 32 = (x + y) % 32), so the
// column read is conflict-free. Edges: elements outside (rows, cols) are neither read nor
// written. Memory bound: rows * cols * 8 bytes of traffic.
#include <cstddef>

#include "gemm/gemm_transpose.hpp"

namespace kernels::gemm {
namespace {

constexpr int kTile = 32;
constexpr int kRowsPerPass = 8;

__global__ void __launch_bounds__(kTile * kRowsPerPass)
    transpose_kernel(int rows, int cols, const float* __restrict__ in, int ld_in, float* __restrict__ out,
                     int ld_out) {
  __shared__ float tile[kTile][kTile + 1];
  const int c0 = static_cast<int>(blockIdx.x) * kTile;
  const int r0 = static_cast<int>(blockIdx.y) * kTile;
  const int x = static_cast<int>(threadIdx.x);
#pragma unroll
  for (int y = static_cast<int>(threadIdx.y); y < kTile; y += kRowsPerPass) {
    const int r = r0 + y, c = c0 + x;
    if (r < rows && c < cols) tile[y][x] = in[static_cast<std::size_t>(r) * ld_in + c];
  }
  __syncthreads();
#pragma unroll
  for (int y = static_cast<int>(threadIdx.y); y < kTile; y += kRowsPerPass) {
    const int c = c0 + y, r = r0 + x;  // out row c, column r
    if (c < cols && r < rows) out[static_cast<std::size_t>(c) * ld_out + r] = tile[x][y];
  }
}

}  // namespace

cudaError_t gemm_transpose_f32(int rows, int cols, const float* in, int ld_in, float* out, int ld_out,
                               cudaStream_t stream) {
  if (rows < 1 || cols < 1 || ld_in < cols || ld_out < rows || in == nullptr || out == nullptr)
    return cudaErrorInvalidValue;
  const unsigned gy = static_cast<unsigned>((rows + kTile - 1) / kTile);
  if (gy > 65535) return cudaErrorInvalidConfiguration;
  const dim3 grid(static_cast<unsigned>((cols + kTile - 1) / kTile), gy);
  transpose_kernel<<<grid, dim3(kTile, kRowsPerPass), 0, stream>>>(rows, cols, in, ld_in, out, ld_out);
  return cudaGetLastError();
}

}  // namespace kernels::gemm
