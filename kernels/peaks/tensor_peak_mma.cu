// The sm_80-89 tensor-core roof: mma.sync in registers. CTA = 8 warps; each warp keeps
// kChains independent m16n8 accumulators (so that consecutive mmas do not wait on each
// other) and multiplies the same A and B fragments into them every step. FLOPs a step:
// kChains x 2 x 16 x 8 x K a warp (K = 16 for bf16 / f16, 8 for tf32).
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "arch/sm80_mma.cuh"
#include "peaks/tensor_peak_launch.hpp"

namespace kernels::peaks {
namespace {

constexpr int kThreads = 256;
constexpr int kChains = 8;

template <class T>
__global__ void __launch_bounds__(kThreads) mma_peak(int iterations, float* __restrict__ sink) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 800)
  // Nonzero operands of magnitude ~2^-4 (bf16 0x3d80, f16 0x2c00, tf32 0x3d800000), varied per lane.
  const std::uint32_t lane = threadIdx.x % 32;
  const std::uint32_t h16 = std::is_same_v<T, __half> ? 0x2c00u : 0x3d80u;
  const std::uint32_t w16 = (h16 | lane) | ((h16 | (31 - lane)) << 16);
  const std::uint32_t w32 = 0x3d800000u | (lane << 13);
  const std::uint32_t w = std::is_same_v<T, float> ? w32 : w16;
  const std::uint32_t a[4] = {w, w ^ 0x80008000u, w, w ^ 0x80008000u};
  float c[kChains][4] = {};
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int ch = 0; ch < kChains; ++ch) {
      if constexpr (std::is_same_v<T, float>)
        arch::mma_m16n8k8_tf32(c[ch], a[0], a[1], a[2], a[3], w, w);
      else
        arch::mma_m16n8k16<T>(c[ch], a, w, w);
    }
  }
  float sum = 0.0f;
#pragma unroll
  for (int ch = 0; ch < kChains; ++ch) sum += c[ch][0] + c[ch][1] + c[ch][2] + c[ch][3];
  if (threadIdx.x == 0) sink[blockIdx.x] = sum;
#endif
}

template <class T>
cudaError_t launch(int blocks, int iterations, float* sink, cudaStream_t stream) {
  mma_peak<T><<<blocks, kThreads, 0, stream>>>(iterations, sink);
  return cudaGetLastError();
}

}  // namespace

double mma_peak_flops(TensorType t, int blocks, int iterations) {
  const double k = t == TensorType::tf32 ? 8 : 16;
  return static_cast<double>(blocks) * iterations * (kThreads / 32) * kChains * 2.0 * 16 * 8 * k;
}

cudaError_t mma_peak_launch(TensorType t, int blocks, int iterations, float* sink, cudaStream_t stream) {
  switch (t) {
    case TensorType::tf32: return launch<float>(blocks, iterations, sink, stream);
    case TensorType::bf16: return launch<__nv_bfloat16>(blocks, iterations, sink, stream);
    case TensorType::f16: return launch<__half>(blocks, iterations, sink, stream);
    case TensorType::fp8_e4m3: return cudaErrorNotSupported;  // mma.sync e4m3 is sm_89 only: not written
  }
  return cudaErrorInvalidValue;
}

}  // namespace kernels::peaks
