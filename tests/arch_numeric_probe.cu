// Device side of arch_numeric_gpu_test: runs the shared layer's exponentials
// (kernels/arch/numeric.cuh) over an array, so the test checks the device code itself.
#include "arch_numeric_probe.hpp"

#include "arch/numeric.cuh"

namespace {

__global__ void exp2_kernel(const float* __restrict__ x, float* __restrict__ poly, float* __restrict__ mufu, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  poly[i] = kernels::arch::poly_exp2(x[i]);
  mufu[i] = kernels::arch::fast_exp2(x[i]);
}

}  // namespace

cudaError_t probe_exp2(const float* x, float* poly, float* mufu, int n) {
  float *dx = nullptr, *dp = nullptr, *dm = nullptr;
  const std::size_t bytes = sizeof(float) * static_cast<std::size_t>(n);
  cudaError_t e = cudaMalloc(&dx, 3 * bytes);
  if (e != cudaSuccess) return e;
  dp = dx + n;
  dm = dp + n;
  if ((e = cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice)) == cudaSuccess &&
      (e = cudaMemset(dp, 0xff, 2 * bytes)) == cudaSuccess) {  // poisoned: NaN where nothing is written
    exp2_kernel<<<(n + 255) / 256, 256>>>(dx, dp, dm, n);
    if ((e = cudaGetLastError()) == cudaSuccess && (e = cudaMemcpy(poly, dp, bytes, cudaMemcpyDeviceToHost)) == cudaSuccess)
      e = cudaMemcpy(mufu, dm, bytes, cudaMemcpyDeviceToHost);
  }
  const cudaError_t f = cudaFree(dx);
  return e != cudaSuccess ? e : f;
}
