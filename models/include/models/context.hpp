#pragma once
// The engine's execution context: the stream every kernel runs on, the caching allocator
// the tensors come from, and the kernel choices (GEMM backend, attention core). Ops use
// the current context (ContextScope makes one current on this thread).
#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "models/allocator.hpp"
#include "models/check.hpp"  // MODELS_CUDA, MODELS_CUBLAS, models::CudaError
#include "models/tensor.hpp"

namespace models {

// GEMM backends by name: "cublas" (cuBLAS, FP32 without TF32 / FP64), every FP32 kernel
// of kernels::gemm::fp32_kernels() ("naive", "atomic", "tiled", "vectorized", "coarsened",
// ...: row-major NN; NT and TN run a transpose kernel first), "auto" (kernels/gemm's
// shape-aware FP32 choice, every layout read in place: no transpose kernels), and "simple"
// (kernels::nn::gemm_simple, float and double). Double tensors with one of our FP32-only
// kernels fall back to "simple". bf16 tensors (mixed precision, precision.hpp): "cublas"
// runs cublasGemmEx (CUDA_R_16BF operands, CUBLAS_COMPUTE_32F), every other backend our
// kernels::gemm::gemm_bf16 (wgmma on Hopper where aligned, else mma.sync); both
// accumulate in float and round the output to bf16 once.
const std::vector<std::string>& gemm_backends();

// Attention core for float: "flash" (kernels/attention FlashAttention-2 in FP32 FMAs,
// head_dim 32, 64, 128, query length == key length), "flash_tf32x3" (the same
// FlashAttention-2 with every product on tensor cores by the 3xTF32 split: FP32 accuracy,
// checked at the FP32 tolerances; the method of PyTorch's FP32 memory-efficient SDPA; same
// head sizes) or "naive" (kernels/attention naive, materialized scores). Double, and any
// shape flash cannot take, use kernels::nn::attention_naive_*. bf16 runs flash_tc under
// either flash kind.
enum class AttentionImpl { flash, flash_tf32x3, naive };
// "flash", "flash_tf32x3", "naive" (reports, messages).
const char* attention_impl_name(AttentionImpl a);

class Context {
 public:
  explicit Context(cudaStream_t stream = nullptr, std::string gemm = "cublas",
                   AttentionImpl attention = AttentionImpl::flash);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  CachingAllocator& allocator() { return allocator_; }
  cudaStream_t stream() const { return stream_; }
  const std::string& gemm() const { return gemm_; }
  void set_gemm(std::string name);  // throws std::invalid_argument for an unknown name
  AttentionImpl attention() const { return attention_; }
  void set_attention(AttentionImpl a) { attention_ = a; }
  // NVTX ranges per layer (and per step/phase in the trainer).
  bool nvtx() const { return nvtx_; }
  void set_nvtx(bool on) { nvtx_ = on; }
  // Fused elementwise tails in the layers (layers.hpp): bias + activation, residual +
  // LayerNorm, and the parallel bias gradient of every Linear (ops.hpp bias_act,
  // add_layer_norm). false: the separate ops (bias_add, activation, add, layer_norm,
  // column_sum), kept for comparison. Default true.
  bool fused() const { return fused_; }
  void set_fused(bool on) { fused_ = on; }
  // At least n zeroed device counters for the one-kernel bias gradient
  // (kernels::nn::bias_act_backward: each launch leaves them zero again; the context's ops
  // run in stream order, so one array serves them all). Allocated and zeroed on first use
  // (at least 1024); null when that would have to happen while the stream is being captured
  // (the caller then takes the two-kernel path).
  unsigned* zeroed_counters(std::size_t n);

  // The cuBLAS handle, created on first use, bound to stream() with its own workspace
  // (so cuBLAS allocates nothing per call).
  cublasHandle_t cublas();
  void* cublas_workspace() const { return cublas_ws_; }
  // The open WeightCastScope's cache of bf16 weight copies (precision.hpp), or null.
  std::unordered_map<const TensorImpl*, Tensor>* weight_casts() const { return weight_casts_; }
  void set_weight_casts(std::unordered_map<const TensorImpl*, Tensor>* c) { weight_casts_ = c; }
  std::size_t cublas_workspace_bytes() const { return cublas_ws_bytes_; }

 private:
  CachingAllocator allocator_;  // first member: destroyed last
  cudaStream_t stream_;
  std::string gemm_;
  AttentionImpl attention_;
  bool nvtx_ = true;
  bool fused_ = true;
  cublasHandle_t cublas_ = nullptr;
  void* cublas_ws_ = nullptr;
  std::size_t cublas_ws_bytes_ = 0;
  std::unordered_map<const TensorImpl*, Tensor>* weight_casts_ = nullptr;
  unsigned* counters_ = nullptr;
  std::size_t counters_n_ = 0;
};

// The current context of this thread; throws std::logic_error when there is none.
Context& ctx();
bool has_ctx();

class ContextScope {
 public:
  explicit ContextScope(Context& c);
  ~ContextScope();
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  Context* previous_;
};

}  // namespace models
