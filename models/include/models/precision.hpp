#pragma once
// Mixed precision (docs/models.md, "Mixed precision"): the model's parameters, their
// gradients and the optimizer state stay float (master weights); with Precision::bf16 the
// activations between ops are bf16 tensors, and an op whose activation input is bf16 runs
// in bf16 (tensor-core GEMMs with float accumulation, flash_tc attention) after casting the
// float weights it needs to bf16, as PyTorch's autocast does. The gradient of that bf16
// copy flows back through the cast into the float parameter's .grad.
//
// Casting every weight at every use would cost one kernel per weight and use; within a
// WeightCastScope (one training step's forward and backward) each parameter is cast once
// and the copy is reused, and prefetch() casts all of them with one multi-tensor kernel.
#include <string>
#include <unordered_map>
#include <vector>

#include "models/tensor.hpp"

namespace models {

enum class Precision { f32, bf16 };
const char* precision_name(Precision p);                 // "f32", "bf16"
Precision parse_precision(const std::string& name);      // std::invalid_argument otherwise
DType activation_dtype(Precision p);                     // f32 or bf16

// Differentiable dtype conversion between f32 and bf16 (a same-dtype cast returns x).
// The backward converts the gradient back to x's dtype. Other pairs: std::invalid_argument.
Tensor cast(const Tensor& x, DType to);

// A float parameter as bf16 for an op: the cached copy inside a WeightCastScope (made on
// first use, or by prefetch), else a fresh cast. A bf16 tensor is returned as is.
Tensor cast_weight(const Tensor& w);

// Caches cast_weight's copies on the current Context until the scope ends. The copies'
// backward nodes run once: a scope spans at most one backward pass (one training step).
// Scopes do not nest (std::logic_error).
class WeightCastScope {
 public:
  WeightCastScope();
  ~WeightCastScope();
  WeightCastScope(const WeightCastScope&) = delete;
  WeightCastScope& operator=(const WeightCastScope&) = delete;
  // bf16 copies of every 2-D float parameter in `params` in one multi-tensor kernel (one
  // allocation, each copy 16-byte aligned inside it). The 1-D ones (biases, LayerNorm
  // gamma / beta) stay float: the bf16 kernels read them as float.
  void prefetch(const std::vector<Tensor>& params);

 private:
  std::unordered_map<const TensorImpl*, Tensor> cache_;
};

}  // namespace models
