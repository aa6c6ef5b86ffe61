// Host rules of the skinny 16-bit GEMM (gemm_skinny16.hpp): which shapes and devices it
// takes, how it splits K, the plan line of a result's config. No device code: these answer on
// a machine without a GPU (device < 0), and gemm_skinny16.cu launches by them.
#include <algorithm>
#include <string>

#include <cuda_runtime_api.h>

#include "gemm/gemm_skinny16.hpp"

namespace kernels::gemm {

const char* gemm_skinny16_unsupported(int device, Layout layout, int M, int N, int K) {
  if (layout != Layout::nt) return "skinny: layout nt only (A stored (M, K), B stored (N, K): both K contiguous)";
  if (std::min(M, N) > kSkinnyMaxSmall) return "skinny: min(M, N) must be <= 64";
  if (K % 8 != 0) return "skinny: K % 8 == 0 needed (16-byte rows)";
  if ((std::max(M, N) + kSkinnyRowsPerBlock - 1) / kSkinnyRowsPerBlock > kSkinnyMaxRowBlocks)
    return "skinny: max(M, N) must be <= 65535 * 128";
  if (device < 0) return nullptr;
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return "no usable CUDA device";
  }
  if (major != 9 || minor != 0) return "skinny: Hopper (compute capability 9.0) only: sm_90a machine code, clusters";
  return nullptr;
}

bool gemm_skinny16_x_in_smem(int padded_small, int K, int splits) {
  const int steps = (K + kSkinnyStepK - 1) / kSkinnyStepK;
  const int per_split = (steps + splits - 1) / splits;
  return static_cast<std::size_t>(padded_small) * skinny_x_row_bytes(per_split) <= kSkinnyMaxXSmemBytes;
}

// Each slice keeps at least 8 k steps (256 elements of K). At a small side of 8 rows (3 CTAs an
// SM): the most slices, up to 8, whose CTAs are all resident at once (row blocks x slices <=
// 3 x SMs: 112 row blocks -> 3 slices, 32 -> 8). Above: the fewest slices (a power of two up to
// 8) that give at least two CTAs an SM. Then more, up to 8, until the small operand's slice
// fits in shared memory.
int gemm_skinny16_splits(int M, int N, int K, int sms) {
  const int row_blocks = (std::max(M, N) + kSkinnyRowsPerBlock - 1) / kSkinnyRowsPerBlock;
  const int steps = (K + kSkinnyStepK - 1) / kSkinnyStepK;
  const int padded = skinny_padded_small(std::min(M, N));
  const int most = std::max(1, std::min(kSkinnyMaxSplits, steps / 8));
  int splits = 1;
  if (skinny_three_ctas(padded)) {
    splits = std::clamp(kSkinnyCtasPerSmAt8Rows * sms / row_blocks, 1, most);
  } else {
    while (splits < kSkinnyMaxSplits && row_blocks * splits < 2 * sms && steps / (2 * splits) >= 8) splits *= 2;
  }
  while (splits < kSkinnyMaxSplits && !gemm_skinny16_x_in_smem(padded, K, splits))
    splits = std::min(2 * splits, kSkinnyMaxSplits);
  return splits;
}

bool gemm_skinny16_preferred(int M, int N) {
  if (M <= N) return M <= 8 || (M <= 16 && N <= 8192);
  return N <= 32;
}

std::size_t skinny16_smem_bytes(int padded_small, int steps_per_split, bool x_shared) {
  const std::size_t partial = static_cast<std::size_t>(kSkinnyRowsPerBlock) * (padded_small + 4) * sizeof(float);
  const std::size_t x = x_shared ? static_cast<std::size_t>(padded_small) * skinny_x_row_bytes(steps_per_split) : 0;
  return std::max(partial, x);
}

std::string gemm_skinny16_plan(int M, int N, int K, int sms) {
  const int small = std::min(M, N);
  const int row_blocks = (std::max(M, N) + kSkinnyRowsPerBlock - 1) / kSkinnyRowsPerBlock;
  const int splits = gemm_skinny16_splits(M, N, K, sms);
  const int padded = skinny_padded_small(small);
  const std::string n = std::to_string(splits);
  return "skinny (mma.sync m16n8k16): " + std::to_string(row_blocks) + " blocks of 128 " + (M <= N ? "B" : "A") +
         " rows x " + n + " K slices (clusters of " + n + "), " + (M <= N ? "M = " : "N = ") + std::to_string(small) +
         " padded to " + std::to_string(padded) +
         (gemm_skinny16_x_in_smem(padded, K, splits) ? ", its slice in shared memory" : ", read from L1/L2");
}

}  // namespace kernels::gemm
