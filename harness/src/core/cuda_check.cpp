#include "harness/cuda_check.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "harness/error.hpp"

namespace harness::detail {

namespace {
// Errors after which the context is unusable: every later CUDA call in this process fails.
bool is_sticky(cudaError_t e) {
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
}  // namespace

void throw_cuda_error(cudaError_t error, const char* expr, const char* file, int line) {
  const std::string what = fmt::format("{}:{}: {} failed: {} ({})", file, line, expr,
                                       cudaGetErrorString(error), cudaGetErrorName(error));
  if (error == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // clear the non-sticky error so the run goes on
    throw OutOfMemory(what);
  }
  throw CudaError(what, static_cast<int>(error), is_sticky(error));
}

void log_cuda_error(cudaError_t error, const char* expr, const char* file, int line) noexcept {
  std::fprintf(stderr, "harness: %s:%d: %s failed: %s\n", file, line, expr, cudaGetErrorString(error));
}

}  // namespace harness::detail
