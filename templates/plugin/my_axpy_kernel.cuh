#pragma once
// The kernel: plain CUDA, no harness includes (a kernel library of your own would do).
//   out[i] = a * x[i] + y[i],  i < n   (one fused multiply-add per element, f32)
#include <cstdint>

#include <cuda_runtime_api.h>

namespace my_plugin {

// Enqueues the kernel on `stream`; returns the launch's error (cudaSuccess when queued).
cudaError_t my_axpy_cuda(std::int64_t n, float a, const float* x, const float* y, float* out, cudaStream_t stream);

}  // namespace my_plugin
