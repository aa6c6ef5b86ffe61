#include "models/trainer.hpp"

#include <optional>
#include <random>
#include <stdexcept>

#include "models/ops.hpp"
#include "models/precision.hpp"
#include "nvtx.hpp"

namespace models {

namespace {
constexpr std::int64_t kLossLog = 1 << 16;
constexpr std::int32_t kBos = 1;  // token 0 is unused, 1 begins the decoder input

using detail::NvtxKind;
using detail::NvtxRange;
}  // namespace

TransformerTrainer::TransformerTrainer(const TrainConfig& config, cudaStream_t stream)
    : config_(config), context_(stream, config.gemm, config.attention) {
  ContextScope scope(context_);
  if (config_.model.vocab < 3) throw std::invalid_argument("vocab must be >= 3");
  model_ = std::make_unique<Transformer>(config_.model, config_.seed);
  optimizer_ = std::make_unique<Adam>(model_->parameters(), config_.lr, config_.beta1, config_.beta2, config_.eps);
  if (config_.model.precision == Precision::bf16)  // the weights the GEMMs read (not the embedding tables)
    for (const auto& p : model_->parameters())
      if (p.dim() == 2 && p.impl() != model_->src_embed.table.impl() && p.impl() != model_->tgt_embed.table.impl())
        bf16_weights_.push_back(p);
  schedule_ = WarmupCosine{config_.lr, config_.warmup_steps, config_.schedule_steps, config_.lr / 10};
  // Copy task: target = source (random tokens 2..vocab-1); decoder input = BOS + target[:-1].
  std::mt19937_64 rng(config_.seed ^ 0x5eedda7aull);
  std::uniform_int_distribution<std::int32_t> tok(2, static_cast<std::int32_t>(config_.model.vocab - 1));
  const std::int64_t B = config_.batch, N = config_.seq_len;
  for (int i = 0; i < config_.data_batches; ++i) {
    std::vector<std::int32_t> src(static_cast<std::size_t>(B * N)), tin(src.size());
    for (auto& t : src) t = tok(rng);
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t n = 0; n < N; ++n)
        tin[static_cast<std::size_t>(b * N + n)] = n == 0 ? kBos : src[static_cast<std::size_t>(b * N + n - 1)];
    src_.push_back(Tensor::from_host(src, {B, N}));
    tgt_in_.push_back(Tensor::from_host(tin, {B, N}));
    tgt_out_.push_back(Tensor::from_host(src, {B * N}));
  }
  loss_log_ = Tensor::zeros({kLossLog}, DType::f32);
  MODELS_CUDA(cudaStreamSynchronize(stream));
}

TransformerTrainer::~TransformerTrainer() {
  (void)cudaStreamSynchronize(context_.stream());
  for (auto& e : in_flight_) free_events_.push_back(e);
  for (auto& e : free_events_)
    for (auto ev : e.e)
      if (ev) (void)cudaEventDestroy(ev);
}

void TransformerTrainer::step(int batch_index) {
  ContextScope scope(context_);
  const bool nvtx = context_.nvtx();
  NvtxRange step_range(nvtx, "train_step", NvtxKind::step);
  const std::uint64_t mallocs_before = context_.allocator().stats().cuda_malloc_calls;
  const std::size_t b = batch_index >= 0 ? static_cast<std::size_t>(batch_index) % src_.size()
                                         : static_cast<std::size_t>(step_) % src_.size();
  harvest(false);
  Events ev;
  if (!free_events_.empty()) {
    ev = free_events_.back();
    free_events_.pop_back();
  } else {
    for (auto& e : ev.e) MODELS_CUDA(cudaEventCreate(&e));
  }
  ev.step = step_;
  cudaStream_t s = context_.stream();
  MODELS_CUDA(cudaEventRecord(ev.e[0], s));
  Tensor loss;
  // Mixed precision: one multi-tensor cast of the float weights to bf16 per step, the
  // copies shared by this step's forward and backward.
  std::optional<WeightCastScope> casts;
  if (config_.model.precision == Precision::bf16) casts.emplace().prefetch(bf16_weights_);
  {
    NvtxRange r(nvtx, "forward", NvtxKind::forward);
    Tensor logits = (*model_)(src_[b], tgt_in_[b]);
    loss = cross_entropy(logits, tgt_out_[b]);
  }
  MODELS_CUDA(cudaEventRecord(ev.e[1], s));
  {
    NvtxRange r(nvtx, "backward", NvtxKind::backward);
    backward(loss);
  }
  casts.reset();
  MODELS_CUDA(cudaEventRecord(ev.e[2], s));
  {
    NvtxRange r(nvtx, "optimizer", NvtxKind::optimizer);
    if (config_.clip_norm > 0) clip_grad_norm(optimizer_->params(), config_.clip_norm);
    optimizer_->set_lr(schedule_.at(step_));
    optimizer_->step();
    optimizer_->zero_grad();
  }
  MODELS_CUDA(cudaEventRecord(ev.e[3], s));
  MODELS_CUDA(cudaMemcpyAsync(loss_log_.data<float>() + step_ % kLossLog, loss.raw(), sizeof(float),
                              cudaMemcpyDeviceToDevice, s));
  in_flight_.push_back(ev);
  mallocs_per_step_.push_back(context_.allocator().stats().cuda_malloc_calls - mallocs_before);
  ++step_;
}

void TransformerTrainer::harvest(bool wait) {
  // Keep at most 64 steps of events in flight; read the finished ones.
  while (!in_flight_.empty()) {
    Events& ev = in_flight_.front();
    if (wait || in_flight_.size() >= 64) {
      MODELS_CUDA(cudaEventSynchronize(ev.e[3]));
    } else {
      const cudaError_t q = cudaEventQuery(ev.e[3]);
      if (q == cudaErrorNotReady) break;
      MODELS_CUDA(q);
    }
    float ms[3] = {};
    for (int i = 0; i < 3; ++i) MODELS_CUDA(cudaEventElapsedTime(&ms[i], ev.e[i], ev.e[i + 1]));
    float total = 0;
    MODELS_CUDA(cudaEventElapsedTime(&total, ev.e[0], ev.e[3]));
    const auto idx = static_cast<std::size_t>(ev.step);
    if (t_fwd_.size() <= idx) {
      t_fwd_.resize(idx + 1, -1);
      t_bwd_.resize(idx + 1, -1);
      t_opt_.resize(idx + 1, -1);
      t_step_.resize(idx + 1, -1);
    }
    t_fwd_[idx] = ms[0];
    t_bwd_[idx] = ms[1];
    t_opt_[idx] = ms[2];
    t_step_[idx] = total;
    free_events_.push_back(ev);
    in_flight_.pop_front();
  }
}

std::vector<double> TransformerTrainer::losses() {
  ContextScope scope(context_);
  std::vector<double> all = loss_log_.to_host();
  std::vector<double> out;
  const std::int64_t first = step_ > kLossLog ? step_ - kLossLog : 0;
  for (std::int64_t i = first; i < step_; ++i) out.push_back(all[static_cast<std::size_t>(i % kLossLog)]);
  return out;
}

PhaseTimes TransformerTrainer::phase_times(std::int64_t from) {
  harvest(true);
  PhaseTimes p;
  for (std::size_t i = static_cast<std::size_t>(std::max<std::int64_t>(from, 0)); i < t_step_.size(); ++i) {
    if (t_step_[i] < 0) continue;
    ++p.steps;
    p.forward += t_fwd_[i];
    p.backward += t_bwd_[i];
    p.optimizer += t_opt_[i];
    p.step += t_step_[i];
  }
  if (p.steps > 0) {
    const auto n = static_cast<double>(p.steps);
    p.forward /= n;
    p.backward /= n;
    p.optimizer /= n;
    p.step /= n;
  }
  return p;
}

}  // namespace models
