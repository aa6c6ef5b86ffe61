#include "models/context.hpp"

#include <algorithm>
#include <stdexcept>

#include "gemm/gemm_cublas.hpp"
#include "harness/cuda_check.hpp"
#include "harness/error.hpp"

namespace models {

namespace {
thread_local Context* g_current = nullptr;
}

const std::vector<std::string>& gemm_backends() {
  static const std::vector<std::string> names = {"cublas", "coarsened", "tiled", "vectorized",
                                                 "naive", "atomic", "simple"};
  return names;
}

void check_cuda(cudaError_t e, const char* what, const char* file, int line) {
  if (e != cudaSuccess) harness::detail::throw_cuda_error(e, what, file, line);
}

void check_cublas(cublasStatus_t s, const char* what, const char* file, int line) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  throw harness::CudaError(std::string(file) + ":" + std::to_string(line) + ": " + what + ": " +
                               cublasGetStatusName(s) + " (" + cublasGetStatusString(s) + ")",
                           static_cast<int>(s), false);
}

Context::Context(cudaStream_t stream, std::string gemm, AttentionImpl attention)
    : stream_(stream), attention_(attention) {
  set_gemm(std::move(gemm));
}

Context::~Context() {
  if (stream_ != nullptr || cublas_ != nullptr) HARNESS_CUDA_NOTHROW(cudaStreamSynchronize(stream_));
  if (cublas_ != nullptr) cublasDestroy(cublas_);
  if (cublas_ws_ != nullptr) allocator_.deallocate(cublas_ws_, cublas_ws_bytes_);
}

void Context::set_gemm(std::string name) {
  const auto& all = gemm_backends();
  if (std::find(all.begin(), all.end(), name) == all.end())
    throw std::invalid_argument("unknown GEMM backend '" + name + "'");
  gemm_ = std::move(name);
}

cublasHandle_t Context::cublas() {
  if (cublas_ == nullptr) {
    MODELS_CUBLAS(cublasCreate(&cublas_));
    cublas_ws_bytes_ = kernels::gemm::kCublasWorkspaceBytes;
    cublas_ws_ = allocator_.allocate(cublas_ws_bytes_);
    MODELS_CUBLAS(cublasSetStream(cublas_, stream_));
    MODELS_CUBLAS(cublasSetWorkspace(cublas_, cublas_ws_, cublas_ws_bytes_));
    MODELS_CUBLAS(cublasSetMathMode(cublas_, CUBLAS_DEFAULT_MATH));  // FP32: no TF32
  }
  return cublas_;
}

Context& ctx() {
  if (g_current == nullptr) throw std::logic_error("models: no current Context (use ContextScope)");
  return *g_current;
}
bool has_ctx() { return g_current != nullptr; }

ContextScope::ContextScope(Context& c) : previous_(g_current) { g_current = &c; }
ContextScope::~ContextScope() { g_current = previous_; }

}  // namespace models
