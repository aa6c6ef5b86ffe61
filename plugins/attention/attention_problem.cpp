// The `attention` and `attention_backward` problems: scaled dot-product attention
// (kernels/attention) in f32, bf16 or f16 (param dtype), with variants naive (materialized
// N x N scores, f32 only), flash (FlashAttention-2: the FP32 SIMT kernels for f32; for
// bf16/f16 the Hopper wgmma kernel on sm_90, else FlashAttention-2 on mma.sync; both are
// also variants of their own, flash_wgmma and flash_fa2) and the double-precision host
// references.
//
// dtype: Q, K, V, O (dO, dQ, dK, dV) are in the dtype, LSE is f32. `flash` picks its
// kernel by dtype rather than a separate `flash_tc` variant, so that one suite line
// `variants: [flash]` with a dtype axis compares like with like and matches PyTorch's
// single SDPA entry point; the variant description names both kernels. The host
// references read bf16/f16 inputs widened to float (exact), so they are the double
// result on the rounded inputs, rounded once to the output dtype.
//
// Shapes: Q, O, dO, dQ (B, H, N, d); K, V, dK, dV (B, Hkv, N, d); LSE (B, H, N).
// Inputs are N(0, 1), each (tensor, head) from its own generator stream (stream id =
// tensor << 32 | head), so heads are generated in parallel and a head's values do not
// depend on how many other heads there are.
//
// dtype fp8_e4m3 (forward only): E4M3 Q, K, V with per-tensor scales, bf16 O; its inputs,
// tolerance and kernel are in attention_fp8.hpp. Variants without an FP8 path skip it.
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
#include "attention_fp8.hpp"
#include "attention_rules.hpp"
#include "harness/cuda_check.hpp"
#include "harness/dtype.hpp"
#include "harness/error.hpp"
#include "harness/registry.hpp"

namespace {

namespace attn = kernels::attention;
namespace rules = plugins::attention;
using harness::DType;

// The dtype of Q, K, V (and of the backward's tensors): fp8_e4m3 bytes are u8 operands.
DType dtype_of(const harness::Params& p) {
  const std::string& d = p.get_string("dtype");
  return d == "bf16" ? DType::bf16 : d == "f16" ? DType::f16 : rules::is_fp8(p) ? DType::u8 : DType::f32;
}
// The dtype of O: the inputs' but for fp8_e4m3, whose O is bf16.
DType out_dtype_of(const harness::Params& p) { return rules::is_fp8(p) ? DType::bf16 : dtype_of(p); }
using rules::is_fp8;
attn::Precision precision_of(DType d) { return d == DType::bf16 ? attn::Precision::bf16 : attn::Precision::f16; }

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
// dt u8 (fp8_e4m3): Q, K, V with the quantizing fill of their scale, O bf16.
std::vector<harness::OperandSpec> attention_operands(const attn::Shape& s, bool backward, DType dt) {
  const std::int64_t B = s.batch, H = s.heads, Hkv = s.kv_heads, N = s.seq_len, d = s.head_dim;
  const bool fp8 = dt == DType::u8;
  auto tensor = [&](const char* name, std::int64_t heads, std::uint64_t stream) {
    if (fp8) {
      const float scale = stream == 1 ? rules::kFp8Scales.q : stream == 2 ? rules::kFp8Scales.k : rules::kFp8Scales.v;
      return harness::input(name, DType::u8, {B, heads, N, d},
                            rules::fp8_fill(scale, stream, static_cast<std::size_t>(N * d)));
    }
    return harness::input(name, dt, {B, heads, N, d}, harness::normal().with_stream(stream).per_block(N * d));
  };
  const bool sampled = rules::sampled(s, backward);
  const std::vector<std::int64_t> rows = sampled ? sampled_rows(s) : std::vector<std::int64_t>{};
  auto out = [&](const char* name, std::vector<std::int64_t> shape, std::int64_t width, bool by_rows,
                 DType type) {
    harness::OperandSpec o = harness::output(name, type, std::move(shape));
    if (sampled) o.sample = {width, by_rows ? rows : std::vector<std::int64_t>{}};
    return o;
  };
  std::vector<harness::OperandSpec> ops = {tensor("Q", H, 1), tensor("K", Hkv, 2), tensor("V", Hkv, 3)};
  if (!backward) {
    ops.push_back(out("O", {B, H, N, d}, d, true, fp8 ? DType::bf16 : dt));
    ops.push_back(out("LSE", {B, H, N}, 1, true, DType::f32));
    if (fp8) {
      ops[ops.size() - 2].tolerance = rules::fp8_o_tolerance();
      ops.back().tolerance = rules::fp8_lse_tolerance(s);
    }
    return ops;
  }
  // The forward's O and LSE are inputs too, derived once by finish_inputs.
  ops.push_back(tensor("dO", H, 4));
  ops.push_back(harness::input("O", dt, {B, H, N, d}, harness::custom_fill(nullptr)));
  ops.push_back(harness::input("LSE", DType::f32, {B, H, N}, harness::custom_fill(nullptr)));
  // dQ rows are checked in value (each needs one row of P and dP); dK and dV (sums over
  // every query) only for coverage and finiteness.
  ops.push_back(out("dQ", {B, H, N, d}, d, true, dt));
  ops.push_back(out("dK", {B, Hkv, N, d}, d, false, dt));
  ops.push_back(out("dV", {B, Hkv, N, d}, d, false, dt));
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
                         "d; flash has kernels for 32, 64, 128 (bf16/f16: 64, 128), naive and cpu take any "
                         "multiple of 4"),
      harness::bool_param("causal", false, "query i attends keys j <= i only"),
      harness::float_param("scale", 0.0, -1000.0, 1000.0, "softmax scale of Q K^T; 0 means 1/sqrt(head_dim)"),
      harness::enum_param("dtype", "f32", {"f32", "bf16", "f16", rules::kFp8DType},
                          "element type of Q, K, V, O (dO, dQ, dK, dV); LSE, softmax statistics and "
                          "accumulation are f32. fp8_e4m3 (forward only): E4M3 Q, K, V with per-tensor "
                          "scales (recorded in the result's config), bf16 O; flash/flash_wgmma (Hopper, "
                          "d=128) and the references run it"),
  };
}

// ---- operands of the problem's dtype ------------------------------------------------------

const void* typed_in(const harness::Operands& io, const char* name, DType dt) {
  if (dt == DType::bf16) return io.in<__nv_bfloat16>(name);
  if (dt == DType::f16) return io.in<__half>(name);
  return io.in<float>(name);
}
void* derived(const harness::Operands& io, const char* name, DType dt) {
  if (dt == DType::bf16) return io.derived_input<__nv_bfloat16>(name);
  if (dt == DType::f16) return io.derived_input<__half>(name);
  return io.derived_input<float>(name);
}
const void* in_any(const harness::LaunchContext& ctx, const char* name) {
  const DType dt = dtype_of(*ctx.params);
  if (dt == DType::bf16) return ctx.in<__nv_bfloat16>(name);
  if (dt == DType::f16) return ctx.in<__half>(name);
  if (dt == DType::u8) return ctx.in<std::uint8_t>(name);
  return ctx.in<float>(name);
}
void* out_any(const harness::LaunchContext& ctx, const char* name) {
  const DType dt = out_dtype_of(*ctx.params);
  if (dt == DType::bf16) return ctx.out<__nv_bfloat16>(name);
  if (dt == DType::f16) return ctx.out<__half>(name);
  return ctx.out<float>(name);
}

// A host tensor of dtype `dt` as floats: the pointer itself for f32, else a widened copy
// (bf16 and f16 convert to float exactly, so the references see the rounded inputs); u8 is
// fp8_e4m3: the dequantized values fp8_scale * q (exact in float).
struct HostFloats {
  std::vector<float> store;
  const float* ptr = nullptr;
  HostFloats(const void* p, std::size_t n, DType dt, float fp8_scale = 1.0f) {
    if (dt == DType::f32) {
      ptr = static_cast<const float*>(p);
      return;
    }
    if (dt == DType::u8) {
      store = rules::fp8_dequantized(p, n, fp8_scale);
      ptr = store.data();
      return;
    }
    store.resize(n);
    const auto* bytes = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i)
      store[i] = static_cast<float>(harness::load_as_double(bytes + i * harness::size_of(dt), dt));
    ptr = store.data();
  }
  HostFloats(const std::vector<unsigned char>& bytes, std::size_t n, DType dt) : HostFloats(bytes.data(), n, dt) {
    if (dt == DType::f32) store.assign(ptr, ptr + n), ptr = store.data();  // own the bytes' copy
  }
};
// `count` values as dtype `dt` (round to nearest even).
std::vector<unsigned char> narrowed(const std::vector<float>& x, DType dt) {
  std::vector<unsigned char> out(x.size() * harness::size_of(dt));
  for (std::size_t i = 0; i < x.size(); ++i) harness::store_from_double(out.data() + i * harness::size_of(dt), dt, x[i]);
  return out;
}
// Elements [offset, offset + n) of a host tensor of dtype `dt` set from floats.
void store_row(void* dst, DType dt, std::size_t offset, const float* src, std::size_t n) {
  auto* bytes = static_cast<unsigned char*>(dst);
  for (std::size_t i = 0; i < n; ++i)
    harness::store_from_double(bytes + (offset + i) * harness::size_of(dt), dt, src[i]);
}
// An output written as floats, rounded into the dtype by finish() (f32: in place).
struct HostOut {
  void* dst;
  DType dt;
  std::vector<float> store;
  float* ptr;
  HostOut(void* p, std::size_t n, DType type) : dst(p), dt(type), store(type == DType::f32 ? 0 : n) {
    ptr = type == DType::f32 ? static_cast<float*>(p) : store.data();
  }
  void finish() {
    if (dt != DType::f32) store_row(dst, dt, 0, store.data(), store.size());
  }
};
std::vector<unsigned char> download(const void* dev, std::size_t n, DType dt) {
  std::vector<unsigned char> h(n * harness::size_of(dt));
  HARNESS_CUDA(cudaMemcpy(h.data(), dev, h.size(), cudaMemcpyDeviceToHost));
  return h;
}

class AttentionProblemBase : public harness::Problem {
 public:
  explicit AttentionProblemBase(bool backward) : backward_(backward) {}
  std::vector<harness::ParamSpec> params() const override {
    std::vector<harness::ParamSpec> specs = attention_params();
    if (backward_)
      specs.push_back(harness::bool_param(
          "deterministic", false,
          "backward: dQ (and GQA dK, dV) summed in a fixed order, equal bits run to run (flash_wgmma, flash on "
          "sm_90 bf16/f16, naive, cpu; the atomics-order kernels skip it)"));
    return specs;
  }
  std::optional<std::string> reject(const harness::Params& p) const override {
    const attn::Shape s = shape_of(p);
    if (std::string why = attn::shape_error(s); !why.empty()) return why;
    if (backward_ && is_fp8(p))
      return std::string("dtype fp8_e4m3 is forward only (the `attention` problem); attention_backward takes f32, "
                         "bf16 or f16");
    try {  // the naive variants' N^2 scores must have a byte count that fits in 64 bits
      (void)rules::naive_workspace_bytes(s, backward_);
    } catch (const harness::InputError& e) {
      return e.what();
    }
    return std::nullopt;
  }
  std::vector<harness::OperandSpec> operands(const harness::Params& p) const override {
    return attention_operands(shape_of(p), backward_, dtype_of(p));
  }
  harness::Work work(const harness::Params& p) const override {
    return rules::work(shape_of(p), backward_, static_cast<double>(harness::size_of(dtype_of(p))),
                       static_cast<double>(harness::size_of(out_dtype_of(p))));
  }
  harness::Tolerance tolerance(const harness::Params& p) const override {
    if (is_fp8(p)) return rules::fp8_o_tolerance();  // O's and LSE's own are on the operands
    return rules::tolerance(shape_of(p), backward_, dtype_of(p));
  }
  std::string tolerance_rule() const override {
    return backward_ ? rules::kBackwardToleranceRule
                     : std::string(rules::kForwardToleranceRule) + ". " + rules::kFp8ToleranceRule;
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
    return "softmax(scale Q K^T) V (f32, bf16, f16, or fp8_e4m3 with per-tensor scales and a bf16 O) per "
           "(batch, head), optional causal mask, GQA/MQA; outputs O (B,H,N,d) and LSE (B,H,N)";
  }
};

class AttentionBackwardProblem final : public AttentionProblemBase {
 public:
  AttentionBackwardProblem() : AttentionProblemBase(true) {}
  std::string name() const override { return "attention_backward"; }
  std::string description() const override {
    return "attention backward (f32, bf16 or f16): dQ, dK, dV from Q, K, V, dO and the forward's O, LSE "
           "(GQA: dK, dV summed over the query heads of a kv head)";
  }
  // O and LSE on the device: the flash forward (not part of any timed run), or the host
  // forward uploaded where no flash kernel exists for the head size. The host references
  // recompute the forward in double themselves.
  void finish_inputs(harness::Operands& io, const harness::Params& p, cudaStream_t stream) const override {
    if (io.backend() != harness::Backend::cuda) return;
    const attn::Shape s = shape_of(p);
    const DType dt = dtype_of(p);
    const void *q = typed_in(io, "Q", dt), *k = typed_in(io, "K", dt), *v = typed_in(io, "V", dt);
    void* o = derived(io, "O", dt);
    float* lse = io.derived_input<float>("LSE");
    if (dt == DType::f32 && attn::flash_supported(s.head_dim)) {
      HARNESS_CUDA(attn::flash_forward(s, static_cast<const float*>(q), static_cast<const float*>(k),
                                       static_cast<const float*>(v), static_cast<float*>(o), lse, stream));
      return;
    }
    if (dt != DType::f32 && attn::flash_tc_supported(s.head_dim)) {
      HARNESS_CUDA(attn::flash_tc_forward(s, precision_of(dt), q, k, v, o, lse, stream));
      return;
    }
    const std::size_t qn = static_cast<std::size_t>(s.q_elements()), kvn = static_cast<std::size_t>(s.kv_elements());
    const HostFloats hq(download(q, qn, dt), qn, dt), hk(download(k, kvn, dt), kvn, dt),
        hv(download(v, kvn, dt), kvn, dt);
    std::vector<float> ho(qn), hl(s.lse_elements());
    attn::forward_cpu(s, hq.ptr, hk.ptr, hv.ptr, ho.data(), hl.data());
    const std::vector<unsigned char> narrow = narrowed(ho, dt);
    HARNESS_CUDA(cudaMemcpy(o, narrow.data(), narrow.size(), cudaMemcpyHostToDevice));
    HARNESS_CUDA(cudaMemcpy(lse, hl.data(), hl.size() * 4, cudaMemcpyHostToDevice));
  }
};

// ---- launch functions -------------------------------------------------------------------

struct Tensors {
  attn::Shape s;
  DType dt, odt;  // Q, K, V (u8: fp8_e4m3) and O
  const void *q, *k, *v;
  explicit Tensors(const harness::LaunchContext& ctx)
      : s(shape_of(*ctx.params)), dt(dtype_of(*ctx.params)), odt(out_dtype_of(*ctx.params)), q(in_any(ctx, "Q")),
        k(in_any(ctx, "K")), v(in_any(ctx, "V")) {}
  std::size_t q_count() const { return static_cast<std::size_t>(s.q_elements()); }
  std::size_t kv_count() const { return static_cast<std::size_t>(s.kv_elements()); }
  // Q, K, V as floats for the host references (fp8: dequantized with their scales).
  HostFloats host_q() const { return HostFloats(q, q_count(), dt, rules::kFp8Scales.q); }
  HostFloats host_k() const { return HostFloats(k, kv_count(), dt, rules::kFp8Scales.k); }
  HostFloats host_v() const { return HostFloats(v, kv_count(), dt, rules::kFp8Scales.v); }
};
const float* f32(const void* p) { return static_cast<const float*>(p); }
float* f32(void* p) { return static_cast<float*>(p); }

float* workspace_floats(harness::LaunchContext& ctx, std::size_t bytes) {
  return static_cast<float*>(ctx.workspace->get(0, std::max<std::size_t>(bytes, 4)));
}

// The backward's `deterministic` parameter, false where a caller's Params lack it (tests build
// Params by hand).
bool deterministic_of(const harness::Params& p) { return p.has("deterministic") && p.get_bool("deterministic"); }

void forward_naive(harness::LaunchContext& ctx) {
  const Tensors t(ctx);
  float* ws = workspace_floats(ctx, attn::naive_forward_workspace_bytes(t.s));
  HARNESS_CUDA(attn::naive_forward(t.s, f32(t.q), f32(t.k), f32(t.v), ctx.out<float>("O"), ctx.out<float>("LSE"), ws,
                                   ctx.stream));
}
// The two bf16/f16 forward rungs, FlashAttention-2 (mma.sync) and the Hopper kernel, on
// tensors already read from the context (flash dispatches between them).
void fa2_forward(harness::LaunchContext& ctx, const Tensors& t) {
  HARNESS_CUDA(attn::flash_tc_forward(t.s, precision_of(t.dt), t.q, t.k, t.v, out_any(ctx, "O"),
                                      ctx.out<float>("LSE"), ctx.stream));
}
void wgmma_forward(harness::LaunchContext& ctx, const Tensors& t) {
  HARNESS_CUDA(attn::flash_hopper_forward(t.s, precision_of(t.dt), t.q, t.k, t.v, out_any(ctx, "O"),
                                          ctx.out<float>("LSE"), ctx.stream));
}
void forward_flash_fa2(harness::LaunchContext& ctx) { fa2_forward(ctx, Tensors(ctx)); }
void forward_flash_wgmma(harness::LaunchContext& ctx) {
  if (is_fp8(*ctx.params)) return rules::launch_fp8_forward(ctx, shape_of(*ctx.params));
  wgmma_forward(ctx, Tensors(ctx));
}
// The result's config of the Hopper forward: fp8's scales, or the 16-bit kernel the dispatch
// picks (tile shape, lazy or eager rescaling; attn::flash_hopper_config). flash records it
// only where it takes the Hopper kernel (an sm_90 device; elsewhere FlashAttention-2).
std::string hopper_16bit_config(const harness::Params& p) {
  const std::string& d = p.get_string("dtype");
  return d == "bf16" || d == "f16" ? attn::flash_hopper_config(shape_of(p)) : std::string();
}
std::string flash_wgmma_config(const harness::Params& p) {
  return is_fp8(p) ? rules::fp8_config(p) : hopper_16bit_config(p);
}
std::string flash_config(const harness::Params& p) {
  if (is_fp8(p)) return rules::fp8_config(p);
  return attn::flash_hopper_unsupported(shape_of(p)) == nullptr ? hopper_16bit_config(p) : std::string();
}
// The result's config of the Hopper backward: the kernel flash_hopper_backward runs ("default
// (lean 15)", or an experiment's "lean N" / "ping-pong": attn::flash_hopper_backward_kernel_at), so that
// an A/B run's reports say which was timed; only where that kernel runs (bf16/f16, a supported
// head size, an sm_90 device), for flash and flash_wgmma alike.
std::string flash_wgmma_backward_config(const harness::Params& p) {
  const std::string& d = p.get_string("dtype");
  if ((d != "bf16" && d != "f16") || attn::flash_hopper_backward_unsupported(shape_of(p)) != nullptr) return {};
  const int chains = deterministic_of(p) ? attn::flash_hopper_backward_dq_chains() : 1;
  return std::string("128 keys x 64-query steps, ") +
         attn::flash_hopper_backward_kernel_at(static_cast<int>(p.get_int("head_dim"))) + " kernel" +
         (chains > 1 ? ", dQ in " + std::to_string(chains) + " deterministic chains" : "");
}
std::string flash_backward_config(const harness::Params& p) { return flash_wgmma_backward_config(p); }
// f32: the FP32 FlashAttention-2 kernels; bf16/f16: the Hopper (wgmma) kernel where it can
// run the shape (sm_90, head_dim 64/128/256, positive scale), else FlashAttention-2 on
// mma.sync tensor cores; fp8_e4m3: the Hopper FP8 kernel (its constraint holds).
void forward_flash(harness::LaunchContext& ctx) {
  if (is_fp8(*ctx.params)) return rules::launch_fp8_forward(ctx, shape_of(*ctx.params));
  const Tensors t(ctx);
  if (t.dt != DType::f32)
    return attn::flash_hopper_unsupported(t.s) == nullptr ? wgmma_forward(ctx, t) : fa2_forward(ctx, t);
  HARNESS_CUDA(attn::flash_forward(t.s, f32(t.q), f32(t.k), f32(t.v), ctx.out<float>("O"), ctx.out<float>("LSE"),
                                   ctx.stream));
}
// FP32 flash with its products in 3xTF32 on tensor cores (f32 only, see flash_3xtf32_constraint).
// kKeyTile: keys per tile, 0 = the kernel's default for the head size (32: tuning variant).
template <int kKeyTile>
void forward_flash_3xtf32(harness::LaunchContext& ctx) {
  const Tensors t(ctx);
  HARNESS_CUDA(attn::flash_forward_tf32x3(t.s, f32(t.q), f32(t.k), f32(t.v), ctx.out<float>("O"),
                                          ctx.out<float>("LSE"), ctx.stream, kKeyTile));
}
// The tensor-core kernels at one fixed block shape (tuning: every shape runs in one suite).
template <attn::TcTiles kTiles>
void forward_flash_tiles(harness::LaunchContext& ctx) {
  const Tensors t(ctx);
  HARNESS_CUDA(attn::flash_tc_forward(t.s, precision_of(t.dt), t.q, t.k, t.v, out_any(ctx, "O"),
                                      ctx.out<float>("LSE"), ctx.stream, kTiles));
}
void forward_cpu(harness::LaunchContext& ctx) {
  const Tensors t(ctx);
  const HostFloats q = t.host_q(), k = t.host_k(), v = t.host_v();
  HostOut o(out_any(ctx, "O"), t.q_count(), t.odt);
  attn::forward_cpu(t.s, q.ptr, k.ptr, v.ptr, o.ptr, ctx.out<float>("LSE"));
  o.finish();
}
// The sampled rows in double, scattered to their places in the full-size outputs.
void forward_cpu_sampled(harness::LaunchContext& ctx) {
  const Tensors t(ctx);
  const auto rows = sampled_rows(t.s);
  const std::size_t d = static_cast<std::size_t>(t.s.head_dim);
  const HostFloats q = t.host_q(), k = t.host_k(), v = t.host_v();
  std::vector<float> o(rows.size() * d), lse(rows.size());
  attn::forward_cpu_rows(t.s, q.ptr, k.ptr, v.ptr, rows.data(), rows.size(), o.data(), lse.data());
  void* out_o = out_any(ctx, "O");
  float* out_lse = ctx.out<float>("LSE");
  for (std::size_t r = 0; r < rows.size(); ++r) {
    store_row(out_o, t.odt, static_cast<std::size_t>(rows[r]) * d, o.data() + r * d, d);
    out_lse[rows[r]] = lse[r];
  }
}

struct Gradients {
  void *dq, *dk, *dv;
  explicit Gradients(const harness::LaunchContext& ctx)
      : dq(out_any(ctx, "dQ")), dk(out_any(ctx, "dK")), dv(out_any(ctx, "dV")) {}
};

void backward_naive(harness::LaunchContext& ctx) {
  const Tensors t(ctx);
  const Gradients g(ctx);
  float* ws = workspace_floats(ctx, attn::naive_backward_workspace_bytes(t.s));
  HARNESS_CUDA(attn::naive_backward(t.s, f32(t.q), f32(t.k), f32(t.v), ctx.in<float>("O"), ctx.in<float>("LSE"),
                                    ctx.in<float>("dO"), f32(g.dq), f32(g.dk), f32(g.dv), ws, ctx.stream));
}
// The two bf16/f16 backward rungs, as the forward's.
void fa2_backward(harness::LaunchContext& ctx, const Tensors& t, const Gradients& g) {
  float* ws = workspace_floats(ctx, attn::flash_tc_backward_workspace_bytes(t.s));
  HARNESS_CUDA(attn::flash_tc_backward(t.s, precision_of(t.dt), t.q, t.k, t.v, in_any(ctx, "O"), ctx.in<float>("LSE"),
                                       in_any(ctx, "dO"), g.dq, g.dk, g.dv, ws, ctx.stream));
}
void wgmma_backward(harness::LaunchContext& ctx, const Tensors& t, const Gradients& g) {
  const bool deterministic = ctx.params->get_bool("deterministic");
  float* ws = workspace_floats(ctx, attn::flash_hopper_backward_workspace_bytes(t.s, deterministic));
  HARNESS_CUDA(attn::flash_hopper_backward(t.s, precision_of(t.dt), t.q, t.k, t.v, in_any(ctx, "O"),
                                           ctx.in<float>("LSE"), in_any(ctx, "dO"), g.dq, g.dk, g.dv, ws, ctx.stream,
                                           deterministic));
}
void backward_flash_fa2(harness::LaunchContext& ctx) { fa2_backward(ctx, Tensors(ctx), Gradients(ctx)); }
void backward_flash_wgmma(harness::LaunchContext& ctx) { wgmma_backward(ctx, Tensors(ctx), Gradients(ctx)); }
// As forward_flash: FP32 kernels for f32; bf16/f16 the Hopper kernel on sm_90, else FA2.
void backward_flash(harness::LaunchContext& ctx) {
  const Tensors t(ctx);
  const Gradients g(ctx);
  if (t.dt != DType::f32)
    return attn::flash_hopper_backward_unsupported(t.s) == nullptr ? wgmma_backward(ctx, t, g)
                                                                   : fa2_backward(ctx, t, g);
  float* ws = workspace_floats(ctx, attn::flash_backward_workspace_bytes(t.s));
  HARNESS_CUDA(attn::flash_backward(t.s, f32(t.q), f32(t.k), f32(t.v), ctx.in<float>("O"), ctx.in<float>("LSE"),
                                    ctx.in<float>("dO"), f32(g.dq), f32(g.dk), f32(g.dv), ws, ctx.stream));
}
void backward_flash_3xtf32(harness::LaunchContext& ctx) {
  const Tensors t(ctx);
  const Gradients g(ctx);
  float* ws = workspace_floats(ctx, attn::flash_backward_workspace_bytes(t.s));
  HARNESS_CUDA(attn::flash_backward_tf32x3(t.s, f32(t.q), f32(t.k), f32(t.v), ctx.in<float>("O"), ctx.in<float>("LSE"),
                                           ctx.in<float>("dO"), f32(g.dq), f32(g.dk), f32(g.dv), ws, ctx.stream));
}
template <attn::TcTiles kTiles>
void backward_flash_tiles(harness::LaunchContext& ctx) {
  const Tensors t(ctx);
  const Gradients g(ctx);
  float* ws = workspace_floats(ctx, attn::flash_tc_backward_workspace_bytes(t.s));
  HARNESS_CUDA(attn::flash_tc_backward(t.s, precision_of(t.dt), t.q, t.k, t.v, in_any(ctx, "O"), ctx.in<float>("LSE"),
                                       in_any(ctx, "dO"), g.dq, g.dk, g.dv, ws, ctx.stream, kTiles));
}
void backward_cpu(harness::LaunchContext& ctx) {
  const Tensors t(ctx);
  const Gradients g(ctx);
  const HostFloats q(t.q, t.q_count(), t.dt), k(t.k, t.kv_count(), t.dt), v(t.v, t.kv_count(), t.dt),
      d_o(in_any(ctx, "dO"), t.q_count(), t.dt);
  HostOut dq(g.dq, t.q_count(), t.dt), dk(g.dk, t.kv_count(), t.dt), dv(g.dv, t.kv_count(), t.dt);
  attn::backward_cpu(t.s, q.ptr, k.ptr, v.ptr, d_o.ptr, dq.ptr, dk.ptr, dv.ptr);
  dq.finish();
  dk.finish();
  dv.finish();
}
void backward_cpu_sampled(harness::LaunchContext& ctx) {
  const Tensors t(ctx);
  const auto rows = sampled_rows(t.s);
  const std::size_t d = static_cast<std::size_t>(t.s.head_dim);
  const HostFloats q(t.q, t.q_count(), t.dt), k(t.k, t.kv_count(), t.dt), v(t.v, t.kv_count(), t.dt),
      d_o(in_any(ctx, "dO"), t.q_count(), t.dt);
  std::vector<float> dq(rows.size() * d);
  attn::backward_cpu_dq_rows(t.s, q.ptr, k.ptr, v.ptr, d_o.ptr, rows.data(), rows.size(), dq.data());
  void* out = out_any(ctx, "dQ");
  for (std::size_t r = 0; r < rows.size(); ++r)
    store_row(out, t.dt, static_cast<std::size_t>(rows[r]) * d, dq.data() + r * d, d);
}

// ---- constraints and workspace sizes -----------------------------------------------------

std::optional<std::string> flash_constraint(const harness::Params& p) {
  const int d = static_cast<int>(p.get_int("head_dim"));
  if (is_fp8(p)) return rules::fp8_kernel_constraint(shape_of(p), "flash");
  if (dtype_of(p) != DType::f32) {
    if (attn::flash_tc_supported(d)) return std::nullopt;
    if (d == 256) {  // the Hopper kernel alone has d = 256
      if (const char* why = attn::flash_hopper_unsupported(shape_of(p)))
        return fmt::format("flash ({}, d=256): {}", p.get_string("dtype"), why);
      return std::nullopt;
    }
    return fmt::format("flash ({}, tensor cores) has kernels for head_dim 64, 128, not {} (and 256 on Hopper)",
                       p.get_string("dtype"), d);
  }
  if (!attn::flash_supported(d)) return fmt::format("flash has kernels for head_dim 32, 64, 128, not {}", d);
  return std::nullopt;
}

// flash_fa2: the mma.sync FlashAttention-2 kernels (bf16/f16, d = 64, 128) on any sm_80+.
std::optional<std::string> flash_fa2_constraint(const harness::Params& p) {
  if (dtype_of(p) == DType::f32) return std::string("flash_fa2: bf16/f16 only (f32 has flash, flash_3xtf32)");
  if (is_fp8(p)) return std::string("flash_fa2: bf16/f16 only (fp8_e4m3 has flash_wgmma on Hopper)");
  const int d = static_cast<int>(p.get_int("head_dim"));
  if (!attn::flash_tc_supported(d)) return fmt::format("flash_fa2 has kernels for head_dim 64, 128, not {}", d);
  return std::nullopt;
}
// flash_wgmma: the Hopper kernel (bf16/f16, d = 64, 128, 256, sm_90, positive scale).
std::optional<std::string> flash_wgmma_constraint(const harness::Params& p) {
  if (dtype_of(p) == DType::f32) return std::string("flash_wgmma: bf16/f16 only (f32 has flash, flash_3xtf32)");
  if (is_fp8(p)) return rules::fp8_kernel_constraint(shape_of(p), "flash_wgmma");
  if (const char* why = attn::flash_hopper_unsupported(shape_of(p))) return fmt::format("flash_wgmma: {}", why);
  return std::nullopt;
}

// The backward `flash`: as flash_constraint, but no kernel has d = 256 backward.
std::optional<std::string> flash_backward_constraint(const harness::Params& p) {
  const int d = static_cast<int>(p.get_int("head_dim"));
  if (dtype_of(p) != DType::f32 && !attn::flash_tc_supported(d))
    return fmt::format("flash backward ({}, tensor cores) has kernels for head_dim 64, 128, not {}",
                       p.get_string("dtype"), d);
  return flash_constraint(p);
}
// flash_wgmma backward: the Hopper kernel (bf16/f16, d = 64, 128, sm_90).
std::optional<std::string> flash_wgmma_backward_constraint(const harness::Params& p) {
  if (dtype_of(p) == DType::f32) return std::string("flash_wgmma: bf16/f16 only (f32 has flash, flash_3xtf32)");
  if (const char* why = attn::flash_hopper_backward_unsupported(shape_of(p))) return fmt::format("flash_wgmma: {}", why);
  return std::nullopt;
}

// deterministic: true only where the sums have a fixed order: flash_wgmma (turn counters),
// naive and the host references (no atomics). The other backward kernels add dQ (and GQA dK,
// dV) by atomics in arrival order; `flash` is the Hopper kernel only on sm_90 at bf16/f16.
template <auto kConstraint>
std::optional<std::string> nondeterministic(const harness::Params& p) {
  if (deterministic_of(p))
    return std::string("deterministic: this kernel sums dQ (and GQA dK, dV) by atomics in arrival order");
  return kConstraint(p);
}
std::optional<std::string> flash_backward_det_constraint(const harness::Params& p) {
  if (deterministic_of(p) &&
      (dtype_of(p) == DType::f32 || attn::flash_hopper_backward_unsupported(shape_of(p)) != nullptr))
    return std::string("deterministic: here flash is a kernel that sums dQ by atomics in arrival order (the Hopper "
                       "kernel, deterministic, runs bf16/f16 on sm_90)");
  return flash_backward_constraint(p);
}

// flash_tc_*: the tensor-core kernels only; the backward has no 2-m-tile shape at d = 128.
template <bool kBackward, attn::TcTiles kTiles>
std::optional<std::string> flash_tiles_constraint(const harness::Params& p) {
  if (dtype_of(p) == DType::f32) return std::string("flash_tc_*: bf16/f16 tensor-core block shapes only, not f32");
  if (is_fp8(p)) return std::string("flash_tc_*: bf16/f16 tensor-core block shapes only, not fp8_e4m3");
  if (kBackward && kTiles == attn::TcTiles::rows128 && p.get_int("head_dim") == 128)
    return std::string("flash_tc_r128 backward: 4 warps x 32 keys need 256 f32 registers of dK/dV at d=128");
  return flash_constraint(p);
}

// flash_tc_deep: the d = 128 candidates with a deeper inner step (forward: rows128 with
// 48-key tiles; backward: rows128_w8 with 64-query steps). At d = 64 they would be
// flash_tc_r128 / flash_tc_w8 again.
template <bool kBackward>
std::optional<std::string> flash_deep_constraint(const harness::Params& p) {
  if (p.get_int("head_dim") != 128)
    return fmt::format("flash_tc_deep: a head_dim 128 shape (at {} it is {})", p.get_int("head_dim"),
                       kBackward ? "flash_tc_w8" : "flash_tc_r128");
  return flash_tiles_constraint<kBackward, attn::TcTiles::rows128_deep>(p);
}

// flash_3xtf32: the FP32 kernels' 3xTF32 form, f32 inputs only (bf16/f16 have `flash`).
std::optional<std::string> flash_3xtf32_constraint(const harness::Params& p) {
  if (dtype_of(p) != DType::f32)
    return fmt::format("flash_3xtf32: dtype f32 only, not {} (flash runs bf16/f16 on tensor cores)", p.get_string("dtype"));
  return flash_constraint(p);
}

// naive is FP32 only (its score GEMMs and softmax are f32 kernels).
std::optional<std::string> naive_constraint(const harness::Params& p) {
  if (dtype_of(p) != DType::f32) return fmt::format("naive: dtype f32 only, not {}", p.get_string("dtype"));
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
// flash, flash_wgmma forward: V^T at fp8_e4m3, nothing otherwise.
std::size_t fp8_ws(const harness::Params& p) { return is_fp8(p) ? rules::fp8_workspace(shape_of(p)) : 0; }
template <bool kBackward>
std::size_t naive_ws(const harness::Params& p) {
  const attn::Shape s = shape_of(p);
  (void)rules::naive_workspace_bytes(s, kBackward);
  return kBackward ? attn::naive_backward_workspace_bytes(s) : attn::naive_forward_workspace_bytes(s);
}
std::size_t flash_backward_ws(const harness::Params& p) {
  const attn::Shape s = shape_of(p);
  if (dtype_of(p) != DType::f32) {  // the f32 dQ accumulator and D
    (void)harness::size_product("flash attention backward workspace (B*H*N*(d+1) floats)", s.batch, s.heads,
                                s.seq_len, s.head_dim + 1, sizeof(float));
    // the Hopper kernel's (a superset: the same sums and D; deterministic: its turn counters
    // and dQ partial sums)
    return std::max(attn::flash_tc_backward_workspace_bytes(s),
                    attn::flash_hopper_backward_workspace_bytes(s, deterministic_of(p)));
  }
  (void)harness::size_product("flash attention backward workspace (B*H*N floats)", s.batch, s.heads, s.seq_len,
                              sizeof(float));
  return attn::flash_backward_workspace_bytes(s);
}

}  // namespace

HARNESS_REGISTER_PROBLEM(AttentionProblem);
HARNESS_REGISTER_PROBLEM(AttentionBackwardProblem);

HARNESS_REGISTER_VARIANT_FULL(attention, naive, cuda,
                              "S = scale Q K^T materialized (B*H*N^2 floats of workspace), row softmax, O = P V",
                              forward_naive, naive_constraint, naive_ws<false>);
// The references record fp8's scales as the result's config; flash and flash_wgmma also
// record the 16-bit Hopper kernel they ran (flash_config, flash_wgmma_config). The
// kernels' fp8 path has V^T in its workspace.
HARNESS_REGISTER_VARIANT_WITH(
    harness::make_variant("attention", "flash", harness::Backend::cuda, forward_flash)
        .description("f32: FlashAttention-2, 128x64 (d=128: 64x32) tiles, online softmax, cp.async K/V "
                     "pipeline, 8x8 register tiles per thread, causal tile skipping. bf16/f16: on sm_90 the "
                     "Hopper kernel (flash_wgmma), elsewhere FlashAttention-2 on mma.sync (flash_fa2). "
                     "fp8_e4m3: the Hopper FP8 kernel (flash_wgmma)")
        .constraint(flash_constraint)
        .workspace(fp8_ws)
        .config(flash_config));
HARNESS_REGISTER_VARIANT_IF(attention, flash_fa2, cuda,
                            "bf16/f16 FlashAttention-2 on tensor cores (mma.sync m16n8k16, sm_80+): 128 query rows "
                            "(4 warps x 32) x 64-key tiles (d=128: 48, Q re-read from smem), cp.async, swizzled smem, "
                            "P reused from registers; other block shapes: flash_tc_r64/_w8/_deep",
                            forward_flash_fa2, flash_fa2_constraint);
HARNESS_REGISTER_VARIANT_WITH(
    harness::make_variant("attention", "flash_wgmma", harness::Backend::cuda, forward_flash_wgmma)
        .description("bf16/f16 Hopper flash forward (sm_90a): TMA loads + mbarrier ring, producer warp and 2 "
                     "consumer warpgroups (setmaxnreg), S = Q K^T and O += P V on wgmma (P from registers), "
                     "softmax overlapped with the previous tile's P V; 128 query rows x 128-key tiles (d=64 from N=2048, "
                     "causal from 8192: 192; d=256: 80), lazy rescaling at d=128/256 (the result's config names the "
                     "kernel). "
                     "fp8_e4m3 (d=128): the same with k32 e4m3 wgmma, P rounded to e4m3, V transposed first "
                     "(K-major for fp8 wgmma; timed), 3 K/V stages, bf16 O")
        .constraint(flash_wgmma_constraint)
        .workspace(fp8_ws)
        .config(flash_wgmma_config));
HARNESS_REGISTER_VARIANT_IF(attention, flash_3xtf32, cuda,
                            "f32 FlashAttention-2 with every product on tensor cores in 3xTF32 (x = tf32 hi + tf32 lo, "
                            "3 mma.sync m16n8k8 per product, ~2^-21 relative error, FP32 tolerances; PyTorch's FP32 "
                            "efficient SDPA does the same): 64 query rows (4 warps x 16) x 64-key tiles (32: flash_3xtf32_k32)",
                            forward_flash_3xtf32<0>, flash_3xtf32_constraint);
HARNESS_REGISTER_VARIANT_IF(attention, flash_3xtf32_k32, cuda,
                            "flash_3xtf32 forward at 32-key tiles (tuning: no spills at d=128)",
                            forward_flash_3xtf32<32>, flash_3xtf32_constraint);
HARNESS_REGISTER_VARIANT_IF(attention, flash_tc_r64, cuda,
                            "bf16/f16 flash forward, fixed shape (tuning): 64 query rows, 4 warps x 16 rows",
                            forward_flash_tiles<attn::TcTiles::rows64>,
                            (flash_tiles_constraint<false, attn::TcTiles::rows64>));
HARNESS_REGISTER_VARIANT_IF(attention, flash_tc_r128, cuda,
                            "bf16/f16 flash forward, fixed shape (tuning): 128 rows, 4 warps x 32 rows (d=128: "
                            "32-key tiles, Q re-read from smem)",
                            forward_flash_tiles<attn::TcTiles::rows128>,
                            (flash_tiles_constraint<false, attn::TcTiles::rows128>));
HARNESS_REGISTER_VARIANT_IF(attention, flash_tc_w8, cuda,
                            "bf16/f16 flash forward, fixed shape (tuning): 128 rows, 8 warps x 16 rows, Q in "
                            "registers, 64-key tiles",
                            forward_flash_tiles<attn::TcTiles::rows128_w8>,
                            (flash_tiles_constraint<false, attn::TcTiles::rows128_w8>));
HARNESS_REGISTER_VARIANT_IF(attention, flash_tc_deep, cuda,
                            "bf16/f16 flash forward, fixed shape (tuning): 128 rows, 4 warps x 32 rows, 48-key tiles "
                            "at d=128 (Q re-read from smem once per 48 keys instead of 32); d=128 only",
                            forward_flash_tiles<attn::TcTiles::rows128_deep>, flash_deep_constraint<false>);
HARNESS_REGISTER_VARIANT_WITH(harness::make_variant("attention", "cpu", harness::Backend::cpu, forward_cpu)
                                  .description("host reference: double accumulation, one query row at a time, all "
                                               "threads (fp8_e4m3: on the dequantized inputs)")
                                  .constraint(cpu_constraint<false>)
                                  .config(rules::fp8_config));
HARNESS_REGISTER_VARIANT_WITH(
    harness::make_variant("attention", "cpu_sampled", harness::Backend::cpu, forward_cpu_sampled)
        .description("host reference on 256 sampled query rows (the reference at sizes where cpu is off; "
                     "its time is that of the sample)")
        .constraint(cpu_sampled_constraint<false>)
        .reference_only()
        .config(rules::fp8_config));

HARNESS_REGISTER_VARIANT_FULL(attention_backward, naive, cuda,
                              "P and dP/dS materialized (2*B*H*N^2 floats of workspace), batched GEMMs",
                              backward_naive, naive_constraint, naive_ws<true>);
HARNESS_REGISTER_VARIANT_WITH(
    harness::make_variant("attention_backward", "flash", harness::Backend::cuda, backward_flash)
        .description("FlashAttention-2 backward: one block per K/V tile iterating over Q tiles, P recomputed "
                     "from LSE, dQ (and GQA dK/dV) by float4 atomics. bf16/f16: on sm_90 the Hopper kernel "
                     "(flash_wgmma), elsewhere flash_fa2: tensor cores, "
                     "128-key blocks (d=64: 4 warps x 32 keys; d=128: 8 warps x 16), GQA summed in registers, dQ by "
                     "f32 float2 atomics; 64-key blocks: flash_tc_r64")
        .constraint(flash_backward_det_constraint)
        .workspace(flash_backward_ws)
        .config(flash_backward_config));
HARNESS_REGISTER_VARIANT_FULL(attention_backward, flash_fa2, cuda,
                              "bf16/f16 FlashAttention-2 backward on mma.sync tensor cores (the `flash` of sm_80+ "
                              "other than sm_90): 128-key blocks, dQ by f32 float2 atomics",
                              backward_flash_fa2, nondeterministic<flash_fa2_constraint>, flash_backward_ws);
HARNESS_REGISTER_VARIANT_WITH(
    harness::make_variant("attention_backward", "flash_wgmma", harness::Backend::cuda, backward_flash_wgmma)
        .description("bf16/f16 Hopper flash backward (sm_90a): K, V of 128 keys once, Q/dO tiles of 64 "
                     "queries by TMA into an mbarrier ring, producer warp + 2 consumer warpgroups "
                     "(setmaxnreg), S^T, dP^T, dV, dK, dQ on wgmma (P^T, dS^T from registers; dS^T via "
                     "swizzled smem (stmatrix) for dQ), dQ through swizzled smem and TMA reduce-adds (f32) by a "
                     "producer warp; deterministic: key blocks take turns per query tile (counters); the "
                     "result's config names the kernel (HARNESS_BWD_LEAN / HARNESS_BWD_PINGPONG experiments)")
        .constraint(flash_wgmma_backward_constraint)
        .workspace(flash_backward_ws)
        .config(flash_wgmma_backward_config));
HARNESS_REGISTER_VARIANT_FULL(attention_backward, flash_3xtf32, cuda,
                              "f32 FlashAttention-2 backward in 3xTF32 on tensor cores: 64-key blocks (4 warps x 16), "
                              "64 (d=128: 32) queries per step, GQA summed in registers, dQ by float2 atomics",
                              backward_flash_3xtf32, nondeterministic<flash_3xtf32_constraint>, flash_backward_ws);
HARNESS_REGISTER_VARIANT_FULL(attention_backward, flash_tc_r64, cuda,
                              "bf16/f16 flash backward, fixed shape (tuning): 64-key blocks, 4 warps x 16 keys",
                              backward_flash_tiles<attn::TcTiles::rows64>,
                              (nondeterministic<flash_tiles_constraint<true, attn::TcTiles::rows64>>),
                              flash_backward_ws);
HARNESS_REGISTER_VARIANT_FULL(attention_backward, flash_tc_r128, cuda,
                              "bf16/f16 flash backward, fixed shape (tuning): 128-key blocks, 4 warps x 32 keys, "
                              "32 queries per step (d=64 only)",
                              backward_flash_tiles<attn::TcTiles::rows128>,
                              (nondeterministic<flash_tiles_constraint<true, attn::TcTiles::rows128>>),
                              flash_backward_ws);
HARNESS_REGISTER_VARIANT_FULL(attention_backward, flash_tc_w8, cuda,
                              "bf16/f16 flash backward, fixed shape (tuning): 128-key blocks, 8 warps x 16 keys",
                              backward_flash_tiles<attn::TcTiles::rows128_w8>,
                              (nondeterministic<flash_tiles_constraint<true, attn::TcTiles::rows128_w8>>),
                              flash_backward_ws);
HARNESS_REGISTER_VARIANT_FULL(attention_backward, flash_tc_deep, cuda,
                              "bf16/f16 flash backward, fixed shape (tuning): 128-key blocks of 8 warps x 16 keys, "
                              "64 queries per step at d=128 (32 in flash_tc_w8); d=128 only",
                              backward_flash_tiles<attn::TcTiles::rows128_deep>, nondeterministic<flash_deep_constraint<true>>,
                              flash_backward_ws);
HARNESS_REGISTER_VARIANT_IF(attention_backward, cpu, cpu,
                            "host reference: forward and backward in double, all threads", backward_cpu,
                            cpu_constraint<true>);
HARNESS_REGISTER_REFERENCE_VARIANT(attention_backward, cpu_sampled, cpu,
                                   "host reference of dQ on 256 sampled query rows (the reference where cpu is off)",
                                   backward_cpu_sampled, cpu_sampled_constraint<true>);
