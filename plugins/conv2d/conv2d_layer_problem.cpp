// The `conv2d_layer` problem: the multi-channel convolution a CNN layer computes,
// x (N, C, H, W) * w (K, C, S, S) -> y (N, K, H, W), f32, S = 2 radius + 1, stride 1, zero
// padding r on every side (same size), cross-correlation (as cuDNN's CUDNN_CROSS_CORRELATION):
//   y[n][k][i][j] = sum_{c,a,b} w[k][c][a][b] x[n][c][i + a - r][j + b - r]
// Variants: naive, our tiled direct kernel, cuDNN, the double CPU reference. Inputs uniform
// in [-1, 1].
#include <fmt/format.h>

#include <optional>
#include <string>

#include "conv2d/conv2d.hpp"
#include "conv2d_cudnn_variant.hpp"
#include "conv2d_rules.hpp"
#include "harness/cuda_check.hpp"
#include "harness/registry.hpp"

namespace {

using harness::DType;
namespace rules = plugins::conv2d;
namespace kc = kernels::conv2d;

kc::LayerShape shape_of(const harness::Params& p) {
  return {static_cast<int>(p.get_int("N")), static_cast<int>(p.get_int("C")), static_cast<int>(p.get_int("H")),
          static_cast<int>(p.get_int("W")), static_cast<int>(p.get_int("K")), static_cast<int>(p.get_int("radius"))};
}

class Conv2dLayerProblem final : public harness::Problem {
 public:
  std::string name() const override { return "conv2d_layer"; }
  std::string description() const override {
    return "multi-channel 2D convolution (a CNN layer): x (N, C, H, W) * w (K, C, 2r+1, 2r+1) -> y (N, K, H, W), "
           "f32, stride 1, zero padding r";
  }
  std::vector<harness::ParamSpec> params() const override {
    return {harness::int_param("N", 8, 1, 4096, "images in the batch"),
            harness::int_param("C", 64, 1, 4096, "input channels"),
            harness::int_param("H", 56, 1, rules::kMaxSide, "image rows"),
            harness::int_param("W", 56, 1, rules::kMaxSide, "image columns"),
            harness::int_param("K", 64, 1, 4096, "output channels (filters)"),
            harness::int_param("radius", 1, 1, kc::kMaxRadius, "filter radius r: filters are (2r+1) x (2r+1)"),
            harness::enum_param("cudnn_algo", "summation", {"summation", "any"},
                                "cudnn variant: summation-order algorithms only (GEMM/DIRECT kinds) or any "
                                "(FFT, Winograd too; 16x tolerance)")};
  }
  std::optional<std::string> reject(const harness::Params& p) const override {
    const std::int64_t n = p.get_int("N"), c = p.get_int("C"), h = p.get_int("H"), w = p.get_int("W"),
                       k = p.get_int("K"), s = 2 * p.get_int("radius") + 1;
    const double hw = static_cast<double>(h) * static_cast<double>(w), lim = static_cast<double>(rules::kMaxElements);
    if (static_cast<double>(n) * static_cast<double>(c) * hw > lim)
      return fmt::format("N * C * H * W = {} is more than 2^30 elements (the kernels index with int)",
                         static_cast<double>(n) * static_cast<double>(c) * hw);
    if (static_cast<double>(n) * static_cast<double>(k) * hw > lim)
      return fmt::format("N * K * H * W = {} is more than 2^30 elements (the kernels index with int)",
                         static_cast<double>(n) * static_cast<double>(k) * hw);
    if (k * c * s * s > rules::kMaxElements)
      return fmt::format("K * C * S^2 = {} is more than 2^30 elements", k * c * s * s);
    return std::nullopt;
  }
  std::vector<harness::OperandSpec> operands(const harness::Params& p) const override {
    const kc::LayerShape s = shape_of(p);
    const std::int64_t side = 2 * s.r + 1;
    return {harness::input("x", DType::f32, {s.n, s.c, s.h, s.w}, harness::uniform(-1, 1)),
            harness::input("w", DType::f32, {s.k, s.c, side, side}, harness::uniform(-1, 1)),
            harness::output("y", DType::f32, {s.n, s.k, s.h, s.w})};
  }
  // FLOPs: C S^2 multiply-adds per output element. Minimal bytes: x and w read once, y
  // written once.
  harness::Work work(const harness::Params& p) const override {
    const kc::LayerShape s = shape_of(p);
    const double hw = static_cast<double>(s.h) * static_cast<double>(s.w), prod = rules::products(s.c, s.r);
    const double outputs = static_cast<double>(s.n) * static_cast<double>(s.k) * hw;
    return {2.0 * prod * outputs, 4.0 * (static_cast<double>(s.n) * static_cast<double>(s.c) * hw + outputs +
                                         static_cast<double>(s.k) * prod)};
  }
  harness::Tolerance tolerance(const harness::Params& p) const override {
    return rules::tolerance_for(rules::products(p.get_int("C"), p.get_int("radius")),
                                p.get_string("cudnn_algo") == "any");
  }
  std::string tolerance_rule() const override { return rules::kToleranceRule; }
  std::string reference_variant(const harness::Params&) const override { return "cpu"; }
};

struct Args {
  kc::LayerShape s;
  const float *x, *w;
  float* y;
  explicit Args(const harness::LaunchContext& ctx)
      : s(shape_of(*ctx.params)), x(ctx.in<float>("x")), w(ctx.in<float>("w")), y(ctx.out<float>("y")) {}
};

void launch_cpu(harness::LaunchContext& ctx) {
  const Args a(ctx);
  kc::layer_cpu(a.s, a.x, a.w, a.y);
}

void launch_naive(harness::LaunchContext& ctx) {
  const Args a(ctx);
  HARNESS_CUDA(kc::layer_naive(a.s, a.x, a.w, a.y, ctx.stream));
}

std::size_t tiled_workspace(const harness::Params& p) { return kc::layer_tiled_scratch(shape_of(p)); }

void launch_tiled(harness::LaunchContext& ctx) {
  const Args a(ctx);
  auto* scratch = static_cast<float*>(ctx.workspace->get(0, kc::layer_tiled_scratch(a.s)));
  HARNESS_CUDA(kc::layer_tiled(a.s, a.x, a.w, a.y, scratch, ctx.stream));
}

void launch_cudnn(harness::LaunchContext& ctx) {
  const Args a(ctx);
  rules::cudnn_launch(ctx, a.s, a.x, a.w, a.y, "conv2d_layer/cudnn");
}

std::size_t cudnn_workspace(const harness::Params& p) { return rules::cudnn_workspace(shape_of(p), p); }

}  // namespace

HARNESS_REGISTER_PROBLEM(Conv2dLayerProblem);
HARNESS_REGISTER_VARIANT(conv2d_layer, cpu, cpu, "double accumulation, rounded once (the reference)", launch_cpu);
HARNESS_REGISTER_VARIANT(conv2d_layer, naive, cuda, "a thread per output element, everything from global memory",
                         launch_naive);
HARNESS_REGISTER_VARIANT_FULL(conv2d_layer, tiled, cuda,
                              "8x16 pixels x 32 filters per block, input tile + filters in shared memory, "
                              "4 px x 8 filters per thread in registers",
                              launch_tiled, nullptr, tiled_workspace);
HARNESS_REGISTER_VARIANT_FULL(conv2d_layer, cudnn, cuda,
                              "cudnnConvolutionForward, FP32 FMA math, algorithm by cudnnFind (printed to stderr "
                              "once per shape)",
                              launch_cudnn, plugins::conv2d::cudnn_constraint, cudnn_workspace);
