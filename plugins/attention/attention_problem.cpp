// The `attention` and `attention_backward` problems: FP32 scaled dot-product attention
// (kernels/attention), with variants naive (materialized N x N scores), flash
// (FlashAttention-2) and the double-precision host references.
//
// Shapes: Q, O, dO, dQ (B, H, N, d); K, V, dK, dV (B, Hkv, N, d); LSE (B, H, N).
// Inputs are N(0, 1), each (tensor, head) from its own generator stream (stream id =
// tensor << 32 | head), so heads are generated in parallel and a head's values do not
// depend on how many other heads there are.
//
// Checking: the full CPU reference costs B*H*N^2*d multiply-adds (x ~3 backward), which
// is hopeless at N = 131072. Above a threshold the outputs carry a row sample: 256 fixed
// query rows of O and LSE (backward: of dQ) are compared in value, and every element of
// every output is scanned for never-written and non-finite values. The reference there
// is `cpu_sampled`, which computes just those rows in double.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "attention/attention.hpp"
#include "attention_rules.hpp"
#include "harness/cuda_check.hpp"
#include "harness/error.hpp"
#include "harness/registry.hpp"

namespace {

namespace attn = kernels::attention;
namespace rules = plugins::attention;
using harness::DType;

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

// The query rows (b*H + h)*N + i compared in sampled mode: the first and last position,
// rows at the edges of the kernels' 32/64/128-row tiles, then positions spread by
// multiplicative hashing; heads are spread the same way.
std::vector<std::int64_t> sampled_rows(const attn::Shape& s) {
  const std::int64_t heads = std::int64_t(s.batch) * s.heads, n = s.seq_len;
  const std::int64_t count = std::min<std::int64_t>(rules::kSampledRows, heads * n);
  constexpr std::int64_t kEdges[] = {0, 31, 32, 63, 64, 127, 128};
  std::vector<std::int64_t> rows;
  for (std::int64_t k = 0; k < count; ++k) {
    std::int64_t i = 0;
    if (k == 0) i = n - 1;
    else if (k <= 7) i = std::min(n - 1, kEdges[k - 1]);
    else i = static_cast<std::int64_t>((static_cast<std::uint64_t>(k) * 0x9E3779B97F4A7C15ull) >> 24) % n;
    rows.push_back(((k * 7919) % heads) * n + i);
  }
  return rows;
}

// The operands: (B, H, N, d) query-side tensors, (B, Hkv, N, d) key-side ones, each head
// its own N(0, 1) stream; outputs sampled by rows above the host reference's limit.
std::vector<harness::OperandSpec> attention_operands(const attn::Shape& s, bool backward) {
  const std::int64_t B = s.batch, H = s.heads, Hkv = s.kv_heads, N = s.seq_len, d = s.head_dim;
  auto tensor = [&](const char* name, std::int64_t heads, std::uint64_t stream) {
    return harness::input(name, DType::f32, {B, heads, N, d}, harness::normal().with_stream(stream).per_block(N * d));
  };
  const bool sampled = rules::sampled(s, backward);
  const std::vector<std::int64_t> rows = sampled ? sampled_rows(s) : std::vector<std::int64_t>{};
  auto out = [&](const char* name, std::vector<std::int64_t> shape, std::int64_t width, bool by_rows) {
    harness::OperandSpec o = harness::output(name, DType::f32, std::move(shape));
    if (sampled) o.sample = {width, by_rows ? rows : std::vector<std::int64_t>{}};
    return o;
  };
  std::vector<harness::OperandSpec> ops = {tensor("Q", H, 1), tensor("K", Hkv, 2), tensor("V", Hkv, 3)};
  if (!backward) {
    ops.push_back(out("O", {B, H, N, d}, d, true));
    ops.push_back(out("LSE", {B, H, N}, 1, true));
    return ops;
  }
  // The forward's O and LSE are inputs too, derived once by finish_inputs.
  ops.push_back(tensor("dO", H, 4));
  ops.push_back(harness::input("O", DType::f32, {B, H, N, d}, harness::custom_fill(nullptr)));
  ops.push_back(harness::input("LSE", DType::f32, {B, H, N}, harness::custom_fill(nullptr)));
  // dQ rows are checked in value (each needs one row of P and dP); dK and dV (sums over
  // every query) only for coverage and finiteness.
  ops.push_back(out("dQ", {B, H, N, d}, d, true));
  ops.push_back(out("dK", {B, Hkv, N, d}, d, false));
  ops.push_back(out("dV", {B, Hkv, N, d}, d, false));
  return ops;
}

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
      harness::float_param("scale", 0.0, -1000.0, 1000.0, "softmax scale of Q K^T; 0 means 1/sqrt(head_dim)"),
  };
}

class AttentionProblemBase : public harness::Problem {
 public:
  explicit AttentionProblemBase(bool backward) : backward_(backward) {}
  std::vector<harness::ParamSpec> params() const override { return attention_params(); }
  std::optional<std::string> reject(const harness::Params& p) const override {
    const attn::Shape s = shape_of(p);
    if (std::string why = attn::shape_error(s); !why.empty()) return why;
    try {  // the naive variants' N^2 scores must have a byte count that fits in 64 bits
      (void)rules::naive_workspace_bytes(s, backward_);
    } catch (const harness::InputError& e) {
      return e.what();
    }
    return std::nullopt;
  }
  std::vector<harness::OperandSpec> operands(const harness::Params& p) const override {
    return attention_operands(shape_of(p), backward_);
  }
  harness::Work work(const harness::Params& p) const override { return rules::work(shape_of(p), backward_); }
  harness::Tolerance tolerance(const harness::Params& p) const override {
    return rules::tolerance(shape_of(p), backward_);
  }
  std::string tolerance_rule() const override {
    return backward_ ? rules::kBackwardToleranceRule : rules::kForwardToleranceRule;
  }
  std::string reference_variant(const harness::Params& p) const override {
    return rules::sampled(shape_of(p), backward_) ? "cpu_sampled" : "cpu";
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
};

class AttentionBackwardProblem final : public AttentionProblemBase {
 public:
  AttentionBackwardProblem() : AttentionProblemBase(true) {}
  std::string name() const override { return "attention_backward"; }
  std::string description() const override {
    return "FP32 attention backward: dQ, dK, dV from Q, K, V, dO and the forward's O, LSE "
           "(GQA: dK, dV summed over the query heads of a kv head)";
  }
  // O and LSE on the device: the flash forward (not part of any timed run), or the host
  // forward uploaded where no flash kernel exists for the head size. The host references
  // recompute the forward in double themselves.
  void finish_inputs(harness::Operands& io, const harness::Params& p, cudaStream_t stream) const override {
    if (io.backend() != harness::Backend::cuda) return;
    const attn::Shape s = shape_of(p);
    const float *q = io.in<float>("Q"), *k = io.in<float>("K"), *v = io.in<float>("V");
    float *o = io.derived_input<float>("O"), *lse = io.derived_input<float>("LSE");
    if (attn::flash_supported(s.head_dim)) {
      HARNESS_CUDA(attn::flash_forward(s, q, k, v, o, lse, stream));
      return;
    }
    std::vector<float> hq(s.q_elements()), hk(s.kv_elements()), hv(s.kv_elements());
    std::vector<float> ho(s.q_elements()), hl(s.lse_elements());
    HARNESS_CUDA(cudaMemcpy(hq.data(), q, hq.size() * 4, cudaMemcpyDeviceToHost));
    HARNESS_CUDA(cudaMemcpy(hk.data(), k, hk.size() * 4, cudaMemcpyDeviceToHost));
    HARNESS_CUDA(cudaMemcpy(hv.data(), v, hv.size() * 4, cudaMemcpyDeviceToHost));
    attn::forward_cpu(s, hq.data(), hk.data(), hv.data(), ho.data(), hl.data());
    HARNESS_CUDA(cudaMemcpy(o, ho.data(), ho.size() * 4, cudaMemcpyHostToDevice));
    HARNESS_CUDA(cudaMemcpy(lse, hl.data(), hl.size() * 4, cudaMemcpyHostToDevice));
  }
};

// ---- launch functions -------------------------------------------------------------------

struct Tensors {
  attn::Shape s;
  const float *q, *k, *v;
  explicit Tensors(const harness::LaunchContext& ctx)
      : s(shape_of(*ctx.params)), q(ctx.in<float>("Q")), k(ctx.in<float>("K")), v(ctx.in<float>("V")) {}
};

float* workspace_floats(harness::LaunchContext& ctx, std::size_t bytes) {
  return static_cast<float*>(ctx.workspace->get(0, std::max<std::size_t>(bytes, 4)));
}

void forward_naive(harness::LaunchContext& ctx) {
  const Tensors t(ctx);
  float* ws = workspace_floats(ctx, attn::naive_forward_workspace_bytes(t.s));
  HARNESS_CUDA(attn::naive_forward(t.s, t.q, t.k, t.v, ctx.out<float>("O"), ctx.out<float>("LSE"), ws, ctx.stream));
}
void forward_flash(harness::LaunchContext& ctx) {
  const Tensors t(ctx);
  HARNESS_CUDA(attn::flash_forward(t.s, t.q, t.k, t.v, ctx.out<float>("O"), ctx.out<float>("LSE"), ctx.stream));
}
void forward_cpu(harness::LaunchContext& ctx) {
  const Tensors t(ctx);
  attn::forward_cpu(t.s, t.q, t.k, t.v, ctx.out<float>("O"), ctx.out<float>("LSE"));
}
// The sampled rows in double, scattered to their places in the full-size outputs.
void forward_cpu_sampled(harness::LaunchContext& ctx) {
  const Tensors t(ctx);
  const auto rows = sampled_rows(t.s);
  const std::size_t d = static_cast<std::size_t>(t.s.head_dim);
  std::vector<float> o(rows.size() * d), lse(rows.size());
  attn::forward_cpu_rows(t.s, t.q, t.k, t.v, rows.data(), rows.size(), o.data(), lse.data());
  float *out_o = ctx.out<float>("O"), *out_lse = ctx.out<float>("LSE");
  for (std::size_t r = 0; r < rows.size(); ++r) {
    std::copy_n(o.data() + r * d, d, out_o + static_cast<std::size_t>(rows[r]) * d);
    out_lse[rows[r]] = lse[r];
  }
}

struct Gradients {
  float *dq, *dk, *dv;
  explicit Gradients(const harness::LaunchContext& ctx)
      : dq(ctx.out<float>("dQ")), dk(ctx.out<float>("dK")), dv(ctx.out<float>("dV")) {}
};

void backward_naive(harness::LaunchContext& ctx) {
  const Tensors t(ctx);
  const Gradients g(ctx);
  float* ws = workspace_floats(ctx, attn::naive_backward_workspace_bytes(t.s));
  HARNESS_CUDA(attn::naive_backward(t.s, t.q, t.k, t.v, ctx.in<float>("O"), ctx.in<float>("LSE"), ctx.in<float>("dO"),
                                    g.dq, g.dk, g.dv, ws, ctx.stream));
}
void backward_flash(harness::LaunchContext& ctx) {
  const Tensors t(ctx);
  const Gradients g(ctx);
  float* ws = workspace_floats(ctx, attn::flash_backward_workspace_bytes(t.s));
  HARNESS_CUDA(attn::flash_backward(t.s, t.q, t.k, t.v, ctx.in<float>("O"), ctx.in<float>("LSE"), ctx.in<float>("dO"),
                                    g.dq, g.dk, g.dv, ws, ctx.stream));
}
void backward_cpu(harness::LaunchContext& ctx) {
  const Tensors t(ctx);
  const Gradients g(ctx);
  attn::backward_cpu(t.s, t.q, t.k, t.v, ctx.in<float>("dO"), g.dq, g.dk, g.dv);
}
void backward_cpu_sampled(harness::LaunchContext& ctx) {
  const Tensors t(ctx);
  const auto rows = sampled_rows(t.s);
  const std::size_t d = static_cast<std::size_t>(t.s.head_dim);
  std::vector<float> dq(rows.size() * d);
  attn::backward_cpu_dq_rows(t.s, t.q, t.k, t.v, ctx.in<float>("dO"), rows.data(), rows.size(), dq.data());
  float* out = ctx.out<float>("dQ");
  for (std::size_t r = 0; r < rows.size(); ++r)
    std::copy_n(dq.data() + r * d, d, out + static_cast<std::size_t>(rows[r]) * d);
}

// ---- constraints and workspace sizes -----------------------------------------------------

std::optional<std::string> flash_constraint(const harness::Params& p) {
  const int d = static_cast<int>(p.get_int("head_dim"));
  if (!attn::flash_supported(d)) return fmt::format("flash has kernels for head_dim 32, 64, 128, not {}", d);
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
template <bool kBackward>
std::size_t naive_ws(const harness::Params& p) {
  const attn::Shape s = shape_of(p);
  (void)rules::naive_workspace_bytes(s, kBackward);
  return kBackward ? attn::naive_backward_workspace_bytes(s) : attn::naive_forward_workspace_bytes(s);
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

HARNESS_REGISTER_VARIANT_FULL(attention, naive, cuda,
                              "S = scale Q K^T materialized (B*H*N^2 floats of workspace), row softmax, O = P V",
                              forward_naive, nullptr, naive_ws<false>);
HARNESS_REGISTER_VARIANT_IF(attention, flash, cuda,
                            "FlashAttention-2: 128x64 (d=128: 64x32) tiles, online softmax, cp.async K/V pipeline, "
                            "8x8 register tiles per thread, causal tile skipping",
                            forward_flash, flash_constraint);
HARNESS_REGISTER_VARIANT_IF(attention, cpu, cpu,
                            "host reference: double accumulation, one query row at a time, all threads", forward_cpu,
                            cpu_constraint<false>);
HARNESS_REGISTER_REFERENCE_VARIANT(attention, cpu_sampled, cpu,
                                   "host reference on 256 sampled query rows (the reference at sizes where cpu is off; "
                                   "its time is that of the sample)",
                                   forward_cpu_sampled, cpu_sampled_constraint<false>);

HARNESS_REGISTER_VARIANT_FULL(attention_backward, naive, cuda,
                              "P and dP/dS materialized (2*B*H*N^2 floats of workspace), batched GEMMs",
                              backward_naive, nullptr, naive_ws<true>);
HARNESS_REGISTER_VARIANT_FULL(attention_backward, flash, cuda,
                              "FlashAttention-2 backward: one block per K/V tile iterating over Q tiles, P recomputed "
                              "from LSE, dQ (and GQA dK/dV) by float4 atomics",
                              backward_flash, flash_constraint, flash_backward_ws);
HARNESS_REGISTER_VARIANT_IF(attention_backward, cpu, cpu,
                            "host reference: forward and backward in double, all threads", backward_cpu,
                            cpu_constraint<true>);
HARNESS_REGISTER_REFERENCE_VARIANT(attention_backward, cpu_sampled, cpu,
                                   "host reference of dQ on 256 sampled query rows (the reference where cpu is off)",
                                   backward_cpu_sampled, cpu_sampled_constraint<true>);
