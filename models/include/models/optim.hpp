#pragma once
// Optimizers over parameter tensors (updated in place: SGD one fused kernel per tensor,
// Adam one multi-tensor kernel per 64 tensors),
// gradient clipping by global norm without a host sync, and the learning-rate schedule.
#include <cstdint>
#include <vector>

#include "models/tensor.hpp"

namespace models {

class Optimizer {
 public:
  explicit Optimizer(std::vector<Tensor> params) : params_(std::move(params)) {}
  virtual ~Optimizer() = default;
  virtual void step() = 0;
  void zero_grad();  // drops every gradient (their memory goes back to the cache)
  void set_lr(double lr) { lr_ = lr; }
  double lr() const { return lr_; }
  const std::vector<Tensor>& params() const { return params_; }

 protected:
  std::vector<Tensor> params_;
  double lr_ = 1e-3;
};

// p -= lr g, or with momentum (PyTorch semantics): buf = momentum buf + g, p -= lr buf.
class SGD final : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, double lr, double momentum = 0.0);
  void step() override;

 private:
  double momentum_;
  std::vector<Tensor> buf_;
};

// Adam with bias correction (decoupled weight decay wd): one multi-tensor kernel launch per
// 64 tensors of a dtype (kernels::nn::adam_multi_tensor), the same per-element arithmetic
// as the per-tensor kernels::nn::adam_step. lr and the bias corrections live in a small
// device buffer, so that step() splits into a host part and a replayable device part:
//   prepare(): t += 1, this step's lr and 1 - b^t written to the device buffer (a one-thread
//              kernel on the stream; nothing else);
//   apply():   the update, reading them from device memory. It changes no host state and
//              allocates nothing: a CUDA graph may capture it once and replay it every step
//              (prepare() runs before each replay, outside the graph).
class Adam final : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, double lr, double beta1 = 0.9, double beta2 = 0.999, double eps = 1e-8,
       double weight_decay = 0.0);
  void step() override {
    prepare();
    apply();
  }
  void prepare();
  void apply();
  int steps() const { return t_; }

 private:
  double b1_, b2_, eps_, wd_;
  int t_ = 0;
  std::vector<Tensor> m_, v_;
  Tensor scalars_;  // kernels::nn::AdamStepScalars on the device (bytes of an f64 tensor)
};

// Scales every gradient by min(1, max_norm / ||g||) where ||g|| is the norm over all of
// them. Runs on the device (no sync: the scale is read from device memory by the kernel,
// so a captured graph stays valid), two multi-tensor launches per 128 gradients; returns
// the one-element tensor holding ||g||^2.
Tensor clip_grad_norm(const std::vector<Tensor>& params, double max_norm);

// Linear warm-up from 0 to base_lr over `warmup` steps, then cosine decay to min_lr at
// `total` steps (constant min_lr after). step counts from 0.
struct WarmupCosine {
  double base_lr = 1e-3;
  std::int64_t warmup = 0;
  std::int64_t total = 1000;
  double min_lr = 0.0;
  double at(std::int64_t step) const;
};

}  // namespace models
