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

// The fewest K slices (a power of two up to 8) that give at least two CTAs an SM, while each
// slice keeps at least 8 k steps (256 elements of K).
int gemm_skinny16_splits(int M, int N, int K, int sms) {
  const int row_blocks = (std::max(M, N) + kSkinnyRowsPerBlock - 1) / kSkinnyRowsPerBlock;
  const int steps = (K + kSkinnyStepK - 1) / kSkinnyStepK;
  int splits = 1;
  while (splits < kSkinnyMaxSplits && row_blocks * splits < 2 * sms && steps / (2 * splits) >= 8) splits *= 2;
  return splits;
}

std::string gemm_skinny16_plan(int M, int N, int K, int sms) {
  const int small = std::min(M, N);
  const int row_blocks = (std::max(M, N) + kSkinnyRowsPerBlock - 1) / kSkinnyRowsPerBlock;
  const int splits = gemm_skinny16_splits(M, N, K, sms);
  const int padded = small <= 8 ? 8 : small <= 16 ? 16 : small <= 32 ? 32 : 64;
  const std::string n = std::to_string(splits);
  return "skinny (mma.sync m16n8k16): " + std::to_string(row_blocks) + " blocks of 128 " + (M <= N ? "B" : "A") +
         " rows x " + n + " K slices (clusters of " + n + "), " + (M <= N ? "M = " : "N = ") + std::to_string(small) +
         " padded to " + std::to_string(padded);
}

}  // namespace kernels::gemm
