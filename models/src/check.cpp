#include "models/check.hpp"

#include <cstdio>

namespace models {

bool is_sticky(cudaError_t e) noexcept {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorAssert:
    case cudaErrorLaunchFailure:
    case cudaErrorMisalignedAddress:
    case cudaErrorIllegalInstruction:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
      return true;
    default:
      return false;
  }
}

namespace detail {

namespace {
std::string site(const char* expr, const char* file, int line) {
  return std::string(file) + ":" + std::to_string(line) + ": " + expr + " failed: ";
}
}  // namespace

void throw_cuda_error(cudaError_t e, const char* expr, const char* file, int line) {
  const std::string what =
      site(expr, file, line) + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")";
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // clear the (non-sticky) error so the process goes on
    throw OutOfMemory(what);
  }
  throw CudaError(what, static_cast<int>(e), is_sticky(e));
}

void throw_cublas_error(cublasStatus_t s, const char* expr, const char* file, int line) {
  const std::string what =
      site(expr, file, line) + cublasGetStatusString(s) + " (" + cublasGetStatusName(s) + ")";
  if (s == CUBLAS_STATUS_ALLOC_FAILED) throw OutOfMemory(what);
  throw CudaError(what, static_cast<int>(s), false, true);
}

void log_cuda_error(cudaError_t e, const char* expr, const char* file, int line) noexcept {
  std::fprintf(stderr, "models: %s:%d: %s failed: %s\n", file, line, expr, cudaGetErrorString(e));
}

}  // namespace detail
}  // namespace models
