#pragma once
// Kernels that measure a device's roofs, and a cache evictor:
//   copy:  out[i] = in[i] with 16-byte accesses: DRAM bandwidth (bytes read + written)
//   fma:   kFmaChains independent FFMA chains per thread: FP32 throughput, and an exact,
//          known number of FFMA thread instructions (fma_count) for counter tests
//   read:  reads a buffer (evicting the L2 without leaving dirty lines behind)
// Every launch is asynchronous on `stream` and returns cudaGetLastError() after it (or
// cudaErrorInvalidValue for bad arguments, before launching anything).
#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace harness::peaks {

// out[i] = in[i] for i < n. When both pointers are 16-byte aligned, a float4 kernel moves
// n / 4 float4s and, if n % 4 != 0, a second (scalar) kernel copies the tail: two kernels.
cudaError_t copy(const float* in, float* out, std::size_t n, cudaStream_t stream);

inline constexpr int kFmaChains = 8;

struct FmaShape {
  int blocks = 1;
  int threads = 256;      // per block
  int iterations = 1024;  // per thread, each kFmaChains FFMAs
};

// FFMA thread instructions one fma() launch executes (exactly).
inline std::uint64_t fma_count(const FmaShape& s) {
  return static_cast<std::uint64_t>(s.blocks) * static_cast<std::uint64_t>(s.threads) *
         static_cast<std::uint64_t>(s.iterations) * kFmaChains;
}

// Each thread runs kFmaChains chains x = fmaf(x, a, b) for `iterations` steps and writes
// their sum to out[thread] (blocks * threads floats).
cudaError_t fma(float* out, FmaShape shape, float a, float b, cudaStream_t stream);

// Reads in[0, n) and writes one float to *sink only if the sum is exactly `never`
// (so the reads cannot be optimized away and nothing else is written).
cudaError_t read(const float* in, std::size_t n, float never, float* sink, cudaStream_t stream);

}  // namespace harness::peaks
