#include "cheat_kernels.cuh"

namespace cheat {
namespace {

__global__ void double_kernel(const float* x, float* out, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = 2.0f * x[i];
}

__global__ void double_slow_kernel(const float* x, float* out, std::size_t n, long long spin_ns) {
  // %globaltimer is in nanoseconds on every GPU since Pascal (clock64 counts cycles).
  unsigned long long t0 = 0, t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < static_cast<unsigned long long>(spin_ns));
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = 2.0f * x[i];
}

unsigned blocks(std::size_t n) { return static_cast<unsigned>((n + 255) / 256); }

}  // namespace

cudaError_t launch_double(const float* x, float* out, std::size_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  double_kernel<<<blocks(n), 256, 0, s>>>(x, out, n);
  return cudaGetLastError();
}

cudaError_t launch_double_slow(const float* x, float* out, std::size_t n, long long spin_ns, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  double_slow_kernel<<<blocks(n), 256, 0, s>>>(x, out, n, spin_ns);
  return cudaGetLastError();
}

}  // namespace cheat
