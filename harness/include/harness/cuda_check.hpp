#pragma once
// Checked CUDA calls for host code (plugins, the harness). A throwing form and a
// no-throw twin for destructors, both with file:line.
//
//   HARNESS_CUDA(cudaMalloc(&p, bytes));
//   HARNESS_CUDA_NOTHROW(cudaFree(p));      // in destructors: logs to stderr
//   HARNESS_CUDA_LAST_ERROR();              // after a kernel launch
#include <cuda_runtime_api.h>

namespace harness::detail {
[[noreturn]] void throw_cuda_error(cudaError_t error, const char* expr, const char* file, int line);
void log_cuda_error(cudaError_t error, const char* expr, const char* file, int line) noexcept;
}  // namespace harness::detail

#define HARNESS_CUDA(expr)                                                         \
  do {                                                                             \
    const cudaError_t harness_cuda_status_ = (expr);                               \
    if (harness_cuda_status_ != cudaSuccess)                                       \
      ::harness::detail::throw_cuda_error(harness_cuda_status_, #expr, __FILE__, __LINE__); \
  } while (0)

#define HARNESS_CUDA_NOTHROW(expr)                                                 \
  do {                                                                             \
    const cudaError_t harness_cuda_status_ = (expr);                               \
    if (harness_cuda_status_ != cudaSuccess)                                       \
      ::harness::detail::log_cuda_error(harness_cuda_status_, #expr, __FILE__, __LINE__); \
  } while (0)

#define HARNESS_CUDA_LAST_ERROR() HARNESS_CUDA(cudaGetLastError())
