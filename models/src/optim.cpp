#include "models/optim.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "models/context.hpp"
#include "models/ops.hpp"
#include "nn/nn.hpp"

namespace models {

namespace nn = kernels::nn;

void Optimizer::zero_grad() {
  for (auto& p : params_) p.zero_grad();
}

SGD::SGD(std::vector<Tensor> params, double lr, double momentum) : Optimizer(std::move(params)), momentum_(momentum) {
  lr_ = lr;
  if (momentum_ != 0.0)
    for (const auto& p : params_) buf_.push_back(Tensor::zeros(p.shape(), p.dtype()));
}

void SGD::step() {
  for (std::size_t i = 0; i < params_.size(); ++i) {
    Tensor& p = params_[i];
    Tensor g = p.grad();
    if (!g.defined()) continue;
    const auto n = static_cast<std::size_t>(p.numel());
    if (p.dtype() == DType::f64)
      MODELS_CUDA(nn::sgd_step<double>(p.data<double>(), g.data<double>(), buf_.empty() ? nullptr : buf_[i].data<double>(),
                                       n, lr_, momentum_, ctx().stream()));
    else
      MODELS_CUDA(nn::sgd_step<float>(p.data<float>(), g.data<float>(), buf_.empty() ? nullptr : buf_[i].data<float>(),
                                      n, static_cast<float>(lr_), static_cast<float>(momentum_), ctx().stream()));
  }
}

Adam::Adam(std::vector<Tensor> params, double lr, double beta1, double beta2, double eps, double weight_decay)
    : Optimizer(std::move(params)), b1_(beta1), b2_(beta2), eps_(eps), wd_(weight_decay) {
  lr_ = lr;
  for (const auto& p : params_) {
    m_.push_back(Tensor::zeros(p.shape(), p.dtype()));
    v_.push_back(Tensor::zeros(p.shape(), p.dtype()));
  }
  constexpr auto kWords = static_cast<std::int64_t>((sizeof(nn::AdamStepScalars) + 7) / 8);
  scalars_ = Tensor::zeros({kWords}, DType::f64);
}

void Adam::prepare() {
  ++t_;
  MODELS_CUDA(nn::adam_set_scalars(static_cast<nn::AdamStepScalars*>(scalars_.raw()),
                                   nn::adam_step_scalars(lr_, b1_, b2_, t_), ctx().stream()));
}

namespace {
// Launches the multi-tensor update for `list` when it is full or `flush` (then empties it).
template <class T>
void launch_adam(nn::AdamTensorList<T>& list, const nn::AdamStepScalars* scalars, double b1, double b2,
                 double eps, double wd, bool flush) {
  if (list.count == 0 || (!flush && list.count < nn::AdamTensorList<T>::kMaxTensors)) return;
  MODELS_CUDA(nn::adam_multi_tensor<T>(list, scalars, static_cast<T>(b1), static_cast<T>(b2), static_cast<T>(eps),
                                       static_cast<T>(wd), ctx().stream()));
  list.count = 0;
}

template <class T>
void add_adam_tensor(nn::AdamTensorList<T>& list, const Tensor& p, const Tensor& g, const Tensor& m, const Tensor& v) {
  const int i = list.count++;
  list.p[i] = p.data<T>();
  list.g[i] = g.data<T>();
  list.m[i] = m.data<T>();
  list.v[i] = v.data<T>();
  list.n[i] = p.numel();
}
}  // namespace

void Adam::apply() {
  if (t_ < 1) throw std::logic_error("Adam::apply before the first prepare()");
  const auto* scalars = static_cast<const nn::AdamStepScalars*>(scalars_.raw());
  nn::AdamTensorList<float> f32;
  nn::AdamTensorList<double> f64;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    Tensor g = p.grad();
    if (!g.defined()) continue;
    if (p.dtype() == DType::f64) {
      add_adam_tensor(f64, p, g, m_[i], v_[i]);
      launch_adam(f64, scalars, b1_, b2_, eps_, wd_, false);
    } else {
      add_adam_tensor(f32, p, g, m_[i], v_[i]);
      launch_adam(f32, scalars, b1_, b2_, eps_, wd_, false);
    }
  }
  launch_adam(f32, scalars, b1_, b2_, eps_, wd_, true);
  launch_adam(f64, scalars, b1_, b2_, eps_, wd_, true);
}

namespace {
// The gradients (those defined) in lists of kMaxTensors: one launch per list and pass.
template <class T>
std::vector<nn::TensorChunkList<T>> gradient_lists(const std::vector<Tensor>& params) {
  std::vector<nn::TensorChunkList<T>> lists;
  for (const auto& p : params) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    if (lists.empty() || lists.back().count == nn::TensorChunkList<T>::kMaxTensors) lists.emplace_back();
    auto& l = lists.back();
    l.x[l.count] = g.data<T>();
    l.n[l.count] = g.numel();
    ++l.count;
  }
  return lists;
}

template <class T>
void clip_multi_tensor(const std::vector<Tensor>& params, T* sumsq, double max_norm) {
  const auto lists = gradient_lists<T>(params);
  for (const auto& l : lists) MODELS_CUDA(nn::sum_squares_multi_tensor<T>(l, sumsq, ctx().stream()));
  for (const auto& l : lists)
    MODELS_CUDA(nn::clip_by_norm_multi_tensor<T>(l, sumsq, static_cast<T>(max_norm), ctx().stream()));
}
}  // namespace

Tensor clip_grad_norm(const std::vector<Tensor>& params, double max_norm) {
  if (params.empty()) throw std::invalid_argument("clip_grad_norm: no parameters");
  const DType dt = params.front().dtype();
  Tensor sumsq = Tensor::zeros({1}, dt);
  if (dt == DType::f64) clip_multi_tensor<double>(params, sumsq.data<double>(), max_norm);
  else clip_multi_tensor<float>(params, sumsq.data<float>(), max_norm);
  return sumsq;
}

double WarmupCosine::at(std::int64_t step) const {
  if (warmup > 0 && step < warmup) return base_lr * static_cast<double>(step + 1) / static_cast<double>(warmup);
  if (step >= total) return min_lr;
  const double span = static_cast<double>(std::max<std::int64_t>(1, total - warmup));
  const double progress = static_cast<double>(step - warmup) / span;
  return min_lr + 0.5 * (base_lr - min_lr) * (1.0 + std::cos(std::numbers::pi * progress));
}

}  // namespace models
