// The `softmax` problem: row-wise softmax of x (rows, cols) into y (rows, cols), f32 or
// bf16 (`dtype`; bf16: f32 statistics inside, bf16 in and out), the ladder of
// kernels/softmax/ as variants (the first five rungs f32 only; register_row and cudnn
// both dtypes), cuDNN as the vendor reference, a double CPU reference. Inputs (`inputs`):
//   uniform  x in [-8, 8)
//   huge     a quarter of the elements (chosen at random) are 1e38, the rest in [-8, 8):
//            any softmax that exponentiates before subtracting the max overflows; the
//            right answer is 1/k on a row's k copies of 1e38 and 0 elsewhere
//   neg_inf  rows r % 3 == 0 are all -inf (defined result: NaN, as in PyTorch), rows
//            r % 3 == 1 have -inf at every even column (those outputs are 0), the rest
//            are uniform
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "harness/cuda_check.hpp"
#include "harness/error.hpp"
#include "harness/random.hpp"
#include "harness/registry.hpp"
#include "softmax/softmax.hpp"
#include "softmax/softmax_cudnn.hpp"

namespace {

using harness::DType;

bool is_bf16(const harness::Params& p) { return p.get_string("dtype") == "bf16"; }

harness::Fill input_fill(const std::string& kind, std::int64_t cols, bool bf16) {
  if (kind == "uniform") return harness::uniform(-8, 8);
  return harness::custom_fill([kind, cols, bf16](std::span<std::byte> bytes, std::uint64_t seed) {
    const std::size_t count = bytes.size() / (bf16 ? sizeof(__nv_bfloat16) : sizeof(float));
    std::vector<float> x(count), coin(count);
    harness::fill_uniform(x, seed, 1, -8.0f, 8.0f);
    harness::fill_uniform(coin, seed, 101, 0.0f, 1.0f);
    const float inf = std::numeric_limits<float>::infinity();
    for (std::size_t i = 0; i < x.size(); ++i) {
      const auto r = static_cast<std::int64_t>(i) / cols, c = static_cast<std::int64_t>(i) % cols;
      if (kind == "huge") {
        if (coin[i] < 0.25f) x[i] = 1e38f;  // bf16: 9.97e37 (bf16 reaches 3.39e38)
      } else if (r % 3 == 0 || (r % 3 == 1 && c % 2 == 0)) {
        x[i] = -inf;
      }
    }
    if (!bf16) {
      std::memcpy(bytes.data(), x.data(), bytes.size());
      return;
    }
    std::vector<__nv_bfloat16> h(count);
    for (std::size_t i = 0; i < count; ++i) h[i] = __float2bfloat16_rn(x[i]);
    std::memcpy(bytes.data(), h.data(), bytes.size());
  });
}

class SoftmaxProblem final : public harness::Problem {
 public:
  std::string name() const override { return "softmax"; }
  std::string description() const override { return "row-wise softmax of a (rows, cols) f32 or bf16 matrix"; }
  std::vector<harness::ParamSpec> params() const override {
    return {harness::int_param("rows", 1300, 1, std::int64_t{1} << 24, "rows (independent softmaxes)"),
            harness::int_param("cols", 6880, 1, std::int64_t{1} << 16, "row length"),
            harness::enum_param("inputs", "uniform", {"uniform", "huge", "neg_inf"},
                                "uniform [-8, 8); huge: 1e38 at random places; neg_inf: rows of -inf (NaN out)"),
            harness::enum_param("dtype", "f32", {"f32", "bf16"},
                                "element type of x and y (bf16: f32 statistics inside)")};
  }
  std::optional<std::string> reject(const harness::Params& p) const override {
    if (p.get_int("rows") * p.get_int("cols") > (std::int64_t{1} << 32))
      return fmt::format("rows * cols = {} is more than 2^32 elements", p.get_int("rows") * p.get_int("cols"));
    return std::nullopt;
  }
  std::vector<harness::OperandSpec> operands(const harness::Params& p) const override {
    const std::int64_t rows = p.get_int("rows"), cols = p.get_int("cols");
    const DType dt = is_bf16(p) ? DType::bf16 : DType::f32;
    return {harness::input("x", dt, {rows, cols}, input_fill(p.get_string("inputs"), cols, is_bf16(p))),
            harness::output("y", dt, {rows, cols})};
  }
  // Per element: max, subtract, exp, add, divide (exp counted as one operation, once);
  // x read once and y written once: 8 bytes (f32) or 4 (bf16).
  harness::Work work(const harness::Params& p) const override {
    const double n = static_cast<double>(p.get_int("rows")) * static_cast<double>(p.get_int("cols"));
    return {5 * n, (is_bf16(p) ? 4 : 8) * n};
  }
  // y = exp(x - m) / s in f32 against the same in double: the sum of cols exponentials in
  // f32 (sequential in naive: <= cols u relative, trees do better), the rounding of x - m
  // amplified by |x - m| <= 104 wherever exp(x - m) does not underflow, and the ulps of
  // expf and of the division: rel (cols + 128) u. Outputs below 2^-126 (subnormal) are
  // compared absolutely. An all -inf row is NaN in both.
  // bf16 (same bf16 input on both sides, exact in f32 and double): the variant's f32
  // value is within (cols + 128) u of the exact one, then both sides round once to bf16
  // (the reference from double), which can split them by one bf16 ulp: 2 u_bf16 = 2^-7
  // relative more. Outputs below 2^-126 (bf16 has f32's exponent range) absolutely.
  harness::Tolerance tolerance(const harness::Params& p) const override {
    const double u = harness::unit_roundoff(DType::f32);
    const double rel = (static_cast<double>(p.get_int("cols")) + 128) * u;
    return {std::ldexp(1.0, -126), is_bf16(p) ? rel + 2 * harness::unit_roundoff(DType::bf16) : rel};
  }
  std::string tolerance_rule() const override {
    return "rel = (cols + 128) 2^-24 (f32 sum of cols exps, rounding of x - max times |x - max| <= 104, expf and "
           "division ulps), + 2^-7 for bf16 (one bf16 ulp: both sides round once), abs = 2^-126 (subnormal "
           "outputs); all -inf rows must be NaN";
  }
  std::string reference_variant(const harness::Params&) const override { return "cpu"; }
};

struct Args {
  std::int64_t rows, cols;
  const float* x;
  float* y;
  explicit Args(const harness::LaunchContext& ctx)
      : rows(ctx.param_int("rows")), cols(ctx.param_int("cols")), x(ctx.in<float>("x")), y(ctx.out<float>("y")) {}
};

void launch_cpu(harness::LaunchContext& ctx) {
  if (is_bf16(*ctx.params)) {
    kernels::softmax::cpu_bf16(ctx.param_int("rows"), ctx.param_int("cols"), ctx.in<__nv_bfloat16>("x"),
                               ctx.out<__nv_bfloat16>("y"));
    return;
  }
  const Args a(ctx);
  kernels::softmax::cpu(a.rows, a.cols, a.x, a.y);
}

// The notes' rungs are f32 kernels.
std::optional<std::string> f32_only(const harness::Params& p) {
  if (is_bf16(p)) return std::string("f32 only (bf16: register_row, cudnn)");
  return std::nullopt;
}

std::size_t naive_workspace(const harness::Params& p) { return 2 * sizeof(float) * static_cast<std::size_t>(p.get_int("rows")); }

void launch_naive(harness::LaunchContext& ctx) {
  const Args a(ctx);
  const std::size_t bytes = sizeof(float) * static_cast<std::size_t>(a.rows);
  auto* row_max = static_cast<float*>(ctx.workspace->get(0, bytes));
  auto* row_sum = static_cast<float*>(ctx.workspace->get(1, bytes));
  HARNESS_CUDA(kernels::softmax::naive(a.rows, a.cols, a.x, a.y, row_max, row_sum, ctx.stream));
}

void launch_smem_max(harness::LaunchContext& ctx) {
  const Args a(ctx);
  HARNESS_CUDA(kernels::softmax::smem_max(a.rows, a.cols, a.x, a.y, ctx.stream));
}

void launch_online(harness::LaunchContext& ctx) {
  const Args a(ctx);
  HARNESS_CUDA(kernels::softmax::online(a.rows, a.cols, a.x, a.y, ctx.stream));
}

void launch_warp_per_row(harness::LaunchContext& ctx) {
  const Args a(ctx);
  HARNESS_CUDA(kernels::softmax::warp_per_row(a.rows, a.cols, a.x, a.y, ctx.stream));
}

void launch_block_per_row(harness::LaunchContext& ctx) {
  const Args a(ctx);
  HARNESS_CUDA(kernels::softmax::block_per_row(a.rows, a.cols, a.x, a.y, ctx.stream));
}

void launch_register_row(harness::LaunchContext& ctx) {
  if (is_bf16(*ctx.params)) {
    HARNESS_CUDA(kernels::softmax::register_row_bf16(ctx.param_int("rows"), ctx.param_int("cols"),
                                                     ctx.in<__nv_bfloat16>("x"), ctx.out<__nv_bfloat16>("y"),
                                                     ctx.stream));
    return;
  }
  const Args a(ctx);
  HARNESS_CUDA(kernels::softmax::register_row(a.rows, a.cols, a.x, a.y, ctx.stream));
}

void launch_cudnn(harness::LaunchContext& ctx) {
  const std::int64_t rows = ctx.param_int("rows"), cols = ctx.param_int("cols");
  const bool bf16 = is_bf16(*ctx.params);
  const void* x = bf16 ? static_cast<const void*>(ctx.in<__nv_bfloat16>("x")) : ctx.in<float>("x");
  void* y = bf16 ? static_cast<void*>(ctx.out<__nv_bfloat16>("y")) : ctx.out<float>("y");
  if (const std::string error = kernels::softmax::cudnn_softmax(rows, cols, x, y, bf16, ctx.stream); !error.empty()) {
    HARNESS_CUDA_LAST_ERROR();  // a CUDA error behind a cuDNN failure is the one to report
    throw harness::CudaError("softmax/cudnn: " + error, 0, false);
  }
}

std::optional<std::string> cudnn_constraint(const harness::Params&) {
  if (!kernels::softmax::have_cudnn()) return std::string("cuDNN was not found at build time");
  return std::nullopt;
}

}  // namespace

HARNESS_REGISTER_PROBLEM(SoftmaxProblem);
HARNESS_REGISTER_VARIANT(softmax, cpu, cpu, "double max, sum and exp per row, rounded once (the reference)", launch_cpu);
HARNESS_REGISTER_VARIANT_FULL(softmax, naive, cuda, "3 kernels: row max, row sum (a thread per row), normalize",
                              launch_naive, f32_only, naive_workspace);
HARNESS_REGISTER_VARIANT_IF(softmax, smem_max, cuda,
                            "the slides' shared-memory max (and sum) trees, 32 threads per row", launch_smem_max,
                            f32_only);
HARNESS_REGISTER_VARIANT_IF(softmax, online, cuda, "online (max, sum) in one pass, 32 threads per row, then normalize",
                            launch_online, f32_only);
HARNESS_REGISTER_VARIANT_IF(softmax, warp_per_row, cuda, "a warp per row, shuffle butterfly, float4 loads",
                            launch_warp_per_row, f32_only);
HARNESS_REGISTER_VARIANT_IF(softmax, block_per_row, cuda, "a 256-thread block per row (long rows), shuffles + shared",
                            launch_block_per_row, f32_only);
HARNESS_REGISTER_VARIANT(softmax, register_row, cuda,
                         "row read once into registers (16-byte loads), reductions, one write; f32 and bf16",
                         launch_register_row);
HARNESS_REGISTER_VARIANT_IF(softmax, cudnn, cuda, "cudnnSoftmaxForward (ACCURATE, MODE_INSTANCE)", launch_cudnn,
                            cudnn_constraint);
