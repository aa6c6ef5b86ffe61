#pragma once
// Checked CUDA and cuBLAS calls for the engine, and the exceptions it throws. models/ is a
// library of its own (kernels/ and CUDA only): a program that embeds it catches these;
// plugins/transformer translates them into the harness's exceptions.
//
//   MODELS_CUDA(cudaMemsetAsync(p, 0, n, stream));   // throws models::CudaError / OutOfMemory
//   MODELS_CUBLAS(cublasCreate(&handle));            // throws models::CudaError / OutOfMemory
//   MODELS_CUDA_NOTHROW(cudaFree(p));                // destructors: a line on stderr
//
// Messages carry the call site: "models/src/ops.cpp:120: cudaMemsetAsync(...) failed:
// an illegal memory access was encountered (cudaErrorIllegalAddress)".
#include <stdexcept>
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

namespace models {

// Base of every runtime failure the engine reports (configuration errors are
// std::invalid_argument / std::logic_error).
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A failed CUDA runtime or cuBLAS call. code(): the cudaError_t, or the cublasStatus_t when
// cublas() is true.
class CudaError : public Error {
 public:
  CudaError(const std::string& what, int code, bool sticky, bool cublas = false)
      : Error(what), code_(code), sticky_(sticky), cublas_(cublas) {}
  int code() const noexcept { return code_; }
  // A sticky error (illegal address, device assert, launch failure, ...) corrupts the CUDA
  // context: nothing more can run in this process.
  bool sticky() const noexcept { return sticky_; }
  bool cublas() const noexcept { return cublas_; }

 private:
  int code_;
  bool sticky_;
  bool cublas_;
};

// The device has too little memory (cudaMalloc after the allocator released its cache,
// cudaErrorMemoryAllocation from any call, CUBLAS_STATUS_ALLOC_FAILED). The error is
// cleared: the process can go on with a smaller problem.
class OutOfMemory : public Error {
 public:
  using Error::Error;
};

// True for the errors after which every later CUDA call in this process fails.
bool is_sticky(cudaError_t e) noexcept;

namespace detail {
[[noreturn]] void throw_cuda_error(cudaError_t e, const char* expr, const char* file, int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t s, const char* expr, const char* file, int line);
void log_cuda_error(cudaError_t e, const char* expr, const char* file, int line) noexcept;
}  // namespace detail

}  // namespace models

#define MODELS_CUDA(expr)                                                                        \
  do {                                                                                           \
    const cudaError_t models_cuda_status_ = (expr);                                              \
    if (models_cuda_status_ != cudaSuccess)                                                      \
      ::models::detail::throw_cuda_error(models_cuda_status_, #expr, __FILE__, __LINE__);        \
  } while (0)

#define MODELS_CUBLAS(expr)                                                                      \
  do {                                                                                           \
    const cublasStatus_t models_cublas_status_ = (expr);                                         \
    if (models_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                          \
      ::models::detail::throw_cublas_error(models_cublas_status_, #expr, __FILE__, __LINE__);    \
  } while (0)

#define MODELS_CUDA_NOTHROW(expr)                                                                \
  do {                                                                                           \
    const cudaError_t models_cuda_status_ = (expr);                                              \
    if (models_cuda_status_ != cudaSuccess)                                                      \
      ::models::detail::log_cuda_error(models_cuda_status_, #expr, __FILE__, __LINE__);          \
  } while (0)
