#include "models/context.hpp"

#include <algorithm>
#include <stdexcept>

#include "gemm/gemm_cublas.hpp"
#include "gemm/gemm_table.hpp"

namespace models {

namespace {
thread_local Context* g_current = nullptr;
}

const std::vector<std::string>& gemm_backends() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n = {"cublas"};
    for (const auto& k : kernels::gemm::fp32_kernels()) n.emplace_back(k.name);
    n.emplace_back("simple");
    n.emplace_back("auto");
    return n;
  }();
  return names;
}

const char* attention_impl_name(AttentionImpl a) {
  switch (a) {
    case AttentionImpl::flash: return "flash";
    case AttentionImpl::flash_tf32x3: return "flash_tf32x3";
    case AttentionImpl::naive: return "naive";
  }
  return "?";
}

Context::Context(cudaStream_t stream, std::string gemm, AttentionImpl attention)
    : stream_(stream), attention_(attention) {
  set_gemm(std::move(gemm));
}

Context::~Context() {
  if (stream_ != nullptr || cublas_ != nullptr) MODELS_CUDA_NOTHROW(cudaStreamSynchronize(stream_));
  if (cublas_ != nullptr) cublasDestroy(cublas_);
  if (cublas_ws_ != nullptr) allocator_.deallocate(cublas_ws_, cublas_ws_bytes_);
  if (counters_ != nullptr) allocator_.deallocate(counters_, counters_n_ * sizeof(unsigned));
}

unsigned* Context::zeroed_counters(std::size_t n) {
  if (n <= counters_n_) return counters_;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  MODELS_CUDA(cudaStreamIsCapturing(stream_, &capture));
  if (capture != cudaStreamCaptureStatusNone) return nullptr;  // a memset now would only be captured
  if (counters_ != nullptr) {  // stream-ordered: earlier kernels finish with the old array first
    MODELS_CUDA(cudaStreamSynchronize(stream_));
    allocator_.deallocate(counters_, counters_n_ * sizeof(unsigned));
    counters_ = nullptr;
    counters_n_ = 0;
  }
  const std::size_t count = std::max<std::size_t>(n, 1024);
  counters_ = static_cast<unsigned*>(allocator_.allocate(count * sizeof(unsigned)));
  counters_n_ = count;
  MODELS_CUDA(cudaMemsetAsync(counters_, 0, count * sizeof(unsigned), stream_));
  return counters_;
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
