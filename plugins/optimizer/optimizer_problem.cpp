// The `optimizer` problem: one element-wise update step over a list of f32 parameter
// tensors laid end to end (the concatenation): w (in/out), g (input) and, for adam, the
// moments m (in/out) and v (in/out). `layout: single` is one tensor of n elements;
// `layout: seed_transformer` is the seed Transformer's 260 tensors, 54,715,104 parameters
// (kernels/optimizer/optimizer_layout.cpp); `layout: odd_tensors` is 10 small tensors of
// odd lengths (tests, compute-sanitizer). Per-tensor variants launch once per tensor,
// adam_fused once for the list. Inputs: w, g, m uniform in [-1, 1), v uniform in
// [0.5, 1) (a second moment is positive and, being a running mean of g^2, not far below
// m^2: this bounds the update ratio |m^ / (sqrt(v^) + eps)|, see the tolerance).
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "harness/cuda_check.hpp"
#include "harness/registry.hpp"
#include "optimizer/optimizer.hpp"

namespace {

using harness::DType;
namespace opt = kernels::optimizer;

bool is_adam(const harness::Params& p) { return p.get_string("update") == "adam"; }

// odd_tensors: a short list of odd lengths around the fused chunk (8192) so that tensor
// starts in the concatenation are misaligned for float4 (the vectorized head path, the
// fused scalar path) and chunks end mid-tensor: 10 tensors, 57,539 parameters.
const std::vector<std::int64_t> kOddTensors{1, 3, 4097, 8191, 8192, 8193, 5, 16385, 2, 12470};

std::vector<std::int64_t> tensor_sizes(const harness::Params& p) {
  const std::string& layout = p.get_string("layout");
  if (layout == "single") return {p.get_int("n")};
  if (layout == "odd_tensors") return kOddTensors;
  return opt::seed_transformer_sizes();
}

std::int64_t total(const harness::Params& p) {
  const auto s = tensor_sizes(p);
  return std::accumulate(s.begin(), s.end(), std::int64_t{0});
}

// An upper bound of |m^ / (sqrt(v^) + eps)| for the filled ranges: |m_new| <= 1 (a convex
// mix of values in [-1, 1]) and v_new >= b2 / 2.
double ratio_bound(const harness::Params& p) {
  const double b1 = p.get_float("beta1"), b2 = p.get_float("beta2");
  const bool bc = p.get_bool("bias_correction");
  const double t = static_cast<double>(p.get_int("step"));
  const double c1 = bc ? 1 - std::pow(b1, t) : 1, c2 = bc ? 1 - std::pow(b2, t) : 1;
  return (1 / c1) / (std::sqrt(0.5 * b2 / c2) + p.get_float("eps"));
}

class OptimizerProblem final : public harness::Problem {
 public:
  std::string name() const override { return "optimizer"; }
  std::string description() const override {
    return "one SGD or Adam step over f32 parameter tensors (element-wise, memory bound)";
  }
  std::vector<harness::ParamSpec> params() const override {
    return {harness::enum_param("update", "adam", {"sgd", "adam"}, "sgd: w -= lr g; adam: the slides' update + bias correction"),
            harness::enum_param("layout", "single", {"single", "seed_transformer", "odd_tensors"},
                                "single: one tensor of n; seed_transformer: 260 tensors, 54,715,104 parameters; "
                                "odd_tensors: 10 odd-sized tensors, 57,539 parameters"),
            harness::int_param("n", 1 << 24, 1, std::int64_t{1} << 28, "elements (layout single only)"),
            harness::float_param("lr", 1e-3, 0.0, 1.0, "learning rate"),
            harness::float_param("beta1", 0.9, 0.0, 0.999999, "first-moment decay (the slides' mu)"),
            harness::float_param("beta2", 0.999, 0.5, 0.999999, "second-moment decay (the slides' rho)"),
            harness::float_param("eps", 1e-8, 0.0, 1.0, "added to sqrt(v^)"),
            harness::int_param("step", 10, 1, 1000000000, "t of the bias corrections 1 - beta^t"),
            harness::bool_param("bias_correction", true, "false: the slides' form (no 1 - beta^t)")};
  }
  std::vector<harness::OperandSpec> operands(const harness::Params& p) const override {
    const std::int64_t n = total(p);
    std::vector<harness::OperandSpec> ops{harness::inout("w", DType::f32, {n}, harness::uniform(-1, 1)),
                                          harness::input("g", DType::f32, {n}, harness::uniform(-1, 1))};
    if (is_adam(p)) {
      ops.push_back(harness::inout("m", DType::f32, {n}, harness::uniform(-1, 1)));
      ops.push_back(harness::inout("v", DType::f32, {n}, harness::uniform(0.5, 1)));
    }
    return ops;
  }
  // sgd: 2 FLOPs (a multiply-add), reads w, g and writes w: 12 bytes per parameter.
  // adam: 14 FLOPs (m: 3, v: 4, two bias divisions, sqrt, +eps, divide, *lr, subtract,
  // sqrt and divisions counted as one each), reads w, g, m, v and writes w, m, v: 28 bytes.
  harness::Work work(const harness::Params& p) const override {
    const double n = static_cast<double>(total(p));
    return is_adam(p) ? harness::Work{14 * n, 28 * n} : harness::Work{2 * n, 12 * n};
  }
  // A few f32 roundings per element against the double reference (u = 2^-24):
  //   sgd:  fma(-lr, g, w) with lr rounded to f32: |err| <= u lr |g| + u |w'|
  //         -> abs 4u (1 + lr), rel 2u
  //   adam: m' and v' (constants rounded, two products and a sum): <= 5u for inputs in
  //         [-1, 1] and [0.5, 1); the update lr m^/(sqrt(v^) + eps) to about 17u of
  //         lr R, R the bound of its ratio (see ratio_bound); w' one more rounding
  //         -> abs 8u + 32u lr R, rel 4u
  harness::Tolerance tolerance(const harness::Params& p) const override {
    const double u = harness::unit_roundoff(DType::f32), lr = p.get_float("lr");
    if (!is_adam(p)) return {4 * u * (1 + lr), 2 * u};
    return {8 * u + 32 * u * lr * ratio_bound(p), 4 * u};
  }
  std::string tolerance_rule() const override {
    return "sgd: abs 4u(1 + lr), rel 2u; adam: abs 8u + 32u lr R, rel 4u, with u = 2^-24 and R = (1/c1) / "
           "(sqrt(beta2/2 / c2) + eps) the bound of |m^/(sqrt(v^) + eps)| for the filled ranges";
  }
  std::string reference_variant(const harness::Params&) const override { return "cpu"; }
};

struct Args {
  std::vector<std::int64_t> sizes;
  float* w;
  const float* g;
  float* m = nullptr;
  float* v = nullptr;
  explicit Args(const harness::LaunchContext& ctx)
      : sizes(tensor_sizes(*ctx.params)), w(ctx.out<float>("w")), g(ctx.in<float>("g")) {
    if (is_adam(*ctx.params)) {
      m = ctx.out<float>("m");
      v = ctx.out<float>("v");
    }
  }
};

opt::AdamConfig config(const harness::Params& p) {
  return opt::make_adam_config(p.get_float("lr"), p.get_float("beta1"), p.get_float("beta2"), p.get_float("eps"),
                               p.get_int("step"), p.get_bool("bias_correction"));
}

// The reference: elements are independent, so the layout does not matter on the host.
void launch_cpu(harness::LaunchContext& ctx) {
  const Args a(ctx);
  const harness::Params& p = *ctx.params;
  const auto n = static_cast<std::size_t>(total(p));
  if (!is_adam(p)) {
    opt::cpu_sgd(a.w, a.g, n, p.get_float("lr"));
    return;
  }
  opt::cpu_adam(a.w, a.g, a.m, a.v, n, p.get_float("lr"), p.get_float("beta1"), p.get_float("beta2"),
                p.get_float("eps"), p.get_int("step"), p.get_bool("bias_correction"));
}

// One launch per tensor of the layout, each at its offset in the concatenation.
template <class F>
void per_tensor(const Args& a, F&& launch_one) {
  std::int64_t offset = 0;
  for (const std::int64_t n : a.sizes) {
    HARNESS_CUDA(launch_one(offset, static_cast<std::size_t>(n)));
    offset += n;
  }
}

void launch_sgd(harness::LaunchContext& ctx) {
  const Args a(ctx);
  const auto lr = static_cast<float>(ctx.param_float("lr"));
  per_tensor(a, [&](std::int64_t o, std::size_t n) { return opt::sgd(a.w + o, a.g + o, n, lr, ctx.stream); });
}

void launch_adam(harness::LaunchContext& ctx) {
  const Args a(ctx);
  const auto c = config(*ctx.params);
  per_tensor(a, [&](std::int64_t o, std::size_t n) { return opt::adam(a.w + o, a.g + o, a.m + o, a.v + o, n, c, ctx.stream); });
}

void launch_adam_vectorized(harness::LaunchContext& ctx) {
  const Args a(ctx);
  const auto c = config(*ctx.params);
  per_tensor(a, [&](std::int64_t o, std::size_t n) {
    return opt::adam_vectorized(a.w + o, a.g + o, a.m + o, a.v + o, n, c, ctx.stream);
  });
}

// The descriptor table is built on the host and uploaded (a few KiB) in every run, inside
// the timed interval: the cost a training step pays when it does not cache the table.
std::size_t fused_workspace(const harness::Params& p) { return sizeof(opt::TensorDesc) * tensor_sizes(p).size(); }

void launch_adam_fused(harness::LaunchContext& ctx) {
  const Args a(ctx);
  std::int64_t chunks = 0;
  const auto descs = opt::fused_descriptors(a.sizes, a.w, a.g, a.m, a.v, chunks);
  const std::size_t bytes = sizeof(opt::TensorDesc) * descs.size();
  auto* table = static_cast<opt::TensorDesc*>(ctx.workspace->get(0, bytes));
  // From pageable memory: returns once the table is staged, so `descs` may go.
  HARNESS_CUDA(cudaMemcpyAsync(table, descs.data(), bytes, cudaMemcpyHostToDevice, ctx.stream));
  HARNESS_CUDA(opt::adam_fused(table, static_cast<int>(descs.size()), chunks, config(*ctx.params), ctx.stream));
}

std::optional<std::string> only_sgd(const harness::Params& p) {
  if (is_adam(p)) return std::string("an SGD kernel (update: sgd only)");
  return std::nullopt;
}
std::optional<std::string> only_adam(const harness::Params& p) {
  if (!is_adam(p)) return std::string("an Adam kernel (update: adam only)");
  return std::nullopt;
}

}  // namespace

HARNESS_REGISTER_PROBLEM(OptimizerProblem);
HARNESS_REGISTER_VARIANT(optimizer, cpu, cpu, "double-precision update, rounded once (the reference)", launch_cpu);
HARNESS_REGISTER_VARIANT_IF(optimizer, sgd, cuda, "w -= lr g, a thread per element, one launch per tensor", launch_sgd,
                            only_sgd);
HARNESS_REGISTER_VARIANT_IF(optimizer, adam, cuda, "the slides' Adam, a thread per element, one launch per tensor",
                            launch_adam, only_adam);
HARNESS_REGISTER_VARIANT_IF(optimizer, adam_vectorized, cuda, "float4 with scalar head and tail, one launch per tensor",
                            launch_adam_vectorized, only_adam);
HARNESS_REGISTER_VARIANT_FULL(optimizer, adam_fused, cuda, "every tensor in one launch (device descriptor table)",
                              launch_adam_fused, only_adam, fused_workspace);
