#pragma once
// The training macro-benchmark's step: an encoder-decoder Transformer learning to copy
// random token sequences (teacher forcing: decoder input = BOS + target[:-1]), Adam with
// warm-up + cosine schedule and global-norm clipping. Each step runs forward, backward and
// the optimizer on one stream with no host synchronization and no cudaMalloc once the
// caching allocator is warm; CUDA events split every step into phases, NVTX ranges mark
// step / phase / layer.
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

struct TrainConfig {
  TransformerConfig model;  // model.precision: f32 or bf16 (mixed precision, precision.hpp)
  std::int64_t batch = 100;
  std::int64_t seq_len = 13;  // source and target length
  double lr = 2e-4;
  double beta1 = 0.9, beta2 = 0.98, eps = 1e-9;
  std::int64_t warmup_steps = 4;
  std::int64_t schedule_steps = 2000;  // cosine to lr/10 at this step
  double clip_norm = 1.0;              // 0: no clipping
  std::string gemm = "cublas";
  AttentionImpl attention = AttentionImpl::flash;
  std::uint64_t seed = 42;
  int data_batches = 4;  // distinct pre-generated batches, cycled
};

struct PhaseTimes {  // milliseconds, means over the harvested steps
  std::int64_t steps = 0;
  double forward = 0, backward = 0, optimizer = 0, step = 0;
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
  std::int64_t tokens_per_step() const { return config_.batch * config_.seq_len; }
  const TrainConfig& config() const { return config_; }
  Context& context() { return context_; }

 private:
  struct Events {
    cudaEvent_t e[4] = {};
    std::int64_t step = -1;
  };
  void harvest(bool wait);

  TrainConfig config_;
  Context context_;  // before every tensor member: destroyed after them
  std::unique_ptr<Transformer> model_;
  std::unique_ptr<Adam> optimizer_;
  WarmupCosine schedule_;
  std::vector<Tensor> src_, tgt_in_, tgt_out_;
  std::vector<Tensor> bf16_weights_;  // precision bf16: cast to bf16 once per step
  Tensor loss_log_;  // float (kLossLog)
  std::int64_t step_ = 0;
  std::vector<std::uint64_t> mallocs_per_step_;
  std::deque<Events> in_flight_;
  std::vector<Events> free_events_;
  std::vector<double> t_fwd_, t_bwd_, t_opt_, t_step_;  // per harvested step, by step index
};

}  // namespace models
