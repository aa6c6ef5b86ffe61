#include "models/data_parallel.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <unordered_map>

#include "models/context.hpp"
#include "nccl/nccl_comm.hpp"
#include "nn/nn.hpp"
#include "nn/nn_bf16.hpp"

namespace models {

namespace kn = kernels::nccl;

std::vector<Bucket> assign_buckets(const std::vector<std::int64_t>& numels, const std::vector<DType>& dtypes,
                                   std::size_t cap_bytes, std::size_t align_elems) {
  if (numels.size() != dtypes.size()) throw std::invalid_argument("assign_buckets: numels and dtypes differ in length");
  if (align_elems == 0) align_elems = 1;
  std::vector<Bucket> out;
  std::size_t bytes = 0;  // payload of the open bucket
  for (std::size_t k = numels.size(); k-- > 0;) {
    if (numels[k] < 0) throw std::invalid_argument("assign_buckets: negative element count");
    const auto n = static_cast<std::size_t>(numels[k]);
    const std::size_t b = n * dtype_size(dtypes[k]);
    const bool open = !out.empty() && !out.back().slots.empty();
    if (!open || out.back().dtype != dtypes[k] || bytes + b > cap_bytes) {
      out.push_back(Bucket{dtypes[k], 0, {}});
      bytes = 0;
    }
    Bucket& bk = out.back();
    const std::size_t offset = (bk.numel + align_elems - 1) / align_elems * align_elems;
    bk.slots.push_back({k, offset, n});
    bk.numel = offset + n;
    bytes += b;
  }
  return out;
}

std::optional<std::string> world_size_mismatch(int world_size, int job_size, int rank, const std::string& source) {
  if (world_size < 1) return "world_size must be >= 1, not " + std::to_string(world_size);
  if (world_size == job_size) return std::nullopt;
  return "world_size " + std::to_string(world_size) + " needs a job of " + std::to_string(world_size) +
         " ranks (one per GPU); this process is rank " + std::to_string(rank) + " of a job of " +
         std::to_string(job_size) + " (" + source +
         "): run `harness run --devices all` on a host with that many GPUs (or --devices with that many), or start " +
         std::to_string(world_size) + " ranks with mpirun -np / srun -n";
}

std::optional<std::string> data_parallel_unavailable(int world_size) {
  if (auto missing = kn::nccl_build_missing()) return "data-parallel training needs NCCL: " + *missing;
  const kn::RankEnv& env = kn::World::get().env();
  if (!env.error.empty()) return env.error;
  return world_size_mismatch(world_size, env.size, env.rank, env.source);
}

namespace {
void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("data parallel: ") + what + ": " + cudaGetErrorString(e));
}

// A tensor over bytes that it does not own (a slot of a bucket).
Tensor view_of(void* ptr, const Shape& shape, DType dtype) {
  auto impl = std::make_shared<TensorImpl>();
  impl->shape = shape;
  impl->dtype = dtype;
  impl->storage = std::make_shared<Storage>();
  impl->storage->ptr = ptr;
  impl->storage->bytes = static_cast<std::size_t>(numel_of(shape)) * dtype_size(dtype);
  return Tensor(std::move(impl));
}
}  // namespace

DataParallel::DataParallel(std::vector<Tensor> params, int world_size, cudaStream_t compute, std::size_t bucket_bytes,
                           DType wire)
    : params_(std::move(params)), world_(world_size), compute_(compute), cap_bytes_(bucket_bytes), wire_(wire) {
  if (wire != DType::f32 && wire != DType::bf16)
    throw std::invalid_argument(std::string("data parallel: the all-reduce runs in f32 or bf16, not ") +
                                dtype_name(wire));
  if (auto why = data_parallel_unavailable(world_size)) throw std::runtime_error(*why);
  for (const auto& p : params_)
    if (p.dtype() != DType::f32)
      throw std::runtime_error(std::string("data parallel: float32 parameters only, not ") + dtype_name(p.dtype()));
  kn::World& w = kn::World::get();
  w.ensure_initialized();  // throws with the reason (a rank missing, ...)
  rank_ = w.env().rank;

  std::vector<std::int64_t> numels;
  std::vector<DType> dtypes;
  for (const auto& p : params_) {
    numels.push_back(p.numel());
    dtypes.push_back(p.dtype());
  }
  buckets_ = assign_buckets(numels, dtypes, cap_bytes_);
  bucket_of_.assign(params_.size(), 0);
  slot_of_.assign(params_.size(), 0);
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    Tensor flat = Tensor::zeros({static_cast<std::int64_t>(buckets_[b].numel)}, DType::f32);  // padding stays 0
    flat_.push_back(flat);
    if (wire_ == DType::bf16) wire_flat_.push_back(Tensor::zeros({static_cast<std::int64_t>(buckets_[b].numel)}, DType::bf16));
    for (std::size_t s = 0; s < buckets_[b].slots.size(); ++s) {
      bucket_of_[buckets_[b].slots[s].param] = b;
      slot_of_[buckets_[b].slots[s].param] = s;
    }
  }
  for (const auto& p : params_) impls_.push_back(p.impl());
  missing_.assign(buckets_.size(), 0);
  param_done_.assign(params_.size(), 0);
  check_cuda(cudaStreamCreateWithFlags(&comm_, cudaStreamNonBlocking), "cudaStreamCreate");
  ready_.resize(buckets_.size());
  for (auto& e : ready_) check_cuda(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
  check_cuda(cudaEventCreateWithFlags(&comm_done_, cudaEventDisableTiming), "cudaEventCreate");
  check_cuda(cudaEventCreateWithFlags(&norm_ready_, cudaEventDisableTiming), "cudaEventCreate");
  norm_buf_ = Tensor::zeros({1}, DType::f32);
  hash_buf_ = Tensor::zeros({static_cast<std::int64_t>(4 * (world_ + 1))}, DType::f32);
  check_cuda(cudaStreamSynchronize(compute_), "cudaStreamSynchronize");
}

DataParallel::~DataParallel() {
  if (comm_) (void)cudaStreamSynchronize(comm_);
  for (auto e : ready_)
    if (e) (void)cudaEventDestroy(e);
  if (comm_done_) (void)cudaEventDestroy(comm_done_);
  if (norm_ready_) (void)cudaEventDestroy(norm_ready_);
  if (comm_) (void)cudaStreamDestroy(comm_);
}

void DataParallel::backward(const Tensor& loss, cudaEvent_t compute_done) {
  for (std::size_t b = 0; b < buckets_.size(); ++b) missing_[b] = static_cast<int>(buckets_[b].slots.size());
  std::fill(param_done_.begin(), param_done_.end(), 0);
  next_launch_ = 0;
  std::unordered_map<const TensorImpl*, std::size_t> index;
  for (std::size_t i = 0; i < impls_.size(); ++i) index[impls_[i]] = i;
  {
    LeafGradHook hook([&](const Tensor& leaf) {
      if (auto it = index.find(leaf.impl()); it != index.end()) {
        const std::size_t i = it->second;
        if (param_done_[i]) return;
        param_done_[i] = 1;
        const BucketSlot& s = buckets_[bucket_of_[i]].slots[slot_of_[i]];
        float* dst = flat_[bucket_of_[i]].data<float>() + s.offset;
        const Tensor g = leaf.grad();
        if (g.defined()) {
          if (g.numel() != static_cast<std::int64_t>(s.numel) || g.dtype() != DType::f32)
            throw std::logic_error("data parallel: a gradient's size or type differs from its parameter's");
          check_cuda(cudaMemcpyAsync(dst, g.raw(), s.numel * sizeof(float), cudaMemcpyDeviceToDevice, compute_),
                     "cudaMemcpyAsync");
        } else {
          check_cuda(cudaMemsetAsync(dst, 0, s.numel * sizeof(float), compute_), "cudaMemsetAsync");
        }
        --missing_[bucket_of_[i]];
        launch_ready();
      }
    });
    models::backward(loss);
  }
  // Parameters the backward never reached: zero gradients (every rank must send every bucket).
  for (std::size_t i = 0; i < params_.size(); ++i) {
    if (param_done_[i]) continue;
    const BucketSlot& s = buckets_[bucket_of_[i]].slots[slot_of_[i]];
    check_cuda(cudaMemsetAsync(flat_[bucket_of_[i]].data<float>() + s.offset, 0, s.numel * sizeof(float), compute_),
               "cudaMemsetAsync");
    param_done_[i] = 1;
    --missing_[bucket_of_[i]];
  }
  launch_ready();
  if (next_launch_ != buckets_.size()) throw std::logic_error("data parallel: a bucket was not started");
  if (compute_done != nullptr) check_cuda(cudaEventRecord(compute_done, compute_), "cudaEventRecord");
  check_cuda(cudaEventRecord(comm_done_, comm_), "cudaEventRecord");
  check_cuda(cudaStreamWaitEvent(compute_, comm_done_, 0), "cudaStreamWaitEvent");
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const BucketSlot& s = buckets_[bucket_of_[i]].slots[slot_of_[i]];
    params_[i].set_grad(view_of(flat_[bucket_of_[i]].data<float>() + s.offset, params_[i].shape(), DType::f32));
  }
}

// Buckets start in index order on every rank (NCCL needs the same order everywhere).
void DataParallel::launch_ready() {
  while (next_launch_ < buckets_.size() && missing_[next_launch_] == 0) launch(next_launch_++);
}

void DataParallel::launch(std::size_t b) {
  check_cuda(cudaEventRecord(ready_[b], compute_), "cudaEventRecord");
  check_cuda(cudaStreamWaitEvent(comm_, ready_[b], 0), "cudaStreamWaitEvent");
  const std::size_t n = buckets_[b].numel;
  kn::Counts k;
  k.count = k.send = k.recv = n;
  float* p = flat_[b].data<float>();
  const float inv_world = 1.0f / static_cast<float>(world_);
  if (wire_ == DType::f32) {
    kn::World::get().run(kn::Collective::all_reduce, kn::Dtype::f32, p, p, k, comm_);  // sum, in place
    check_cuda(kernels::nn::axpby<float>(inv_world, p, 0.0f, p, n, comm_), "axpby (1/world)");
    return;
  }
  // bf16 wire: g / world rounded to bf16, summed in bf16, widened back (header).
  auto* w = wire_flat_[b].data<kernels::nn::bf16>();
  check_cuda(kernels::nn::axpby<float>(inv_world, p, 0.0f, p, n, comm_), "axpby (1/world)");
  check_cuda(kernels::nn::cast_f32_to_bf16(p, w, n, comm_), "cast_f32_to_bf16");
  kn::World::get().run(kn::Collective::all_reduce, kn::Dtype::bf16, w, w, k, comm_);  // sum, in place
  check_cuda(kernels::nn::cast_bf16_to_f32(w, p, n, comm_), "cast_bf16_to_f32");
}

void DataParallel::clip_grad_norm(double max_norm) {
  // Over the buckets (their padding is zero): ||g||^2 on this rank, then rank 0's value.
  float* sumsq = norm_buf_.data<float>();
  check_cuda(cudaMemsetAsync(sumsq, 0, sizeof(float), compute_), "cudaMemsetAsync");
  for (std::size_t b = 0; b < buckets_.size(); ++b)
    check_cuda(kernels::nn::sum_squares<float>(flat_[b].data<float>(), sumsq, buckets_[b].numel, compute_), "sum_squares");
  check_cuda(cudaEventRecord(norm_ready_, compute_), "cudaEventRecord");
  check_cuda(cudaStreamWaitEvent(comm_, norm_ready_, 0), "cudaStreamWaitEvent");
  kn::Counts k;
  k.count = k.send = k.recv = 1;
  kn::World::get().run(kn::Collective::broadcast, kn::Dtype::f32, sumsq, sumsq, k, comm_);
  check_cuda(cudaEventRecord(comm_done_, comm_), "cudaEventRecord");
  check_cuda(cudaStreamWaitEvent(compute_, comm_done_, 0), "cudaStreamWaitEvent");
  for (std::size_t b = 0; b < buckets_.size(); ++b)
    check_cuda(kernels::nn::clip_by_norm<float>(flat_[b].data<float>(), buckets_[b].numel, sumsq,
                                                static_cast<float>(max_norm), compute_),
               "clip_by_norm");
}

std::uint64_t DataParallel::check_identical_weights(const std::string& when) {
  check_cuda(cudaStreamSynchronize(compute_), "cudaStreamSynchronize");
  // FNV-1a over the bytes of every parameter, 8 at a time (the tail zero-padded).
  std::uint64_t h = 1469598103934665603ull;
  std::vector<unsigned char> host;
  for (const auto& p : params_) {
    host.assign(p.bytes() + 8, 0);
    check_cuda(cudaMemcpy(host.data(), p.raw(), p.bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy");
    for (std::size_t i = 0; i < p.bytes(); i += 8) {
      std::uint64_t word = 0;
      std::memcpy(&word, host.data() + i, 8);
      h = (h ^ word) * 1099511628211ull;
    }
  }
  // The hash as four 16-bit pieces, exact in float32, gathered from every rank.
  float mine[4];
  for (int i = 0; i < 4; ++i) mine[i] = static_cast<float>((h >> (16 * i)) & 0xffffu);
  float* send = hash_buf_.data<float>();
  float* recv = send + 4;
  check_cuda(cudaMemcpyAsync(send, mine, sizeof mine, cudaMemcpyHostToDevice, comm_), "cudaMemcpyAsync");
  kn::Counts k;
  k.count = k.recv = static_cast<std::size_t>(4 * world_);
  k.send = k.chunk = 4;
  kn::World::get().run(kn::Collective::all_gather, kn::Dtype::f32, send, recv, k, comm_);
  std::vector<float> all(static_cast<std::size_t>(4 * world_));
  check_cuda(cudaMemcpyAsync(all.data(), recv, all.size() * sizeof(float), cudaMemcpyDeviceToHost, comm_),
             "cudaMemcpyAsync");
  check_cuda(cudaStreamSynchronize(comm_), "cudaStreamSynchronize");
  ++weight_checks_;
  std::string text;
  bool same = true;
  for (int r = 0; r < world_; ++r) {
    std::uint64_t hr = 0;
    for (int i = 0; i < 4; ++i) hr |= static_cast<std::uint64_t>(all[static_cast<std::size_t>(4 * r + i)]) << (16 * i);
    same = same && hr == h;
    char buf[48];
    std::snprintf(buf, sizeof buf, "%srank %d %016llx", r ? ", " : "", r, static_cast<unsigned long long>(hr));
    text += buf;
  }
  if (!same)
    throw std::runtime_error("data parallel: the weights differ across ranks " + when + " (hash of every parameter: " +
                             text + ")");
  return h;
}

}  // namespace models
