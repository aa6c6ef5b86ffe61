// The `conv2d` problem: single-channel 2D convolution of an image x (H, W) f32 with a square
// mask (S, S), S = 2 radius + 1, radius 1..4, into y (H, W); zero padding at the borders
// (positions outside the image count as 0), stride 1, cross-correlation (mask not flipped):
//   y[i][j] = sum_{a,b} mask[a][b] x[i + a - r][j + b - r]
// Variants: the course notes' ladder (kernels/conv2d/conv2d.hpp), cuDNN with N = C = K = 1,
// and the double CPU reference. Inputs x and mask uniform in [-1, 1].
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

class Conv2dProblem final : public harness::Problem {
 public:
  std::string name() const override { return "conv2d"; }
  std::string description() const override {
    return "single-channel 2D convolution, f32 image (H, W) with a (2r+1)^2 mask, zero padding, stride 1";
  }
  std::vector<harness::ParamSpec> params() const override {
    return {harness::int_param("H", 4096, 1, rules::kMaxSide, "image rows"),
            harness::int_param("W", 4096, 1, rules::kMaxSide, "image columns"),
            harness::int_param("radius", 1, 1, kc::kMaxRadius, "mask radius r: the mask is (2r+1) x (2r+1)"),
            harness::enum_param("cudnn_algo", "summation", {"summation", "any"},
                                "cudnn variant: summation-order algorithms only (GEMM/DIRECT kinds) or any "
                                "(FFT, Winograd too; 16x tolerance)")};
  }
  std::optional<std::string> reject(const harness::Params& p) const override {
    const std::int64_t h = p.get_int("H"), w = p.get_int("W");
    if (h * w > rules::kMaxElements)
      return fmt::format("H * W = {} is more than 2^30 elements (the kernels index with int)", h * w);
    return std::nullopt;
  }
  std::vector<harness::OperandSpec> operands(const harness::Params& p) const override {
    const std::int64_t h = p.get_int("H"), w = p.get_int("W"), s = 2 * p.get_int("radius") + 1;
    return {harness::input("x", DType::f32, {h, w}, harness::uniform(-1, 1)),
            harness::input("mask", DType::f32, {s, s}, harness::uniform(-1, 1)),
            harness::output("y", DType::f32, {h, w})};
  }
  // FLOPs: S^2 multiply-adds per output pixel (taps outside the image counted too: the
  // kernels' work is the same). Minimal bytes: x read once, y written once, the mask read once.
  harness::Work work(const harness::Params& p) const override {
    const double hw = static_cast<double>(p.get_int("H")) * static_cast<double>(p.get_int("W"));
    const double taps = rules::products(1, p.get_int("radius"));
    return {2.0 * taps * hw, 4.0 * (2.0 * hw + taps)};
  }
  harness::Tolerance tolerance(const harness::Params& p) const override {
    return rules::tolerance_for(rules::products(1, p.get_int("radius")), p.get_string("cudnn_algo") == "any");
  }
  std::string tolerance_rule() const override { return rules::kToleranceRule; }
  std::string reference_variant(const harness::Params&) const override { return "cpu"; }
};

struct Args {
  int h, w, r;
  const float *x, *mask;
  float* y;
  explicit Args(const harness::LaunchContext& ctx)
      : h(static_cast<int>(ctx.param_int("H"))),
        w(static_cast<int>(ctx.param_int("W"))),
        r(static_cast<int>(ctx.param_int("radius"))),
        x(ctx.in<float>("x")),
        mask(ctx.in<float>("mask")),
        y(ctx.out<float>("y")) {}
};

using Launch = cudaError_t (*)(int, int, int, const float*, const float*, float*, cudaStream_t);

template <Launch kFn>
void launch(harness::LaunchContext& ctx) {
  const Args a(ctx);
  HARNESS_CUDA(kFn(a.h, a.w, a.r, a.x, a.mask, a.y, ctx.stream));
}

void launch_cpu(harness::LaunchContext& ctx) {
  const Args a(ctx);
  kc::cpu(a.h, a.w, a.r, a.x, a.mask, a.y);
}

kc::LayerShape single_shape(const harness::Params& p) {
  return {1,
          1,
          static_cast<int>(p.get_int("H")),
          static_cast<int>(p.get_int("W")),
          1,
          static_cast<int>(p.get_int("radius"))};
}

void launch_cudnn(harness::LaunchContext& ctx) {
  const Args a(ctx);
  rules::cudnn_launch(ctx, single_shape(*ctx.params), a.x, a.mask, a.y, "conv2d/cudnn");
}

std::size_t cudnn_workspace(const harness::Params& p) { return rules::cudnn_workspace(single_shape(p), p); }

}  // namespace

HARNESS_REGISTER_PROBLEM(Conv2dProblem);
HARNESS_REGISTER_VARIANT(conv2d, cpu, cpu, "double accumulation, rounded once (the reference)", launch_cpu);
HARNESS_REGISTER_VARIANT(conv2d, naive, cuda, "a thread per output, mask and input from global memory",
                         launch<kc::naive>);
HARNESS_REGISTER_VARIANT(conv2d, constant_mask, cuda, "a thread per output, mask in __constant__ memory",
                         launch<kc::constant_mask>);
HARNESS_REGISTER_VARIANT(conv2d, tiled_out, cuda,
                         "strategy 1: block 32x8 = 128x32 output tile (4x4 per thread, float4), input tile + halo in shared memory",
                         launch<kc::tiled_out>);
HARNESS_REGISTER_VARIANT(conv2d, tiled_in, cuda,
                         "strategy 2: block 32x32 = 128x32 input tile incl. halo (one float4 per thread), ring threads idle",
                         launch<kc::tiled_in>);
HARNESS_REGISTER_VARIANT(conv2d, tiled_cached_halo, cuda,
                         "strategy 3: block 32x8 = 128x32 output tile (4x4 per thread), core in shared memory, halo via L1/L2",
                         launch<kc::tiled_cached_halo>);
HARNESS_REGISTER_VARIANT_FULL(conv2d, cudnn, cuda,
                              "cudnnConvolutionForward N=C=K=1, FP32 FMA math, algorithm by cudnnFind "
                              "(printed to stderr once per shape)",
                              launch_cudnn, plugins::conv2d::cudnn_constraint, cudnn_workspace);
