// The sm_90 tensor-core roof: wgmma m64n256kK with both operands in shared memory.
// CTA = 2 warpgroups (256 threads), one CTA an SM (40 KB of shared memory, 128 f32
// accumulators a thread). Shared memory: A (64 rows x 128 bytes) at 0, B (256 rows x 128
// bytes) at 8 KB, both in the 128-byte swizzle layout the descriptors name (the values
// are arbitrary nonzero numbers, so their placement does not matter). A loop step issues
// the 4 K slices of the 128-byte rows (k16 for 16-bit, k8 tf32, k32 fp8) into one
// accumulator and commits them; one group stays in flight while the next is issued, as a
// GEMM main loop keeps it. FLOPs a step: 4 x 2 x 64 x 256 x K a warpgroup.
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "arch/sm90_tma.cuh"
#include "arch/sm90_wgmma.cuh"
#include "arch/smem.cuh"
#include "peaks/tensor_peak_launch.hpp"

namespace kernels::peaks {
namespace {

constexpr int kThreads = 256;
constexpr int kABytes = 64 * 128, kBBytes = 256 * 128;

// A nonzero, finite pattern for byte i of the operands of type T: small magnitudes of
// either sign, so that products and sums stay finite over any number of steps.
template <class T>
__device__ std::uint32_t operand_word(std::uint32_t i) {
  const std::uint32_t h = (i * 2654435761u) >> 7;
  if constexpr (sizeof(T) == 4) {  // tf32 in f32 storage: +-(1 + h/2^23) * 2^-4
    return 0x3d800000u | (h & 0x007fffffu) | ((h & 1u) << 31);
  } else if constexpr (sizeof(T) == 2) {  // two bf16 / f16 of magnitude ~2^-4
    const std::uint32_t lo = std::is_same_v<T, __half> ? 0x2c00u : 0x3d80u;
    return (lo | (h & 0x3fu) | ((h & 1u) << 15)) | ((lo | ((h >> 6) & 0x3fu) | ((h & 2u) << 14)) << 16);
  } else {  // four e4m3 of magnitude ~2^-4 (exponent field 3)
    const std::uint32_t b = 0x18u | (h & 7u);
    return b | ((b | 0x80u) << 8) | (b << 16) | ((b | 0x80u) << 24);
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads, 1) wgmma_peak(int iterations, float* __restrict__ sink) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  __shared__ alignas(1024) std::uint8_t smem[kABytes + kBBytes];
  const std::uint32_t base = arch::smem_u32(smem);
  for (std::uint32_t w = threadIdx.x; w < (kABytes + kBBytes) / 4; w += kThreads)
    arch::st_shared_b32(base + 4 * w, operand_word<T>(w));
  arch::fence_proxy_async();  // generic-proxy stores before the async proxy's reads
  __syncthreads();
  float acc[128];
#pragma unroll
  for (int j = 0; j < 128; ++j) acc[j] = 0.0f;
  const std::uint64_t da = arch::make_smem_desc(base, 16, 1024), db = arch::make_smem_desc(base + kABytes, 16, 1024);
  for (int it = 0; it < iterations; ++it) {
    arch::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) arch::wgmma_ss<T, 256, 0, 0>(acc, da + 2 * kk, db + 2 * kk, 1);  // +32 bytes
    arch::wgmma_commit();
    arch::wgmma_wait<1>();
  }
  arch::wgmma_wait<0>();
  arch::fence_regs(acc);
  float sum = 0.0f;
#pragma unroll
  for (int j = 0; j < 128; ++j) sum += acc[j];
  if (threadIdx.x == 0) sink[blockIdx.x] = sum;
#endif
}

template <class T>
cudaError_t launch(int blocks, int iterations, float* sink, cudaStream_t stream) {
  wgmma_peak<T><<<blocks, kThreads, 0, stream>>>(iterations, sink);
  return cudaGetLastError();
}

}  // namespace

double wgmma_peak_flops(TensorType t, int blocks, int iterations) {
  const double k = t == TensorType::tf32 ? 8 : t == TensorType::fp8_e4m3 ? 32 : 16;
  return static_cast<double>(blocks) * iterations * (kThreads / 128) * 4 * 2.0 * 64 * 256 * k;
}

cudaError_t wgmma_peak_launch(TensorType t, int blocks, int iterations, float* sink, cudaStream_t stream) {
  switch (t) {
    case TensorType::tf32: return launch<float>(blocks, iterations, sink, stream);
    case TensorType::bf16: return launch<__nv_bfloat16>(blocks, iterations, sink, stream);
    case TensorType::f16: return launch<__half>(blocks, iterations, sink, stream);
    case TensorType::fp8_e4m3: return launch<__nv_fp8_e4m3>(blocks, iterations, sink, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace kernels::peaks
