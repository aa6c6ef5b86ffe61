#pragma once
// Data-parallel training over the ranks of an NCCL job (issue 19): every rank holds the
// same model (same seed: identical initial weights) and trains on its own data; after each
// backward the gradients are the mean over the ranks, so every rank takes the same
// optimizer step and the weights stay identical (checked with check_identical_weights).
//
// Gradient buckets, as PyTorch DDP: the parameters in reverse registration order (the
// order in which the backward finishes them, roughly) are packed into flat buffers of
// about `bucket_bytes`. A LeafGradHook (tensor.hpp) sees each parameter's gradient become
// final during the backward and copies it into its bucket (compute stream); when every
// gradient of a bucket is in, and every earlier bucket has been started, an event orders
// the communication stream after those copies and the bucket's all-reduce (sum, then
// scaled by 1/world_size on the same stream) starts there, overlapped with the rest of
// the backward. At the end of backward() the compute stream waits for the communication
// stream, and every parameter's .grad() becomes a view of its bucket: clipping and the
// optimizer then run on the averaged gradients, identically on every rank.
//
// The exchange's element type (`wire`): f32 (exact mean up to the sum's rounding), or bf16,
// as PyTorch's bf16_compress_hook: each rank scales its bucket by 1/world_size in f32,
// rounds it to bf16 (a relative error up to 2^-9 per element), the bf16 buffers are summed
// by NCCL (in bf16) and the result widened back into the f32 bucket. Half the bytes cross
// the links and NCCL's kernels hold the SMs half as long, which matters when the backward
// is short (bf16 training: ~13 ms of backward against ~220 MB of f32 gradients). Every
// rank receives the same bf16 sums (NCCL's ring and tree give every rank one result), so
// the weights stay identical.
//
// The communicator is the process's kernels::nccl::World (kernels/nccl: rank and size from
// the harness launcher, mpirun or srun; its deadline and watchdog turn a dead peer into a
// clear message and ncclCommAbort instead of a hang). Without NCCL in the build this still
// compiles; the constructor then throws with the reason (data_parallel_unavailable).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "models/tensor.hpp"

namespace models {

// ---- bucket assignment (pure host code) --------------------------------------------------

struct BucketSlot {
  std::size_t param = 0;   // index in the parameter list (registration order)
  std::size_t offset = 0;  // elements from the bucket's start
  std::size_t numel = 0;
};
struct Bucket {
  DType dtype = DType::f32;
  std::size_t numel = 0;  // elements of the flat buffer (slots plus alignment padding)
  std::vector<BucketSlot> slots;
};
// Parameters in reverse registration order into buckets of at most cap_bytes (a parameter
// larger than the cap gets a bucket of its own; a dtype change starts a new bucket). Each
// slot's offset is a multiple of align_elems (aligned views for vectorized kernels).
std::vector<Bucket> assign_buckets(const std::vector<std::int64_t>& numels, const std::vector<DType>& dtypes,
                                   std::size_t cap_bytes, std::size_t align_elems = 64);

// Why data parallelism over world_size ranks cannot run in a job of job_size ranks (this
// process is `rank`, ranks from `source`), or nothing. Pure: testable anywhere.
std::optional<std::string> world_size_mismatch(int world_size, int job_size, int rank, const std::string& source);
// The same for this process: NCCL missing from the build, contradictory rank variables,
// or a job of another size.
std::optional<std::string> data_parallel_unavailable(int world_size);

// ---- the data-parallel gradient exchange --------------------------------------------------

class DataParallel {
 public:
  // params: the model's parameters in registration order (float32). compute: the stream
  // of the engine's context. Throws std::runtime_error when unavailable (see above).
  // wire: DType::f32 or DType::bf16, the all-reduce's element type (above).
  DataParallel(std::vector<Tensor> params, int world_size, cudaStream_t compute, std::size_t bucket_bytes,
               DType wire = DType::f32);
  ~DataParallel();
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  // models::backward(loss) with the bucketed all-reduce overlapped; afterwards (in the
  // compute stream's order) every parameter's .grad() is the mean over the ranks.
  // compute_done, if given, is recorded on the compute stream after the backward's own work
  // and before the compute stream waits for the exchange: from it to the next event on the
  // compute stream is the exchange's exposed part (the trainer's phase exchange_wait).
  void backward(const Tensor& loss, cudaEvent_t compute_done = nullptr);
  // Global-norm clipping of the averaged gradients (after backward): as clip_grad_norm
  // (optim.hpp), except that the sum of squares, a float atomicAdd reduction whose last
  // bits vary from run to run, is rank 0's, broadcast to every rank; otherwise each rank
  // would scale its (identical) gradients by a factor differing in the last bits, and
  // Adam would take the weights apart from the second step on.
  void clip_grad_norm(double max_norm);
  // Synchronizes, hashes every parameter's bytes on the host (64-bit FNV-1a over the
  // words), gathers every rank's hash; throws std::runtime_error naming the ranks and
  // hashes when they differ. Returns this rank's hash. Every rank must call it together.
  std::uint64_t check_identical_weights(const std::string& when);

  int rank() const { return rank_; }
  int world_size() const { return world_; }
  const std::vector<Bucket>& buckets() const { return buckets_; }
  std::size_t bucket_bytes() const { return cap_bytes_; }
  DType wire() const { return wire_; }
  std::int64_t weight_checks() const { return weight_checks_; }

 private:
  void on_leaf(const Tensor& leaf);
  void launch_ready();
  void launch(std::size_t b);

  std::vector<Tensor> params_;
  int world_ = 1, rank_ = 0;
  cudaStream_t compute_ = nullptr, comm_ = nullptr;
  std::size_t cap_bytes_ = 0;
  std::vector<Bucket> buckets_;
  std::vector<Tensor> flat_;                    // one buffer per bucket (context allocator)
  DType wire_ = DType::f32;
  std::vector<Tensor> wire_flat_;               // bf16 wire: one bf16 buffer per bucket
  std::vector<std::size_t> bucket_of_, slot_of_;  // by parameter index
  std::vector<const TensorImpl*> impls_;        // by parameter index (the hook's lookup)
  std::vector<int> missing_;                    // per bucket: gradients not yet copied in
  std::vector<char> param_done_;
  std::size_t next_launch_ = 0;
  std::vector<cudaEvent_t> ready_;              // per bucket: its copies are done (compute)
  cudaEvent_t comm_done_ = nullptr;
  Tensor hash_buf_;                             // 4 floats per rank (the gather)
  Tensor norm_buf_;                             // the sum of squares (1 float)
  cudaEvent_t norm_ready_ = nullptr;
  std::int64_t weight_checks_ = 0;
};

}  // namespace models
