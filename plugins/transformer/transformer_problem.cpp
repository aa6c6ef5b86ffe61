// The `train_transformer` problem: one launch = one training step of an encoder-decoder
// Transformer (models/, our own autograd engine) on a copy task of random tokens, in FP32
// or in bf16 mixed precision (docs/models.md: float master weights and Adam, bf16
// activations and tensor-core GEMMs with float accumulation, LayerNorm / softmax / loss
// statistics in float).
//
// Variants pick the kernel set (and the precision):
//   ours             our GEMM (kernels/gemm `auto`: the shape-aware FP32 choice of coarsened /
//                    split-K / GEMV, NT and TN operands read in place, no transpose kernels)
//                    + FlashAttention-2 on tensor cores in 3xTF32 (kernels/attention
//                    flash_*_tf32x3: FP32 accuracy, the method of PyTorch's FP32 SDPA)
//   cublas_flash     cuBLAS SGEMM (FP32, no TF32) + our FlashAttention-2 in FP32 FMAs   [the reference]
//   naive_attention  cuBLAS SGEMM + the naive attention of kernels/attention (materialized
//                    B*H*N*N scores)
//   ours_bf16        bf16: our GEMM kernels::gemm::gemm_bf16 (wgmma / mma.sync) + our
//                    flash_tc (bf16 FlashAttention-2), kernels/nn bf16 kernels
//   cublas_bf16      bf16: cuBLAS cublasGemmEx (CUDA_R_16BF, CUBLAS_COMPUTE_32F) + flash_tc
// The bf16 variants need head_dim 64 or 128 (flash_tc's kernels): other shapes skip.
//
// Lengths: seq_len for source and target, unless src_len / tgt_len (0: seq_len) differ;
// the copy task's target is then the first tgt_len source tokens (tgt_len > src_len is
// rejected), and cross-attention runs with Nq = tgt_len, Nk = src_len.
//
// Check (documented): the checked run rebuilds the model from the seed and trains
// `check_steps` steps on one fixed batch; its outputs are those losses. The run fails
// (error) when a loss is not finite or the last is not below the first; the losses must
// match the reference variant's within the tolerance (same initial weights and data: they
// differ only by summation order, amplified a little by the Adam steps). The bf16 variants
// are compared with the same FP32 reference under a looser tolerance, carried by their
// output (kBf16Tolerance below): bf16 keeps 8 significant bits, so each activation and
// GEMM operand is rounded with a relative error up to 2^-9 = 0.2%; the logits, hence the
// loss (~ln vocab at the start), move by a few tenths of a percent, and the Adam updates
// (sign-like for the first steps) carry slightly different weights into the next steps.
// Timed runs then continue training (one step per launch) on a pool of batches.
//
// graph (true|false, default false): the trainer captures the step once into a CUDA graph
// after two eager steps and replays it (models/trainer.hpp); both are measured by the
// suite as separate rows (graph=false / graph=true).
// fused (true|false, default true): the layers' fused elementwise tails (bias + activation,
// residual + LayerNorm, the parallel bias gradient: models Context::fused); false runs the
// separate kernels, so that both can be measured.
// Data parallel (world_size > 1, models/data_parallel.hpp): one rank per GPU, a collective
// case (every rank of the job runs it in step: `harness run --devices all`, mpirun, srun);
// each rank trains the same model on its own batches, the gradients are all-reduced in
// buckets overlapped with the backward. The weights are compared across ranks (a hash of
// every parameter) after building the model, after each check step and after the timed
// steps: a difference is an error. The single-GPU figure for the scaling efficiency is
// measured at the start of the same case on every rank alone (baseline_steps steps of the
// same model without communication, after 2 untimed), so the efficiency compares the same
// GPUs in the same run: tokens/s(job) / (world_size * tokens/s(one GPU)).
//
// Extra metrics the report has no field for (phase times from CUDA events, tokens/s, peak
// allocator memory, cudaMalloc counts in steady state, kernels per step and launch calls per
// step, graph on/off, the loss curve, the model FLOPs per step and the MFU against the GPU's
// dense bf16 peak: models/mfu.hpp) are appended, one
// JSON object per (case, variant), to $HARNESS_TRAIN_METRICS (default
// train_transformer_metrics.jsonl in the working directory) when the variant's model is
// released, and summarized on stderr.
//
// This file is the one bridge between models/ and the harness: models/ throws its own
// models::CudaError / models::OutOfMemory, which the runner does not know; every call
// into the engine from a harness entry point goes through rethrow_translated() so that an
// out-of-memory model is reported as skipped and a context-corrupting (sticky) CUDA error
// still ends the case as crashed.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attention/attention.hpp"
#include "harness/checked.hpp"
#include "harness/error.hpp"
#include "harness/registry.hpp"
#include "models/check.hpp"
#include "models/data_parallel.hpp"
#include "models/mfu.hpp"
#include "models/trainer.hpp"

namespace {

using harness::Backend;

// Losses of the bf16 variants against the FP32 reference: abs 0.02 + 1% (see the header;
// measured on an H200 at the seed's configuration: max |bf16 - FP32| 0.0035 over the 4
// check losses of ~9.9, against 0.12 allowed).
constexpr harness::Tolerance kBf16Tolerance{2e-2, 1e-2};

struct Setup {
  models::TrainConfig train;
  int check_steps = 4;
  int baseline_steps = 10;
};

Setup setup_of(const harness::Params& p) {
  Setup s;
  auto& c = s.train;
  c.batch = p.get_int("batch");
  c.seq_len = p.get_int("seq_len");
  c.src_len = p.get_int("src_len");
  c.tgt_len = p.get_int("tgt_len");
  c.model.encoder_layers = static_cast<int>(p.get_int("encoder_layers"));
  c.model.decoder_layers = static_cast<int>(p.get_int("decoder_layers"));
  c.model.heads = static_cast<int>(p.get_int("heads"));
  c.model.d_model = p.get_int("d_model");
  c.model.hidden = p.get_int("hidden");
  c.model.vocab = p.get_int("vocab");
  c.model.activation = p.get_string("activation") == "gelu" ? models::Activation::gelu : models::Activation::relu;
  c.lr = p.get_float("lr");
  c.warmup_steps = p.get_int("warmup_steps");
  c.schedule_steps = p.get_int("schedule_steps");
  c.clip_norm = p.get_float("clip_norm");
  s.check_steps = static_cast<int>(p.get_int("check_steps"));
  c.graph = p.get_bool("graph");
  c.fused = p.get_bool("fused");
  c.world_size = static_cast<int>(p.get_int("world_size"));
  c.bucket_bytes = static_cast<std::size_t>(p.get_int("bucket_mb")) << 20;
  c.grad_wire = p.get_string("grad_reduce") == "bf16" ? models::DType::bf16 : models::DType::f32;
  s.baseline_steps = static_cast<int>(p.get_int("baseline_steps"));
  return s;
}

std::int64_t head_dim(const harness::Params& p) { return p.get_int("d_model") / p.get_int("heads"); }

double param_count(const models::TransformerConfig& c) {
  const double E = static_cast<double>(c.d_model), F = static_cast<double>(c.hidden), V = static_cast<double>(c.vocab);
  const double enc = 4 * E * E + 4 * E + 2 * E * F + F + E + 4 * E;
  const double dec = 8 * E * E + 8 * E + 2 * E * F + F + E + 6 * E;
  return 2 * V * E + c.encoder_layers * enc + c.decoder_layers * dec + 4 * E + E * V + V;
}

// FLOPs of one step: GEMMs 3x their forward (dX and dW), attention cores forward + 2.5x
// backward (causal self-attention of the decoder counts half), embeddings and elementwise
// work left out. Source length Ns (encoder, cross-attention keys), target length Nt
// (decoder); the cross-attention's K and V projections run on the Ns memory tokens. The
// padded query rows of cross-attention at Nt != Ns are not counted (not useful work).
harness::Work step_work(const harness::Params& p) {
  const auto s = setup_of(p);
  const auto& c = s.train.model;
  const double B = static_cast<double>(s.train.batch), Ns = static_cast<double>(s.train.source_length()),
               Nt = static_cast<double>(s.train.target_length());
  const double Ts = B * Ns, Tt = B * Nt, E = static_cast<double>(c.d_model), F = static_cast<double>(c.hidden),
               V = static_cast<double>(c.vocab);
  const double gemm_fwd = c.encoder_layers * 2 * Ts * (4 * E * E + 2 * E * F) +
                          c.decoder_layers * 2 * (Tt * (6 * E * E + 2 * E * F) + Ts * 2 * E * E) + 2 * Tt * E * V;
  const double attn_fwd =
      c.encoder_layers * 4 * B * Ns * Ns * E + c.decoder_layers * (2 * B * Nt * Nt * E + 4 * B * Nt * Ns * E);
  harness::Work w;
  w.flops = 3 * gemm_fwd + 3.5 * attn_fwd;
  // Minimal traffic: the optimizer reads p, g, m, v and writes p, m, v (FP32), plus the
  // weights read in the forward and twice in the backward.
  w.bytes = param_count(c) * 4.0 * 10;
  return w;
}

// Rethrows the exception in flight, the engine's own translated into the harness's (call
// from a catch block).
[[noreturn]] void rethrow_translated() {
  try {
    throw;
  } catch (const models::OutOfMemory& e) {
    throw harness::OutOfMemory(e.what());
  } catch (const models::CudaError& e) {
    throw harness::CudaError(e.what(), e.code(), e.sticky());
  }
}

std::string metrics_path() {
  const char* env = std::getenv("HARNESS_TRAIN_METRICS");
  return env && *env ? env : "train_transformer_metrics.jsonl";
}

// The stderr summary of one metrics object (metrics_json).
std::string summary_line(const nlohmann::json& j, const std::string& variant, const std::string& params) {
  const auto& phase = j["phase_ms"];
  const auto& alloc = j["allocator"];
  const std::string phases =
      phase["forward"].is_null()
          ? std::string("no phase times with graph")
          : fmt::format("forward {:.3f}, backward {:.3f}, optimizer {:.3f}", phase["forward"].get<double>(),
                        phase["backward"].get<double>(), phase["optimizer"].get<double>());
  const std::string mfu = j["mfu"].is_null() ? std::string("MFU: ") + j["peak_source"].get<std::string>()
                                              : fmt::format("MFU {:.1f}% of {:.1f} TFLOP/s dense bf16",
                                                            100 * j["mfu"].get<double>(), j["peak_tflops"].get<double>());
  const std::string kernels = j["kernels_per_step"].is_null()
                                  ? std::string("kernels/step unknown")
                                  : fmt::format("{} kernels/step, {} host launch calls/step",
                                                j["kernels_per_step"].get<long long>(),
                                                j["step_launches"]["host_launch_calls"].get<long long>());
  return fmt::format(
      "train_transformer/{} {}: graph {}, fused {}, {} steps, {:.3f} ms/step ({}; CUDA events, mean of {} steps), {}, "
      "{:.0f} tokens/s, {}, peak {:.1f} MiB in use / {:.1f} MiB reserved, cudaMalloc after the check steps: {}, "
      "loss {:.4f} -> {:.4f}",
      variant, params, j["graph"].get<bool>() ? "on" : "off", j["fused"].get<bool>() ? "on" : "off", j["steps"].get<long long>(), phase["step"].get<double>(),
      phases, j["timed_steps_in_phase_means"].get<long long>(), kernels, j["tokens_per_s"].get<double>(), mfu,
      alloc["peak_bytes_in_use"].get<double>() / (1 << 20), alloc["peak_bytes_reserved"].get<double>() / (1 << 20),
      alloc["cuda_malloc_calls_after_check_steps"].get<unsigned long long>(), j["loss_first"].get<double>(),
      j["loss_last"].get<double>());
}

class TrainInstance final : public harness::Instance {
 public:
  TrainInstance(const harness::Params& p, std::uint64_t seed) : params_(p), setup_(setup_of(p)) {
    setup_.train.seed = seed;
  }
  ~TrainInstance() override {
    try {
      finish();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "train_transformer: writing metrics failed: %s\n", e.what());
    }
  }

  void prepare(Backend) override {}
  void reset_outputs(Backend, cudaStream_t) override {
    reset_ = true;
    check_losses_.clear();
  }
  std::vector<harness::Output> read_outputs(Backend) override {
    if (check_losses_.empty()) throw std::runtime_error("train_transformer: no check run happened");
    std::string curve;
    for (float l : check_losses_) curve += fmt::format("{}{:.5f}", curve.empty() ? "" : " ", l);
    for (float l : check_losses_)
      if (!std::isfinite(l)) throw std::runtime_error("train_transformer: loss not finite over the check steps: " + curve);
    if (!(check_losses_.back() < check_losses_.front()))
      throw std::runtime_error("train_transformer: loss did not decrease over the check steps: " + curve);
    harness::Output out("loss per check step (one fixed batch)", check_losses_);
    if (precision_ == models::Precision::bf16) out.tolerance = kBf16Tolerance;
    return {out};
  }
  // The model lives in the engine's caching allocator, built at the checked launch (after
  // the runner asks for this): its peak goes to the metrics file instead.
  std::size_t device_bytes() const override { return 0; }

  // (A function-try-block: every engine exception leaves as the harness's.)
  void run(const std::string& variant, const std::string& gemm, models::AttentionImpl attention,
           models::Precision precision, harness::LaunchContext& ctx) try {
    if (reset_ || !trainer_ || variant_ != variant) {
      finish();
      models::TrainConfig c = setup_.train;
      c.gemm = gemm;
      c.attention = attention;
      c.model.precision = precision;
      precision_ = precision;
      if (c.world_size > 1 && baseline_variant_ != variant) measure_baseline(c, ctx.stream);
      baseline_variant_ = variant;
      trainer_ = std::make_unique<models::TransformerTrainer>(c, ctx.stream);
      variant_ = variant;
      auto* dp = trainer_->data_parallel();
      if (dp) dp->check_identical_weights("after building the model");
      for (int i = 0; i < setup_.check_steps; ++i) {
        trainer_->step(0);
        if (dp) dp->check_identical_weights(fmt::format("after check step {}", i + 1));
      }
      const auto l = trainer_->losses();
      check_losses_.assign(l.begin(), l.end());
      reset_ = false;
      return;
    }
    trainer_->step();
  } catch (...) {
    rethrow_translated();
  }

 private:
  // The current model's figures for the report (the runner asks after the timed steps).
  nlohmann::json extra() override try {
    if (!trainer_ || trainer_->steps() <= setup_.check_steps) return nullptr;
    if (auto* dp = trainer_->data_parallel())
      dp->check_identical_weights(fmt::format("after {} steps", trainer_->steps()));
    return metrics_json(*trainer_);
  } catch (...) {
    rethrow_translated();
  }

  // Writes the metrics of the current model (when it ran beyond its check) and frees it.
  void finish() {
    if (!trainer_) return;
    auto trainer = std::move(trainer_);
    if (trainer->steps() <= setup_.check_steps) return;
    const nlohmann::json j = metrics_json(*trainer);
    {
      std::ofstream out(metrics_path(), std::ios::app);
      out << j.dump() << "\n";
    }
    std::fprintf(stderr, "%s\n", summary_line(j, variant_, params_.describe()).c_str());
    if (j.contains("data_parallel"))
      std::fprintf(stderr, "train_transformer/%s rank %d of %d: job %.0f tokens/s, one GPU alone %.0f tokens/s, scaling "
                   "efficiency %.3f, weights identical at %lld checks\n", variant_.c_str(),
                   j["data_parallel"]["rank"].get<int>(), j["world_size"].get<int>(), j["tokens_per_s"].get<double>(),
                   j["data_parallel"]["tokens_per_s_one_gpu"].get<double>(),
                   j["data_parallel"]["scaling_efficiency"].get<double>(),
                   j["data_parallel"]["weight_checks"].get<long long>());
  }

  nlohmann::json metrics_json(models::TransformerTrainer& t) const {
    const std::int64_t first = setup_.check_steps;
    const auto phases = t.phase_times(first);
    const auto losses = t.losses();
    const auto& st = t.allocator_stats();
    const auto& mps = t.mallocs_per_step();
    std::uint64_t steady_mallocs = 0;  // cudaMalloc calls after the check steps
    for (std::size_t i = static_cast<std::size_t>(first); i < mps.size(); ++i) steady_mallocs += mps[i];
    const double tokens = static_cast<double>(t.tokens_per_step());
    nlohmann::json j;
    j["problem"] = "train_transformer";
    j["variant"] = variant_;
    nlohmann::json params;
    for (const auto& [k, v] : params_.entries()) params[k] = harness::to_string(v);
    j["params"] = params;
    const bool bf16 = t.config().model.precision == models::Precision::bf16;  // bf16 GEMMs: context.hpp
    j["gemm"] = !bf16 ? t.config().gemm : t.config().gemm == "cublas" ? "cublas_gemmex_bf16" : "gemm_bf16";
    j["attention"] = models::attention_impl_name(t.config().attention);
    j["precision"] = models::precision_name(t.config().model.precision);
    j["parameters"] = t.parameter_count();
    j["tokens_per_step"] = t.tokens_per_step();
    j["steps"] = t.steps();
    j["check_steps"] = first;
    j["timed_steps_in_phase_means"] = phases.steps;
    j["graph"] = t.config().graph;
    j["fused"] = t.config().fused;
    if (phases.phase_steps > 0) {
      j["phase_ms"] = {{"forward", phases.forward}, {"backward", phases.backward},
                       {"optimizer", phases.optimizer}, {"step", phases.step}};
      // Data parallel: the exchange's exposed part, included in backward.
      if (phases.exchange_wait >= 0) j["phase_ms"]["exchange_wait"] = phases.exchange_wait;
    } else {
      j["phase_ms"] = {{"forward", nullptr}, {"backward", nullptr}, {"optimizer", nullptr}, {"step", phases.step}};
      j["phase_times"] = "unavailable with graph: true (one graph launch per step: CUDA events time the whole step)";
    }
    add_launch_counts(j, t);
    // The job's tokens/s: every rank trains tokens_per_step per step, in step with the others.
    const int world = t.config().world_size;
    const double per_gpu = phases.step > 0 ? tokens / (phases.step * 1e-3) : 0.0;
    j["world_size"] = world;
    j["tokens_per_s"] = per_gpu * world;
    j["tokens_per_s_per_gpu"] = per_gpu;
    add_mfu(j, phases.step * 1e-3);
    if (auto* dp = t.data_parallel()) {
      double bucket_mb = 0;
      for (const auto& b : dp->buckets()) bucket_mb = std::max(bucket_mb, static_cast<double>(b.numel) * 4 / (1 << 20));
      j["data_parallel"] = {
          {"rank", dp->rank()},
          {"buckets", dp->buckets().size()},
          {"bucket_cap_mb", static_cast<double>(dp->bucket_bytes()) / (1 << 20)},
          {"largest_bucket_mb", bucket_mb},
          {"grad_reduce", dp->wire() == models::DType::bf16 ? "bf16" : "f32"},  // as the parameter
          {"tokens_per_s_one_gpu", baseline_tokens_per_s_},
          {"baseline_steps", setup_.baseline_steps},
          {"scaling_efficiency", baseline_tokens_per_s_ > 0 ? per_gpu / baseline_tokens_per_s_ : 0.0},
          {"weight_checks", dp->weight_checks()},
          {"weights_identical", true}};  // a difference throws (check_identical_weights)
    }
    j["allocator"] = {{"cuda_malloc_calls", st.cuda_malloc_calls},
                      {"cuda_free_calls", st.cuda_free_calls},
                      {"cuda_malloc_calls_after_check_steps", steady_mallocs},
                      {"requests", st.requests},
                      {"cache_hits", st.cache_hits},
                      {"peak_bytes_in_use", st.peak_bytes_in_use},
                      {"peak_bytes_reserved", st.peak_bytes_reserved}};
    j["loss_first"] = losses.empty() ? 0.0 : losses.front();
    j["loss_last"] = losses.empty() ? 0.0 : losses.back();
    // The curve: every step up to 2000, else every k-th.
    const std::size_t stride = losses.size() > 2000 ? (losses.size() + 1999) / 2000 : 1;
    std::vector<double> curve;
    for (std::size_t i = 0; i < losses.size(); i += stride) curve.push_back(losses[i]);
    j["loss_curve_stride"] = stride;
    j["loss_curve"] = curve;
    return j;
  }

  // Model FLOP utilization (models/mfu.hpp): this problem's FLOPs per step (`work`, per rank)
  // / the mean CUDA-event step time / the dense bf16 peak of the device the step ran on,
  // for FP32 and bf16 variants alike; null with the reason where the peak is unknown.
  void add_mfu(nlohmann::json& j, double step_seconds) const {
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) device = 0;
    const models::TensorPeak peak = models::dense_bf16_peak_of_device(device);
    const double flops = step_work(params_).flops;
    const auto mfu = models::model_flops_utilization(flops, step_seconds, peak);
    j["model_flops_per_step"] = flops;
    j["peak_tflops"] = peak.known() ? nlohmann::json(peak.tflops) : nlohmann::json(nullptr);
    j["peak_source"] = peak.source;
    j["mfu"] = mfu ? nlohmann::json(*mfu) : nlohmann::json(nullptr);
    j["mfu_basis"] = "model_flops_per_step / phase_ms.step (mean CUDA-event step time) / peak_tflops (dense bf16 "
                     "tensor cores, for FP32 and bf16 variants alike)";
  }

  // kernels_per_step and the launch breakdown (TransformerTrainer::step_launches). Eager
  // runs count from a capture that is never launched: should the step not be capturable,
  // the eager figures still stand and the error is reported instead of the count.
  static void add_launch_counts(nlohmann::json& j, models::TransformerTrainer& t) {
    if (t.config().world_size > 1) {  // a counting capture would record NCCL calls of one rank alone
      j["kernels_per_step"] = nullptr;
      j["kernels_per_step_error"] = "not counted with world_size > 1";
      return;
    }
    try {
      const auto c = t.step_launches();
      j["kernels_per_step"] = c.kernels;
      j["step_launches"] = {{"kernels", c.kernels},     {"memsets", c.memsets},
                            {"memcopies", c.memcopies}, {"other_nodes", c.other},
                            {"host_launch_calls", c.host_launches}};
    } catch (const models::Error& e) {
      if (const auto* cuda = dynamic_cast<const models::CudaError*>(&e); cuda && cuda->sticky()) throw;
      j["kernels_per_step"] = nullptr;
      j["kernels_per_step_error"] = e.what();
    }
  }

  // The single-GPU figure of a data-parallel case: this rank alone, the same model and
  // configuration without communication (2 untimed steps, then baseline_steps).
  void measure_baseline(models::TrainConfig c, cudaStream_t stream) {
    baseline_tokens_per_s_ = 0;
    if (setup_.baseline_steps <= 0) return;
    c.world_size = 1;
    models::TransformerTrainer alone(c, stream);
    for (int i = 0; i < 2 + setup_.baseline_steps; ++i) alone.step();
    const auto phases = alone.phase_times(2);
    if (phases.step > 0) baseline_tokens_per_s_ = static_cast<double>(alone.tokens_per_step()) / (phases.step * 1e-3);
  }

  harness::Params params_;
  Setup setup_;
  std::unique_ptr<models::TransformerTrainer> trainer_;
  std::string variant_, baseline_variant_;
  double baseline_tokens_per_s_ = 0;
  bool reset_ = true;
  models::Precision precision_ = models::Precision::f32;
  std::vector<float> check_losses_;
};

// The longer of the source and target lengths (src_len / tgt_len, 0 meaning seq_len).
std::int64_t longest_length(const harness::Params& p) {
  const auto c = setup_of(p).train;
  return std::max(c.source_length(), c.target_length());
}

// Why these parameters' tensor sizes do not fit 64-bit arithmetic (the engine counts
// elements in int64, bytes in size_t), or nothing: activations B*N*max(E, F, V) and the
// naive attention scores 2*B*H*N^2 (N the longer length), in bytes, with room for the
// int64 element counts.
std::optional<std::string> size_overflow(const harness::Params& p) {
  const std::int64_t widest = std::max({p.get_int("d_model"), p.get_int("hidden"), p.get_int("vocab")});
  const std::int64_t n = longest_length(p);
  constexpr std::int64_t kHeadroom = 16;  // bytes per element and a factor of the engine's buffers
  if (!harness::checked_product(p.get_int("batch"), n, widest, kHeadroom))
    return harness::size_overflow_message("train_transformer activations (batch*seq_len*max(d_model, hidden, vocab))");
  if (!harness::checked_product(p.get_int("batch"), p.get_int("heads"), n, n, kHeadroom))
    return harness::size_overflow_message("train_transformer attention scores (batch*heads*seq_len^2)");
  return std::nullopt;
}

class TrainTransformerProblem final : public harness::Problem {
 public:
  std::string name() const override { return "train_transformer"; }
  std::string description() const override {
    return "one training step (forward, backward, Adam; FP32 or bf16 mixed precision by variant) of an "
           "encoder-decoder Transformer on our autograd engine (models/), copy task of random tokens";
  }
  std::vector<harness::ParamSpec> params() const override {
    return {
        harness::int_param("batch", 100, 1, 1 << 20, "sequences per step"),
        harness::int_param("seq_len", 13, 1, 1 << 20, "source = target length (unless src_len / tgt_len)"),
        harness::int_param("encoder_layers", 6, 1, 128, "encoder layers"),
        harness::int_param("decoder_layers", 6, 1, 128, "decoder layers"),
        harness::int_param("heads", 8, 1, 1024, "attention heads (d_model / heads: 32, 64 or 128 for flash)"),
        harness::int_param("d_model", 512, 4, 1 << 16, "model width E"),
        harness::int_param("hidden", 2048, 1, 1 << 18, "feed-forward width"),
        harness::int_param("vocab", 6880, 3, 1 << 22, "vocabulary (source and target)"),
        harness::enum_param("activation", "relu", {"relu", "gelu"}, "feed-forward activation"),
        harness::float_param("lr", 2e-4, 0.0, 10.0, "Adam peak learning rate (betas 0.9, 0.98; eps 1e-9)"),
        harness::int_param("warmup_steps", 4, 0, 1 << 30, "linear warm-up steps"),
        harness::int_param("schedule_steps", 2000, 1, 1 << 30, "cosine decay to lr/10 at this step"),
        harness::float_param("clip_norm", 1.0, 0.0, 1e9, "global gradient-norm clip (0: off)"),
        harness::int_param("check_steps", 4, 2, 1000, "steps of the checked run (one fixed batch)"),
        harness::int_param("src_len", 0, 0, 1 << 20, "source length (0: seq_len)"),
        harness::int_param("tgt_len", 0, 0, 1 << 20,
                           "target length (0: seq_len); the copy task's target is the first tgt_len source "
                           "tokens, so tgt_len <= src_len"),
        harness::bool_param("graph", false,
                            "capture the step once into a CUDA graph after 2 eager steps and replay it (step "
                            "time only, no phase times)"),
        harness::int_param("world_size", 1, 1, 64,
                           "data-parallel ranks, one per GPU (> 1: a collective case; B and N are per GPU)"),
        harness::int_param("bucket_mb", 25, 1, 4096, "data parallel: gradient bucket size (MiB)"),
        harness::enum_param("grad_reduce", "f32", {"f32", "bf16"},
                            "data parallel: the all-reduce's element type (bf16: each rank's gradient / "
                            "world_size rounded to bf16, summed in bf16, as PyTorch's bf16_compress_hook; half "
                            "the bytes)"),
        harness::int_param("baseline_steps", 10, 0, 1000,
                           "data parallel: timed steps of the single-GPU baseline for the scaling efficiency"),
        harness::bool_param("fused", true,
                            "fused bias + activation, residual + LayerNorm and the parallel bias gradient "
                            "(false: the separate kernels, for comparison)"),
    };
  }
  std::optional<std::string> reject(const harness::Params& p) const override {
    if (p.get_int("d_model") % p.get_int("heads") != 0)
      return fmt::format("d_model ({}) must be a multiple of heads ({})", p.get_int("d_model"), p.get_int("heads"));
    const auto c = setup_of(p).train;
    if (c.grad_wire == models::DType::bf16 && c.world_size == 1)
      return std::string("grad_reduce: bf16 needs world_size > 1 (it is the data-parallel all-reduce's type)");
    if (c.graph && c.world_size > 1)
      return std::string("graph: true with world_size > 1 is not supported (the data-parallel all-reduce runs "
                         "outside a CUDA graph)");
    if (c.target_length() > c.source_length())
      return fmt::format("target length ({}) > source length ({}): the copy task's target is a prefix of the source",
                         c.target_length(), c.source_length());
    return size_overflow(p);
  }
  std::unique_ptr<harness::Instance> make_instance(const harness::Params& p, std::uint64_t seed) const override {
    return std::make_unique<TrainInstance>(p, seed);
  }
  harness::Work work(const harness::Params& p) const override { return step_work(p); }  // per rank
  bool collective_at(const harness::Params& p) const override { return p.get_int("world_size") > 1; }
  harness::Tolerance tolerance(const harness::Params&) const override { return {1e-3, 2e-2}; }
  std::string tolerance_rule() const override {
    return "losses of the checked steps within 1e-3 + 2% of the reference's: identical weights and data, only "
           "the summation order of the kernels differs; bf16 variants within 0.02 + 1% of the same FP32 "
           "reference (8-bit mantissas of activations and GEMM operands); a non-finite or non-decreasing loss is "
           "an error";
  }
  std::string reference_variant(const harness::Params& p) const override {
    return kernels::attention::flash_supported(static_cast<int>(head_dim(p))) ? "cublas_flash" : "naive_attention";
  }
};

// Why this process cannot run the case's data parallelism (NCCL missing, a job of another
// size), or nothing.
std::optional<std::string> world_constraint(const harness::Params& p) {
  const int world = static_cast<int>(p.get_int("world_size"));
  return world > 1 ? models::data_parallel_unavailable(world) : std::nullopt;
}

std::optional<std::string> flash_constraint(const harness::Params& p) {
  if (auto why = world_constraint(p)) return why;
  const auto d = head_dim(p);
  if (!kernels::attention::flash_supported(static_cast<int>(d)))
    return fmt::format("flash attention has kernels for head_dim 32, 64, 128, not {} (d_model / heads)", d);
  return std::nullopt;
}

std::optional<std::string> naive_constraint(const harness::Params& p) {
  if (auto why = world_constraint(p)) return why;
  if (head_dim(p) % 4 != 0) return fmt::format("naive attention needs head_dim % 4 == 0, not {}", head_dim(p));
  return std::nullopt;
}

// The naive core's score matrices (forward B*H*N^2 floats, backward twice that): the
// transient scratch beyond what the flash variants use. Checked: InputError on overflow.
// N: the longer length (with tgt_len <= src_len, cross-attention's padded query rows are
// src_len: its scores are B*H*src_len^2 too).
std::size_t naive_scratch(const harness::Params& p) {
  const std::int64_t n = longest_length(p);
  return harness::size_product("train_transformer naive attention scores (2*B*H*N^2 floats)", p.get_int("batch"),
                               p.get_int("heads"), n, n, sizeof(float), 2);
}

// bf16 variants: flash_tc has kernels for head_dim 64 and 128 only.
std::optional<std::string> bf16_constraint(const harness::Params& p) {
  const auto d = head_dim(p);
  if (!kernels::attention::flash_tc_supported(static_cast<int>(d)))
    return fmt::format("bf16 flash attention (flash_tc) has kernels for head_dim 64 and 128, not {} (d_model / heads)",
                       d);
  return std::nullopt;
}

TrainInstance& as_train(harness::Instance& i) { return static_cast<TrainInstance&>(i); }

}  // namespace

HARNESS_REGISTER_PROBLEM(TrainTransformerProblem);

namespace {

// The variants (registration order = this table's): each one trains through
// TrainInstance::run with its GEMM backend, attention core and precision.
struct TrainVariant {
  const char* name;
  const char* gemm;  // models::TrainConfig::gemm
  models::AttentionImpl attention;
  models::Precision precision;
  const char* description;
  harness::ConstraintFn constraint;
  harness::WorkspaceFn workspace = nullptr;
};

const bool kVariantsRegistered = [] {
  using models::AttentionImpl;
  using models::Precision;
  const TrainVariant table[] = {
      {"ours", "auto", AttentionImpl::flash_tf32x3, Precision::f32,
       "all our kernels: FP32 GEMM `auto` (every layout read in place), FlashAttention-2 in 3xTF32 on tensor cores "
       "(FP32 accuracy), kernels/nn",
       flash_constraint},
      {"cublas_flash", "cublas", AttentionImpl::flash, Precision::f32,
       "cuBLAS SGEMM (FP32, no TF32) + our FlashAttention-2, kernels/nn", flash_constraint},
      {"naive_attention", "cublas", AttentionImpl::naive, Precision::f32,
       "cuBLAS SGEMM + the naive attention of kernels/attention (B*H*N*N scores materialized)", naive_constraint,
       naive_scratch},
      {"ours_bf16", "auto", AttentionImpl::flash, Precision::bf16,
       "bf16 mixed precision, only our kernels: gemm_bf16 (wgmma / mma.sync, FP32 accumulation), flash_tc, kernels/nn "
       "bf16 kernels; FP32 master weights and Adam",
       bf16_constraint},
      {"cublas_bf16", "cublas", AttentionImpl::flash, Precision::bf16,
       "bf16 mixed precision: cuBLAS GemmEx (CUDA_R_16BF, CUBLAS_COMPUTE_32F) + flash_tc, kernels/nn bf16 kernels; FP32 "
       "master weights and Adam",
       bf16_constraint},
  };
  for (const TrainVariant& v : table) {
    auto launch = [name = std::string(v.name), gemm = std::string(v.gemm), attention = v.attention,
                   precision = v.precision](harness::Instance& i, harness::LaunchContext& ctx) {
      as_train(i).run(name, gemm, attention, precision, ctx);
    };
    harness::Registry::instance().add_variant(
        harness::make_variant("train_transformer", v.name, harness::Backend::cuda, std::move(launch))
            .description(v.description)
            .constraint(v.constraint)
            .workspace(v.workspace));
  }
  return true;
}();

}  // namespace
