// The `attention` and `attention_backward` problems: FP32 scaled dot-product attention
// (kernels/attention), with variants naive (materialized N x N scores), flash
// (FlashAttention-2) and the double-precision host references.
//
// Shapes: Q, O, dO, dQ (B, H, N, d); K, V, dK, dV (B, Hkv, N, d); LSE (B, H, N).
// Inputs are N(0, 1), each (tensor, head) from its own stream of harness::fill_normal
// (stream id = tensor << 32 | head), so heads are generated in parallel and a head's
// values do not depend on how many other heads there are.
//
// Checking: the full CPU reference costs B*H*N^2*d multiply-adds (x ~3 backward), which
// is hopeless at N = 131072. Above a threshold the problem switches to *sampled* outputs
// for every backend: 256 fixed query rows of O and LSE (backward: of dQ) plus one count
// of unwritten (poison) or non-finite elements over the full outputs, which must be 0.
// The reference there is `cpu_sampled`, which computes just those rows in double.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "attention/attention.hpp"
#include "attention_rules.hpp"
#include "harness/check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/error.hpp"
#include "harness/random.hpp"
#include "harness/registry.hpp"

namespace {

namespace attn = kernels::attention;
namespace rules = plugins::attention;
using harness::Backend;
using harness::DeviceBuffer;

// fill_normal stream ids of the tensors (the head index goes in the low 32 bits).
constexpr std::uint64_t kStreamQ = 1, kStreamK = 2, kStreamV = 3, kStreamDO = 4;

attn::Shape shape_of(const harness::Params& p) {
  attn::Shape s;
  s.batch = static_cast<int>(p.get_int("batch"));
  s.heads = static_cast<int>(p.get_int("heads"));
  const auto kv = p.get_int("kv_heads");
  s.kv_heads = kv == 0 ? s.heads : static_cast<int>(kv);
  s.seq_len = static_cast<int>(p.get_int("seq_len"));
  s.head_dim = static_cast<int>(p.get_int("head_dim"));
  s.causal = p.get_bool("causal");
  s.scale = static_cast<float>(p.get_float("scale"));
  return s;
}

unsigned hardware_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

// A (B, heads, N, d) tensor of N(0, 1) values, one fill_normal stream per head.
std::vector<float> normal_tensor(std::int64_t heads_total, std::int64_t head_elems,
                                 std::uint64_t seed, std::uint64_t tensor) {
  std::vector<float> x(static_cast<std::size_t>(heads_total * head_elems));
  const unsigned t = static_cast<unsigned>(std::min<std::int64_t>(hardware_threads(), heads_total));
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < t; ++w)
    pool.emplace_back([&, w] {
      for (std::int64_t h = w; h < heads_total; h += t)
        harness::fill_normal(std::span<float>(x.data() + h * head_elems,
                                              static_cast<std::size_t>(head_elems)),
                             seed, (tensor << 32) | static_cast<std::uint64_t>(h));
    });
  for (auto& th : pool) th.join();
  return x;
}

// The query rows (b*H + h)*N + i compared in sampled mode: the first and last position,
// rows at the edges of the kernels' 32/64/128-row tiles, then positions spread by
// multiplicative hashing; heads are spread the same way.
std::vector<std::int64_t> sampled_rows(const attn::Shape& s) {
  const std::int64_t heads = std::int64_t(s.batch) * s.heads, n = s.seq_len;
  const std::int64_t count = std::min<std::int64_t>(rules::kSampledRows, heads * n);
  constexpr std::int64_t kEdges[] = {0, 31, 32, 63, 64, 127, 128};
  std::vector<std::int64_t> rows;
  rows.reserve(static_cast<std::size_t>(count));
  for (std::int64_t k = 0; k < count; ++k) {
    std::int64_t i = 0;
    if (k == 0) i = n - 1;
    else if (k <= 7) i = std::min(n - 1, kEdges[k - 1]);
    else i = static_cast<std::int64_t>((static_cast<std::uint64_t>(k) * 0x9E3779B97F4A7C15ull) >> 24) % n;
    const std::int64_t z = (k * 7919) % heads;
    rows.push_back(z * n + i);
  }
  return rows;
}

// Elements that are poison (never written) or NaN/Inf.
double bad_elements(const std::vector<float>& x) {
  std::size_t bad = 0;
  for (float v : x) bad += (harness::is_poison(v) || !std::isfinite(v)) ? 1 : 0;
  return static_cast<double>(bad);
}

std::vector<float> gather_rows(const std::vector<float>& x, const std::vector<std::int64_t>& rows,
                               int width) {
  std::vector<float> out(rows.size() * static_cast<std::size_t>(width));
  for (std::size_t r = 0; r < rows.size(); ++r)
    std::copy_n(x.begin() + rows[r] * width, width, out.begin() + static_cast<std::ptrdiff_t>(r) * width);
  return out;
}

std::vector<float> download_all(const DeviceBuffer<float>& b) {
  std::vector<float> h(b.size());
  b.download(h);
  return h;
}

float* workspace_floats(harness::LaunchContext& ctx, std::size_t bytes) {
  if (ctx.workspace == nullptr) throw std::logic_error("attention: launch without a workspace");
  return static_cast<float*>(ctx.workspace->get(0, std::max<std::size_t>(bytes, 4)));
}

// ---------------------------------------------------------------------------------------
// Forward

class ForwardInstance final : public harness::Instance {
 public:
  ForwardInstance(const attn::Shape& s, std::uint64_t seed)
      : s_(s), sampled_(rules::sampled(s, false)) {
    const std::int64_t head = std::int64_t(s.seq_len) * s.head_dim;
    q_ = normal_tensor(std::int64_t(s.batch) * s.heads, head, seed, kStreamQ);
    k_ = normal_tensor(std::int64_t(s.batch) * s.kv_heads, head, seed, kStreamK);
    v_ = normal_tensor(std::int64_t(s.batch) * s.kv_heads, head, seed, kStreamV);
    if (sampled_) rows_ = sampled_rows(s);
  }

  void prepare(Backend backend) override {
    if (backend == Backend::cpu) {
      if (sampled_) {
        o_cpu_.resize(rows_.size() * s_.head_dim);
        lse_cpu_.resize(rows_.size());
      } else {
        o_cpu_.resize(q_.size());
        lse_cpu_.resize(static_cast<std::size_t>(s_.lse_elements()));
      }
      return;
    }
    if (d_o_.size() == q_.size()) return;  // already resident
    d_q_ = DeviceBuffer<float>(q_.size());
    d_k_ = DeviceBuffer<float>(k_.size());
    d_v_ = DeviceBuffer<float>(v_.size());
    d_o_ = DeviceBuffer<float>(q_.size());
    d_lse_ = DeviceBuffer<float>(static_cast<std::size_t>(s_.lse_elements()));
    d_q_.upload(q_);
    d_k_.upload(k_);
    d_v_.upload(v_);
  }

  void reset_outputs(Backend backend, cudaStream_t stream) override {
    if (backend == Backend::cpu) {
      harness::poison_host(o_cpu_);
      harness::poison_host(lse_cpu_);
    } else {
      d_o_.poison(stream);
      d_lse_.poison(stream);
    }
  }

  std::vector<harness::Output> read_outputs(Backend backend) override {
    std::vector<float> o, lse;
    if (backend == Backend::cpu) {
      o = o_cpu_;
      lse = lse_cpu_;
    } else {
      HARNESS_CUDA(cudaDeviceSynchronize());  // the launch stream may be non-blocking
      o = download_all(d_o_);
      lse = download_all(d_lse_);
    }
    if (!sampled_) return {{"O", std::move(o)}, {"LSE", std::move(lse)}};
    // Sampled: the cpu backend (cpu_sampled) holds just the sampled rows already.
    const double bad = bad_elements(o) + bad_elements(lse);
    if (backend == Backend::cuda) {
      o = gather_rows(o, rows_, s_.head_dim);
      lse = gather_rows(lse, rows_, 1);
    }
    return {{"O[sampled rows]", std::move(o), true},
            {"LSE[sampled rows]", std::move(lse), true},
            {"unwritten or non-finite elements of O and LSE", {static_cast<float>(bad)}, true}};
  }

  std::size_t device_bytes() const override {
    return d_q_.bytes() + d_k_.bytes() + d_v_.bytes() + d_o_.bytes() + d_lse_.bytes();
  }

  void run_cpu() {
    if (sampled_) throw std::logic_error("attention/cpu: the full reference is off at this size");
    attn::forward_cpu(s_, q_.data(), k_.data(), v_.data(), o_cpu_.data(), lse_cpu_.data());
  }
  void run_cpu_sampled() {
    if (!sampled_) throw std::logic_error("attention/cpu_sampled: only for sampled checks");
    attn::forward_cpu_rows(s_, q_.data(), k_.data(), v_.data(), rows_.data(), rows_.size(),
                           o_cpu_.data(), lse_cpu_.data());
  }
  void run_naive(harness::LaunchContext& ctx) {
    float* ws = workspace_floats(ctx, attn::naive_forward_workspace_bytes(s_));
    HARNESS_CUDA(attn::naive_forward(s_, d_q_.data(), d_k_.data(), d_v_.data(), d_o_.data(),
                                     d_lse_.data(), ws, ctx.stream));
  }
  void run_flash(harness::LaunchContext& ctx) {
    HARNESS_CUDA(attn::flash_forward(s_, d_q_.data(), d_k_.data(), d_v_.data(), d_o_.data(),
                                     d_lse_.data(), ctx.stream));
  }

 private:
  attn::Shape s_;
  bool sampled_;
  std::vector<std::int64_t> rows_;
  std::vector<float> q_, k_, v_;      // host inputs
  std::vector<float> o_cpu_, lse_cpu_;  // the cpu backend's outputs (all rows or sampled)
  DeviceBuffer<float> d_q_, d_k_, d_v_, d_o_, d_lse_;
};

// ---------------------------------------------------------------------------------------
// Backward: the forward's O and LSE are inputs, computed once when the device inputs are
// prepared (flash forward; not part of any timed run). The cpu references recompute the
// forward in double themselves.

class BackwardInstance final : public harness::Instance {
 public:
  BackwardInstance(const attn::Shape& s, std::uint64_t seed)
      : s_(s), sampled_(rules::sampled(s, true)) {
    const std::int64_t head = std::int64_t(s.seq_len) * s.head_dim;
    q_ = normal_tensor(std::int64_t(s.batch) * s.heads, head, seed, kStreamQ);
    k_ = normal_tensor(std::int64_t(s.batch) * s.kv_heads, head, seed, kStreamK);
    v_ = normal_tensor(std::int64_t(s.batch) * s.kv_heads, head, seed, kStreamV);
    do_ = normal_tensor(std::int64_t(s.batch) * s.heads, head, seed, kStreamDO);
    if (sampled_) rows_ = sampled_rows(s);
  }

  void prepare(Backend backend) override {
    if (backend == Backend::cpu) {
      if (sampled_) {
        dq_cpu_.resize(rows_.size() * s_.head_dim);
        dk_cpu_.clear();
        dv_cpu_.clear();
      } else {
        dq_cpu_.resize(q_.size());
        dk_cpu_.resize(k_.size());
        dv_cpu_.resize(v_.size());
      }
      return;
    }
    if (d_dq_.size() == q_.size()) return;
    d_q_ = DeviceBuffer<float>(q_.size());
    d_k_ = DeviceBuffer<float>(k_.size());
    d_v_ = DeviceBuffer<float>(v_.size());
    d_do_ = DeviceBuffer<float>(do_.size());
    d_o_ = DeviceBuffer<float>(q_.size());
    d_lse_ = DeviceBuffer<float>(static_cast<std::size_t>(s_.lse_elements()));
    d_dq_ = DeviceBuffer<float>(q_.size());
    d_dk_ = DeviceBuffer<float>(k_.size());
    d_dv_ = DeviceBuffer<float>(v_.size());
    d_q_.upload(q_);
    d_k_.upload(k_);
    d_v_.upload(v_);
    d_do_.upload(do_);
    if (attn::flash_supported(s_.head_dim)) {
      HARNESS_CUDA(attn::flash_forward(s_, d_q_.data(), d_k_.data(), d_v_.data(), d_o_.data(),
                                       d_lse_.data(), nullptr));
      HARNESS_CUDA(cudaDeviceSynchronize());
    } else {  // no flash kernel for this head dim: the host forward, uploaded
      std::vector<float> o(q_.size()), lse(static_cast<std::size_t>(s_.lse_elements()));
      attn::forward_cpu(s_, q_.data(), k_.data(), v_.data(), o.data(), lse.data());
      d_o_.upload(o);
      d_lse_.upload(lse);
    }
  }

  void reset_outputs(Backend backend, cudaStream_t stream) override {
    if (backend == Backend::cpu) {
      harness::poison_host(dq_cpu_);
      harness::poison_host(dk_cpu_);
      harness::poison_host(dv_cpu_);
    } else {
      d_dq_.poison(stream);
      d_dk_.poison(stream);
      d_dv_.poison(stream);
    }
  }

  std::vector<harness::Output> read_outputs(Backend backend) override {
    std::vector<float> dq, dk, dv;
    if (backend == Backend::cpu) {
      dq = dq_cpu_, dk = dk_cpu_, dv = dv_cpu_;
    } else {
      HARNESS_CUDA(cudaDeviceSynchronize());
      dq = download_all(d_dq_);
      dk = download_all(d_dk_);
      dv = download_all(d_dv_);
    }
    if (!sampled_) return {{"dQ", std::move(dq)}, {"dK", std::move(dk)}, {"dV", std::move(dv)}};
    // Sampled: rows of dQ are checked in value (each needs one row of P and dP); dK and dV
    // (sums over every query) only for coverage and finiteness.
    const double bad = bad_elements(dq) + bad_elements(dk) + bad_elements(dv);
    if (backend == Backend::cuda) dq = gather_rows(dq, rows_, s_.head_dim);
    return {{"dQ[sampled rows]", std::move(dq), true},
            {"unwritten or non-finite elements of dQ, dK, dV", {static_cast<float>(bad)}, true}};
  }

  std::size_t device_bytes() const override {
    return d_q_.bytes() + d_k_.bytes() + d_v_.bytes() + d_do_.bytes() + d_o_.bytes() +
           d_lse_.bytes() + d_dq_.bytes() + d_dk_.bytes() + d_dv_.bytes();
  }

  void run_cpu() {
    if (sampled_) throw std::logic_error("attention_backward/cpu: the full reference is off at this size");
    attn::backward_cpu(s_, q_.data(), k_.data(), v_.data(), do_.data(), dq_cpu_.data(),
                       dk_cpu_.data(), dv_cpu_.data());
  }
  void run_cpu_sampled() {
    if (!sampled_) throw std::logic_error("attention_backward/cpu_sampled: only for sampled checks");
    attn::backward_cpu_dq_rows(s_, q_.data(), k_.data(), v_.data(), do_.data(), rows_.data(),
                               rows_.size(), dq_cpu_.data());
  }
  void run_naive(harness::LaunchContext& ctx) {
    float* ws = workspace_floats(ctx, attn::naive_backward_workspace_bytes(s_));
    HARNESS_CUDA(attn::naive_backward(s_, d_q_.data(), d_k_.data(), d_v_.data(), d_o_.data(),
                                      d_lse_.data(), d_do_.data(), d_dq_.data(), d_dk_.data(),
                                      d_dv_.data(), ws, ctx.stream));
  }
  void run_flash(harness::LaunchContext& ctx) {
    float* ws = workspace_floats(ctx, attn::flash_backward_workspace_bytes(s_));
    HARNESS_CUDA(attn::flash_backward(s_, d_q_.data(), d_k_.data(), d_v_.data(), d_o_.data(),
                                      d_lse_.data(), d_do_.data(), d_dq_.data(), d_dk_.data(),
                                      d_dv_.data(), ws, ctx.stream));
  }

 private:
  attn::Shape s_;
  bool sampled_;
  std::vector<std::int64_t> rows_;
  std::vector<float> q_, k_, v_, do_;
  std::vector<float> dq_cpu_, dk_cpu_, dv_cpu_;
  DeviceBuffer<float> d_q_, d_k_, d_v_, d_do_, d_o_, d_lse_, d_dq_, d_dk_, d_dv_;
};

// ---------------------------------------------------------------------------------------
// The problems

std::vector<harness::ParamSpec> attention_params() {
  return {
      harness::int_param("batch", 1, 1, 65535, "B"),
      harness::int_param("heads", 32, 1, 65535, "H, query heads"),
      harness::int_param("kv_heads", 0, 0, 65535,
                         "Hkv, key/value heads (divides heads; H/Hkv query heads share one: "
                         "GQA, 1 = MQA); 0 means heads (MHA)"),
      harness::int_param("seq_len", 4096, 1, 1 << 24, "N, queries = keys"),
      harness::int_param("head_dim", 64, 4, 1024,
                         "d; flash has kernels for 32, 64, 128, naive and cpu take any multiple of 4"),
      harness::bool_param("causal", false, "query i attends keys j <= i only"),
      harness::float_param("scale", 0.0, -1000.0, 1000.0,
                           "softmax scale of Q K^T; 0 means 1/sqrt(head_dim)"),
  };
}

class AttentionProblemBase : public harness::Problem {
 public:
  explicit AttentionProblemBase(bool backward) : backward_(backward) {}
  std::vector<harness::ParamSpec> params() const override { return attention_params(); }
  std::optional<std::string> reject(const harness::Params& p) const override {
    const attn::Shape s = shape_of(p);
    const std::string why = attn::shape_error(s);
    if (!why.empty()) return why;
    // Every byte count must fit in 64 bits (the naive variants' N^2 scores first).
    try {
      (void)rules::device_bytes(s, backward_);
      (void)rules::naive_workspace_bytes(s, backward_);
    } catch (const harness::InputError& e) {
      return e.what();
    }
    return std::nullopt;
  }
  harness::Work work(const harness::Params& p) const override {
    return rules::work(shape_of(p), backward_);
  }
  harness::Tolerance tolerance(const harness::Params& p) const override {
    return rules::tolerance(shape_of(p), backward_);
  }
  std::string tolerance_rule() const override {
    return backward_ ? rules::kBackwardToleranceRule : rules::kForwardToleranceRule;
  }
  std::string reference_variant(const harness::Params& p) const override {
    return rules::sampled(shape_of(p), backward_) ? "cpu_sampled" : "cpu";
  }
  std::size_t device_bytes(const harness::Params& p) const override {
    return rules::device_bytes(shape_of(p), backward_);
  }

 private:
  bool backward_;
};

class AttentionProblem final : public AttentionProblemBase {
 public:
  AttentionProblem() : AttentionProblemBase(false) {}
  std::string name() const override { return "attention"; }
  std::string description() const override {
    return "FP32 softmax(scale Q K^T) V per (batch, head), optional causal mask, GQA/MQA; "
           "outputs O (B,H,N,d) and LSE (B,H,N)";
  }
  std::unique_ptr<harness::Instance> make_instance(const harness::Params& p,
                                                   std::uint64_t seed) const override {
    return std::make_unique<ForwardInstance>(shape_of(p), seed);
  }
};

class AttentionBackwardProblem final : public AttentionProblemBase {
 public:
  AttentionBackwardProblem() : AttentionProblemBase(true) {}
  std::string name() const override { return "attention_backward"; }
  std::string description() const override {
    return "FP32 attention backward: dQ, dK, dV from Q, K, V, dO and the forward's O, LSE "
           "(GQA: dK, dV summed over the query heads of a kv head)";
  }
  std::unique_ptr<harness::Instance> make_instance(const harness::Params& p,
                                                   std::uint64_t seed) const override {
    return std::make_unique<BackwardInstance>(shape_of(p), seed);
  }
};

template <class Instance>
Instance& as(harness::Instance& i) {
  return static_cast<Instance&>(i);
}

std::optional<std::string> flash_constraint(const harness::Params& p) {
  const int d = static_cast<int>(p.get_int("head_dim"));
  if (!attn::flash_supported(d))
    return fmt::format("flash has kernels for head_dim 32, 64, 128, not {}", d);
  return std::nullopt;
}

template <bool kBackward>
std::optional<std::string> cpu_constraint(const harness::Params& p) {
  const attn::Shape s = shape_of(p);
  if (rules::sampled(s, kBackward))
    return fmt::format("cpu: B*H*N^2*d = {:.3g} is above the full host reference's limit {:.3g} "
                       "(cpu_sampled checks sampled rows instead)",
                       rules::score_macs(s), rules::cpu_limit(kBackward));
  return std::nullopt;
}

template <bool kBackward>
std::optional<std::string> cpu_sampled_constraint(const harness::Params& p) {
  if (!rules::sampled(shape_of(p), kBackward))
    return std::string("cpu_sampled: a reference for sizes where the full cpu reference is off");
  return std::nullopt;
}

// Workspace sizes: the checked counts first (InputError on overflow), then the kernels'
// own figures, which are the same products unchecked.
std::size_t naive_forward_ws(const harness::Params& p) {
  const attn::Shape s = shape_of(p);
  (void)rules::naive_workspace_bytes(s, false);
  return attn::naive_forward_workspace_bytes(s);
}
std::size_t naive_backward_ws(const harness::Params& p) {
  const attn::Shape s = shape_of(p);
  (void)rules::naive_workspace_bytes(s, true);
  return attn::naive_backward_workspace_bytes(s);
}
std::size_t flash_backward_ws(const harness::Params& p) {
  const attn::Shape s = shape_of(p);
  (void)harness::size_product("flash attention backward workspace (B*H*N floats)", s.batch, s.heads, s.seq_len,
                              sizeof(float));
  return attn::flash_backward_workspace_bytes(s);
}

}  // namespace

HARNESS_REGISTER_PROBLEM(AttentionProblem);
HARNESS_REGISTER_PROBLEM(AttentionBackwardProblem);

HARNESS_REGISTER_VARIANT_FULL(
    attention, naive, cuda,
    "S = scale Q K^T materialized (B*H*N^2 floats of workspace), row softmax, O = P V",
    [](harness::Instance& i, harness::LaunchContext& ctx) { as<ForwardInstance>(i).run_naive(ctx); },
    nullptr, naive_forward_ws);
HARNESS_REGISTER_VARIANT_IF(
    attention, flash, cuda,
    "FlashAttention-2: 128x64 (d=128: 64x32) tiles, online softmax, cp.async K/V pipeline, "
    "8x8 register tiles per thread, causal tile skipping",
    [](harness::Instance& i, harness::LaunchContext& ctx) { as<ForwardInstance>(i).run_flash(ctx); },
    flash_constraint);
HARNESS_REGISTER_VARIANT_IF(
    attention, cpu, cpu, "host reference: double accumulation, one query row at a time, all threads",
    [](harness::Instance& i, harness::LaunchContext&) { as<ForwardInstance>(i).run_cpu(); },
    cpu_constraint<false>);
HARNESS_REGISTER_REFERENCE_VARIANT(
    attention, cpu_sampled, cpu,
    "host reference on 256 sampled query rows (the reference at sizes where cpu is off; "
    "its time is that of the sample)",
    [](harness::Instance& i, harness::LaunchContext&) { as<ForwardInstance>(i).run_cpu_sampled(); },
    cpu_sampled_constraint<false>);

HARNESS_REGISTER_VARIANT_FULL(
    attention_backward, naive, cuda,
    "P and dP/dS materialized (2*B*H*N^2 floats of workspace), batched GEMMs",
    [](harness::Instance& i, harness::LaunchContext& ctx) { as<BackwardInstance>(i).run_naive(ctx); },
    nullptr, naive_backward_ws);
HARNESS_REGISTER_VARIANT_FULL(
    attention_backward, flash, cuda,
    "FlashAttention-2 backward: one block per K/V tile iterating over Q tiles, P recomputed "
    "from LSE, dQ (and GQA dK/dV) by float4 atomics",
    [](harness::Instance& i, harness::LaunchContext& ctx) { as<BackwardInstance>(i).run_flash(ctx); },
    flash_constraint, flash_backward_ws);
HARNESS_REGISTER_VARIANT_IF(
    attention_backward, cpu, cpu, "host reference: forward and backward in double, all threads",
    [](harness::Instance& i, harness::LaunchContext&) { as<BackwardInstance>(i).run_cpu(); },
    cpu_constraint<true>);
HARNESS_REGISTER_REFERENCE_VARIANT(
    attention_backward, cpu_sampled, cpu,
    "host reference of dQ on 256 sampled query rows (the reference where cpu is off)",
    [](harness::Instance& i, harness::LaunchContext&) { as<BackwardInstance>(i).run_cpu_sampled(); },
    cpu_sampled_constraint<true>);
