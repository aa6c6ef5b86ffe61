// The device assert must fire in release builds too.
#undef NDEBUG
#include <cassert>
#include <cmath>

#include "broken_kernels.cuh"

namespace broken {
namespace {

__global__ void good(const float* x, float* out, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = 2.0f * x[i];
}

__global__ void out_of_bounds(float* out, std::size_t n) {
  // 1 GiB past the buffer: far outside any allocation.
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i + (std::size_t{1} << 28)] = 1.0f;
}

__global__ void infinite_loop(float* out, std::size_t n) {
  // Spins on a volatile load of the poisoned output (NaN never equals 1): a loop with a
  // side effect the compiler cannot remove (an empty endless loop is undefined behaviour
  // and was removed by the compiler, seen on an H200 here).
  const volatile float* flag = out;
  while (flag[0] != 1.0f) {
  }
  if (threadIdx.x < n) out[threadIdx.x] = 0;
}

__global__ void device_assert(float* out, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  assert(i >= n && "broken/device_assert fails on purpose");
  if (i < n) out[i] = 0;
}

__global__ void all_nan(float* out, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = nanf("");
}

unsigned blocks(std::size_t n) { return static_cast<unsigned>((n + 255) / 256); }

}  // namespace

cudaError_t launch_good(const float* x, float* out, std::size_t n, cudaStream_t s) {
  good<<<blocks(n), 256, 0, s>>>(x, out, n);
  return cudaGetLastError();
}
cudaError_t launch_out_of_bounds(float* out, std::size_t n, cudaStream_t s) {
  out_of_bounds<<<blocks(n), 256, 0, s>>>(out, n);
  return cudaGetLastError();
}
cudaError_t launch_infinite_loop(float* out, std::size_t n, cudaStream_t s) {
  infinite_loop<<<1, 32, 0, s>>>(out, n);
  return cudaGetLastError();
}
cudaError_t launch_device_assert(float* out, std::size_t n, cudaStream_t s) {
  device_assert<<<blocks(n), 256, 0, s>>>(out, n);
  return cudaGetLastError();
}
cudaError_t launch_nan(float* out, std::size_t n, cudaStream_t s) {
  all_nan<<<blocks(n), 256, 0, s>>>(out, n);
  return cudaGetLastError();
}

}  // namespace broken
