#pragma once
// The training macro-benchmark's step: an encoder-decoder Transformer learning to copy
// random token sequences (teacher forcing: decoder input = BOS + target[:-1]), Adam with
// warm-up + cosine schedule and global-norm clipping. Each step runs forward, backward and
// the optimizer on one stream with no host synchronization and no cudaMalloc once the
// caching allocator is warm; CUDA events split every step into phases, NVTX ranges mark
// step / phase / layer.
//
// With graph = true (a non-default stream required) the first graph_warmup_steps steps run
// eagerly (the allocator warms up), then forward + backward + clip + Adam's update +
// zero_grad + the loss log are captured once into a CUDA graph (the allocator's private
// pool keeps the captured blocks reserved) and every step from then on is: Adam::prepare()
// (this step's lr and bias corrections into device memory, one tiny kernel), three D2D
// copies of the step's data batch into static input tensors, one cudaGraphLaunch. Step
// times only (CUDA events around the launch): no phase times with graph.
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "models/allocator.hpp"
#include "models/context.hpp"
#include "models/layers.hpp"
#include "models/optim.hpp"

namespace models {

class DataParallel;

struct TrainConfig {
  TransformerConfig model;  // model.precision: f32 or bf16 (mixed precision, precision.hpp)
  std::int64_t batch = 100;
  std::int64_t seq_len = 13;  // source and target length, unless src_len / tgt_len say otherwise
  // Copy task with different lengths: the target is the first tgt_len source tokens, so
  // tgt_len <= src_len (the trainer rejects a longer target). 0: seq_len.
  std::int64_t src_len = 0, tgt_len = 0;
  std::int64_t source_length() const { return src_len > 0 ? src_len : seq_len; }
  std::int64_t target_length() const { return tgt_len > 0 ? tgt_len : seq_len; }
  double lr = 2e-4;
  double beta1 = 0.9, beta2 = 0.98, eps = 1e-9;
  std::int64_t warmup_steps = 4;
  std::int64_t schedule_steps = 2000;  // cosine to lr/10 at this step
  double clip_norm = 1.0;              // 0: no clipping
  std::string gemm = "cublas";
  AttentionImpl attention = AttentionImpl::flash;
  std::uint64_t seed = 42;
  int data_batches = 4;  // distinct pre-generated batches, cycled
  bool fused = true;           // fused bias + activation and residual + LayerNorm (Context::fused)
  bool graph = false;          // capture the step once into a CUDA graph and replay it
  int graph_warmup_steps = 2;  // eager steps before the capture (>= 1: the allocator warms up)
  // Data parallel (data_parallel.hpp): world_size > 1 joins the process's NCCL job; this
  // rank's batches come from a rank-dependent seed (rank 0's are the single-GPU ones).
  int world_size = 1;
  std::size_t bucket_bytes = 25u << 20;
  DType grad_wire = DType::f32;  // the all-reduce's element type: f32 or bf16 (DataParallel)
};

struct PhaseTimes {  // milliseconds, means over the harvested steps
  std::int64_t steps = 0;
  double forward = 0, backward = 0, optimizer = 0, step = 0;
  // Data parallel: the part of `backward` after the backward's own work on the compute
  // stream, until the gradient exchange is done (its exposed, not overlapped, part);
  // -1 at world_size 1.
  double exchange_wait = -1;
  std::int64_t phase_steps = 0;  // steps with phase times (eager ones); forward.. average those
};

// What one training step launches (from cudaGraphGetNodes on a capture of the step body,
// plus what runs outside the graph). Equal for graph on and off: the same code runs.
struct StepLaunches {
  std::int64_t kernels = 0;   // kernels executed per step (graph kernel nodes + outside ones)
  std::int64_t memsets = 0;   // memset nodes (zero-filled tensors)
  std::int64_t memcopies = 0; // memcpy nodes (+ the data-batch copies with graph)
  std::int64_t other = 0;     // any other node type
  std::int64_t host_launches = 0;  // CUDA launch calls the host makes per step
};

class TransformerTrainer {
 public:
  TransformerTrainer(const TrainConfig& config, cudaStream_t stream);
  ~TransformerTrainer();
  TransformerTrainer(const TransformerTrainer&) = delete;
  TransformerTrainer& operator=(const TransformerTrainer&) = delete;

  // One training step on data batch `batch_index` (default: the next one in turn).
  void step(int batch_index = -1);
  std::int64_t steps() const { return step_; }
  // Loss of every step so far (synchronizes; older than the last 65536 steps dropped).
  std::vector<double> losses();
  // Phase times over steps [from, steps()) (synchronizes).
  PhaseTimes phase_times(std::int64_t from = 0);
  const AllocatorStats& allocator_stats() { return context_.allocator().stats(); }
  // cudaMalloc calls made by each step (index = step).
  const std::vector<std::uint64_t>& mallocs_per_step() const { return mallocs_per_step_; }
  std::int64_t parameter_count() const { return model_->parameter_count(); }
  // Target tokens (the predicted positions) per step.
  std::int64_t tokens_per_step() const { return config_.batch * config_.target_length(); }
  const TrainConfig& config() const { return config_; }
  Context& context() { return context_; }
  // True once the step graph is captured (graph = true, after the warm-up steps).
  bool graph_captured() const { return exec_ != nullptr; }
  // Launches per step. With the graph captured: its nodes; else a capture of one step body
  // that is never launched (no device state changes; the step counter does not move).
  StepLaunches step_launches();
  DataParallel* data_parallel() { return dp_.get(); }  // null at world_size 1

 private:
  struct Events {
    cudaEvent_t e[4] = {};  // step start, forward end, backward end, step end
    cudaEvent_t compute_done = nullptr;  // data parallel: the backward's own work done
    std::int64_t step = -1;
    bool phases = true;
  };
  void harvest(bool wait);
  // Forward, backward, clip, Adam's update, zero_grad, loss log: what the graph captures.
  // ev: phase events to record (eager), or nullptr.
  void step_body(const Tensor& src, const Tensor& tgt_in, const Tensor& tgt_out, Events* ev);
  // Captures step_body on the static inputs into a graph (an error names the failed call).
  cudaGraph_t capture_body(const Tensor& src, const Tensor& tgt_in, const Tensor& tgt_out);
  static StepLaunches count_nodes(cudaGraph_t graph);
  void destroy_graph() noexcept;

  TrainConfig config_;
  Context context_;  // before every tensor member: destroyed after them
  std::unique_ptr<Transformer> model_;
  std::unique_ptr<Adam> optimizer_;
  std::unique_ptr<DataParallel> dp_;
  WarmupCosine schedule_;
  std::vector<Tensor> src_, tgt_in_, tgt_out_;
  Tensor loss_log_;      // float (kLossLog)
  Tensor loss_counter_;  // int32: the loss log's next slot (kernels::nn::log_scalar)
  Tensor src_static_, tgt_in_static_, tgt_out_static_;  // graph inputs (graph = true)
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  StepLaunches graph_launches_;
  std::vector<Tensor> bf16_weights_;  // precision bf16: cast to bf16 once per step
  std::int64_t step_ = 0;
  std::vector<std::uint64_t> mallocs_per_step_;
  std::deque<Events> in_flight_;
  std::vector<Events> free_events_;
  std::vector<double> t_fwd_, t_bwd_, t_opt_, t_step_;  // per harvested step, by step index
  std::vector<double> t_exch_;                          // data parallel: exposed exchange
};

}  // namespace models
