#include "models/trainer.hpp"

#include <algorithm>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>

#include "models/data_parallel.hpp"
#include "models/ops.hpp"
#include "nn/nn.hpp"
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
  context_.set_fused(config_.fused);
  if (config_.graph && config_.graph_warmup_steps < 1)
    throw std::invalid_argument("graph_warmup_steps must be >= 1 (eager steps warm the caching allocator up before "
                                "the CUDA graph capture), not " + std::to_string(config_.graph_warmup_steps));
  if (config_.graph && config_.world_size > 1)
    throw std::invalid_argument("graph: true with world_size > 1 is not supported (the data-parallel all-reduce "
                                "runs outside a CUDA graph)");
  if (config_.graph && (stream == nullptr || stream == cudaStreamLegacy))
    throw std::invalid_argument("graph: true needs a non-default stream (the legacy default stream cannot be "
                                "captured into a CUDA graph)");
  ContextScope scope(context_);
  if (config_.model.vocab < 3) throw std::invalid_argument("vocab must be >= 3");
  model_ = std::make_unique<Transformer>(config_.model, config_.seed);
  optimizer_ = std::make_unique<Adam>(model_->parameters(), config_.lr, config_.beta1, config_.beta2, config_.eps);
  if (config_.model.precision == Precision::bf16)  // the weights the GEMMs read (not the embedding tables)
    for (const auto& p : model_->parameters())
      if (p.dim() == 2 && p.impl() != model_->src_embed.table.impl() && p.impl() != model_->tgt_embed.table.impl())
        bf16_weights_.push_back(p);
  schedule_ = WarmupCosine{config_.lr, config_.warmup_steps, config_.schedule_steps, config_.lr / 10};
  // Copy task: target = the first Nt source tokens (random tokens 2..vocab-1; all of them
  // when Nt == Ns); decoder input = BOS + target[:-1].
  if (config_.world_size > 1)
    dp_ = std::make_unique<DataParallel>(model_->parameters(), config_.world_size, stream, config_.bucket_bytes,
                                         config_.grad_wire);
  const std::uint64_t rank = dp_ ? static_cast<std::uint64_t>(dp_->rank()) : 0;
  std::mt19937_64 rng(config_.seed ^ 0x5eedda7aull ^ (rank * 0x9e3779b97f4a7c15ull));  // this rank's shard
  std::uniform_int_distribution<std::int32_t> tok(2, static_cast<std::int32_t>(config_.model.vocab - 1));
  const std::int64_t B = config_.batch, Ns = config_.source_length(), Nt = config_.target_length();
  if (Nt > Ns)
    throw std::invalid_argument("copy task: target length " + std::to_string(Nt) + " > source length " +
                                std::to_string(Ns) + " (the target is a prefix of the source)");
  for (int i = 0; i < config_.data_batches; ++i) {
    std::vector<std::int32_t> src(static_cast<std::size_t>(B * Ns)), tin(static_cast<std::size_t>(B * Nt)),
        tout(tin.size());
    for (auto& t : src) t = tok(rng);
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t n = 0; n < Nt; ++n) {
        tout[static_cast<std::size_t>(b * Nt + n)] = src[static_cast<std::size_t>(b * Ns + n)];
        tin[static_cast<std::size_t>(b * Nt + n)] = n == 0 ? kBos : src[static_cast<std::size_t>(b * Ns + n - 1)];
      }
    src_.push_back(Tensor::from_host(src, {B, Ns}));
    tgt_in_.push_back(Tensor::from_host(tin, {B, Nt}));
    tgt_out_.push_back(Tensor::from_host(tout, {B * Nt}));
  }
  loss_log_ = Tensor::zeros({kLossLog}, DType::f32);
  loss_counter_ = Tensor::zeros({1}, DType::i32);
  // The fused layers' reduction counters (ceil(width / 32) for the widest bias: the
  // vocabulary), made now: never first inside a capture (step_launches' or the graph's).
  if (config_.fused)
    context_.zeroed_counters(static_cast<std::size_t>(
        (std::max({config_.model.vocab, config_.model.hidden, 3 * config_.model.d_model}) + 31) / 32));
  if (config_.graph) {
    src_static_ = Tensor::empty({B, Ns}, DType::i32);
    tgt_in_static_ = Tensor::empty({B, Nt}, DType::i32);
    tgt_out_static_ = Tensor::empty({B * Nt}, DType::i32);
  }
  MODELS_CUDA(cudaStreamSynchronize(stream));
}

void TransformerTrainer::destroy_graph() noexcept {
  if (exec_ != nullptr) MODELS_CUDA_NOTHROW(cudaGraphExecDestroy(exec_));
  if (graph_ != nullptr) MODELS_CUDA_NOTHROW(cudaGraphDestroy(graph_));
  exec_ = nullptr;
  graph_ = nullptr;
  context_.allocator().release_private_pool();  // (after the stream is idle: the caller syncs)
}

TransformerTrainer::~TransformerTrainer() {
  (void)cudaStreamSynchronize(context_.stream());
  destroy_graph();
  for (auto& e : in_flight_) free_events_.push_back(e);
  for (auto& e : free_events_) {
    for (auto ev : e.e)
      if (ev) (void)cudaEventDestroy(ev);
    if (e.compute_done) (void)cudaEventDestroy(e.compute_done);
  }
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
    if (dp_) MODELS_CUDA(cudaEventCreate(&ev.compute_done));
  }
  ev.step = step_;
  const bool use_graph = config_.graph && step_ >= config_.graph_warmup_steps;
  ev.phases = !use_graph;
  cudaStream_t s = context_.stream();
  MODELS_CUDA(cudaEventRecord(ev.e[0], s));
  optimizer_->set_lr(schedule_.at(step_));
  optimizer_->prepare();  // this step's lr and bias corrections into device memory
  if (use_graph) {
    // The step's batch into the graph's static inputs (device to device, outside the graph:
    // one graph serves every batch), then one launch.
    MODELS_CUDA(cudaMemcpyAsync(src_static_.raw(), src_[b].raw(), src_[b].bytes(), cudaMemcpyDeviceToDevice, s));
    MODELS_CUDA(cudaMemcpyAsync(tgt_in_static_.raw(), tgt_in_[b].raw(), tgt_in_[b].bytes(),
                                cudaMemcpyDeviceToDevice, s));
    MODELS_CUDA(cudaMemcpyAsync(tgt_out_static_.raw(), tgt_out_[b].raw(), tgt_out_[b].bytes(),
                                cudaMemcpyDeviceToDevice, s));
    if (exec_ == nullptr) {
      graph_ = capture_body(src_static_, tgt_in_static_, tgt_out_static_);
      const cudaError_t e = cudaGraphInstantiate(&exec_, graph_, 0);
      if (e != cudaSuccess) {
        exec_ = nullptr;
        destroy_graph();  // never launched: its blocks may go back at once
        detail::throw_cuda_error(e, "cudaGraphInstantiate(the captured training step)", __FILE__, __LINE__);
      }
      graph_launches_ = count_nodes(graph_);
    }
    MODELS_CUDA(cudaGraphLaunch(exec_, s));
  } else {
    step_body(src_[b], tgt_in_[b], tgt_out_[b], &ev);
  }
  MODELS_CUDA(cudaEventRecord(ev.e[3], s));
  in_flight_.push_back(ev);
  mallocs_per_step_.push_back(context_.allocator().stats().cuda_malloc_calls - mallocs_before);
  ++step_;
}

void TransformerTrainer::step_body(const Tensor& src, const Tensor& tgt_in, const Tensor& tgt_out, Events* ev) {
  const bool nvtx = context_.nvtx();
  cudaStream_t s = context_.stream();
  Tensor loss;
  // Mixed precision: one multi-tensor cast of the float weights to bf16 per step, the
  // copies shared by this step's forward and backward (inside a captured graph too).
  std::optional<WeightCastScope> casts;
  if (config_.model.precision == Precision::bf16) casts.emplace().prefetch(bf16_weights_);
  {
    NvtxRange r(nvtx, "forward", NvtxKind::forward);
    Tensor logits = (*model_)(src, tgt_in);
    loss = cross_entropy(logits, tgt_out);
  }
  if (ev != nullptr) MODELS_CUDA(cudaEventRecord(ev->e[1], s));
  {
    NvtxRange r(nvtx, "backward", NvtxKind::backward);
    if (dp_) dp_->backward(loss, ev != nullptr ? ev->compute_done : nullptr);  // + the bucketed all-reduce
    else backward(loss);
  }
  casts.reset();
  if (ev != nullptr) MODELS_CUDA(cudaEventRecord(ev->e[2], s));
  {
    NvtxRange r(nvtx, "optimizer", NvtxKind::optimizer);
    if (config_.clip_norm > 0 && dp_) dp_->clip_grad_norm(config_.clip_norm);  // the same scale on every rank
    else if (config_.clip_norm > 0) clip_grad_norm(optimizer_->params(), config_.clip_norm);
    optimizer_->apply();
    optimizer_->zero_grad();
  }
  // The loss into the log's next slot (the slot index lives on the device: a replayed graph
  // writes a new one every step).
  auto* counter = loss_counter_.data<std::int32_t>();
  constexpr auto kCap = static_cast<std::int32_t>(kLossLog);
  if (loss.dtype() == DType::f64)
    MODELS_CUDA(kernels::nn::log_scalar<double>(loss.data<double>(), loss_log_.data<float>(), counter, kCap, s));
  else
    MODELS_CUDA(kernels::nn::log_scalar<float>(loss.data<float>(), loss_log_.data<float>(), counter, kCap, s));
}

cudaGraph_t TransformerTrainer::capture_body(const Tensor& src, const Tensor& tgt_in, const Tensor& tgt_out) {
  static const std::string kWhat = "CUDA graph capture of the training step failed: ";
  cudaStream_t s = context_.stream();
  auto& alloc = context_.allocator();
  alloc.begin_capture();
  if (const cudaError_t e = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal); e != cudaSuccess) {
    alloc.end_capture();
    detail::throw_cuda_error(e, "cudaStreamBeginCapture(trainer stream, thread-local mode)", __FILE__, __LINE__);
  }
  cudaGraph_t g = nullptr;
  // On a failure inside the body: end the capture (the stream is usable again), drop the
  // partial graph (never launched, so its blocks go back to the shared lists at once).
  const auto abandon = [&] {
    cudaGraph_t partial = nullptr;
    (void)cudaStreamEndCapture(s, &partial);
    if (partial != nullptr) (void)cudaGraphDestroy(partial);
    (void)cudaGetLastError();
    alloc.end_capture();
    alloc.release_private_pool();
  };
  try {
    step_body(src, tgt_in, tgt_out, nullptr);
  } catch (const OutOfMemory& e) {
    abandon();
    throw OutOfMemory(kWhat + e.what());
  } catch (const CudaError& e) {
    abandon();
    throw CudaError(kWhat + e.what(), e.code(), e.sticky(), e.cublas());
  } catch (const std::exception& e) {
    abandon();
    throw Error(kWhat + e.what());
  }
  const cudaError_t e = cudaStreamEndCapture(s, &g);
  alloc.end_capture();
  if (e != cudaSuccess || g == nullptr) {
    if (g != nullptr) (void)cudaGraphDestroy(g);
    (void)cudaGetLastError();
    alloc.release_private_pool();
    const cudaError_t code = e != cudaSuccess ? e : cudaErrorStreamCaptureInvalidated;
    throw CudaError(kWhat + "cudaStreamEndCapture: " + cudaGetErrorString(code) + " (" + cudaGetErrorName(code) +
                        "): a call of the step was not capturable (a host synchronization, an allocation, or "
                        "work on another stream joined the capture)",
                    code, is_sticky(code));
  }
  return g;
}

StepLaunches TransformerTrainer::count_nodes(cudaGraph_t graph) {
  std::size_t n = 0;
  MODELS_CUDA(cudaGraphGetNodes(graph, nullptr, &n));
  std::vector<cudaGraphNode_t> nodes(n);
  if (n > 0) MODELS_CUDA(cudaGraphGetNodes(graph, nodes.data(), &n));
  StepLaunches c;
  for (std::size_t i = 0; i < n; ++i) {
    cudaGraphNodeType type{};
    MODELS_CUDA(cudaGraphNodeGetType(nodes[i], &type));
    switch (type) {
      case cudaGraphNodeTypeKernel: ++c.kernels; break;
      case cudaGraphNodeTypeMemset: ++c.memsets; break;
      case cudaGraphNodeTypeMemcpy: ++c.memcopies; break;
      default: ++c.other; break;
    }
  }
  c.host_launches = c.kernels + c.memsets + c.memcopies + c.other;
  return c;
}

StepLaunches TransformerTrainer::step_launches() {
  ContextScope scope(context_);
  StepLaunches c;
  if (exec_ != nullptr) {
    c = graph_launches_;
    c.memcopies += 3;         // the data batch into the static inputs
    c.host_launches = 3 + 1;  // those copies and cudaGraphLaunch
  } else {
    // A capture of one step body that is never launched: nothing runs, nothing on the
    // device changes (the optimizer's step count moves in prepare(), outside the body).
    cudaGraph_t g = capture_body(src_[0], tgt_in_[0], tgt_out_[0]);
    try {
      c = count_nodes(g);
    } catch (...) {
      (void)cudaGraphDestroy(g);
      throw;
    }
    MODELS_CUDA(cudaGraphDestroy(g));
    context_.allocator().release_private_pool();
  }
  // Adam::prepare's kernel runs outside the body in both modes.
  c.kernels += 1;
  c.host_launches += 1;
  return c;
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
    float ms[3] = {-1, -1, -1};  // no phase times for a graph launch
    if (ev.phases)
      for (int i = 0; i < 3; ++i) MODELS_CUDA(cudaEventElapsedTime(&ms[i], ev.e[i], ev.e[i + 1]));
    float exch = -1;  // from the backward's own work to the backward phase's end (the wait)
    if (ev.phases && ev.compute_done != nullptr) MODELS_CUDA(cudaEventElapsedTime(&exch, ev.compute_done, ev.e[2]));
    float total = 0;
    MODELS_CUDA(cudaEventElapsedTime(&total, ev.e[0], ev.e[3]));
    const auto idx = static_cast<std::size_t>(ev.step);
    if (t_fwd_.size() <= idx) {
      t_fwd_.resize(idx + 1, -1);
      t_bwd_.resize(idx + 1, -1);
      t_opt_.resize(idx + 1, -1);
      t_step_.resize(idx + 1, -1);
      t_exch_.resize(idx + 1, -1);
    }
    t_fwd_[idx] = ms[0];
    t_bwd_[idx] = ms[1];
    t_opt_[idx] = ms[2];
    t_step_[idx] = total;
    t_exch_[idx] = exch;
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
  double exch = 0;
  std::int64_t exch_steps = 0;
  for (std::size_t i = static_cast<std::size_t>(std::max<std::int64_t>(from, 0)); i < t_step_.size(); ++i) {
    if (t_step_[i] < 0) continue;
    ++p.steps;
    p.step += t_step_[i];
    if (t_fwd_[i] < 0) continue;
    ++p.phase_steps;
    p.forward += t_fwd_[i];
    p.backward += t_bwd_[i];
    p.optimizer += t_opt_[i];
    if (t_exch_[i] >= 0) {
      exch += t_exch_[i];
      ++exch_steps;
    }
  }
  if (exch_steps > 0) p.exchange_wait = exch / static_cast<double>(exch_steps);
  if (p.steps > 0) p.step /= static_cast<double>(p.steps);
  if (p.phase_steps > 0) {
    const auto n = static_cast<double>(p.phase_steps);
    p.forward /= n;
    p.backward /= n;
    p.optimizer /= n;
  }
  return p;
}

}  // namespace models
