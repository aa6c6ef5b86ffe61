// The shape-dispatching variants of the gemm problem (kernels/gemm/gemm_auto.hpp):
//   auto    f32: picks gemv / outer / splitk / a tile size by (M, N, K, SM count);
//           bf16, f16: the 16-bit GEMV where M or N is 1 and the matrix operand is K
//           contiguous (gemm_gemv16.hpp), the skinny kernel where layout nt has M <= 8 (16
//           while N <= 8192) or N <= 32 (gemm_skinny16.hpp, Hopper: gemm_skinny16_preferred);
//           tf32, bf16, f16, fp8_e4m3: else `wgmma` where it
//           takes the shape and device, else `mma` (gemm_tc_variants.hpp), the reason recorded
//   splitk  deterministic split-K, auto's cheapest split (any shape)
//   gemv    the GEMV kernels (M == 1 or N == 1 only; f32 every layout, bf16/f16 with the
//           matrix operand K contiguous)
//   skinny  bf16/f16, layout nt, min(M, N) <= 64 on Hopper (gemm_skinny16.hpp)
// Each records its choice as the result's config ("splitk tile=64x64 splits=31"), so a
// report says which kernel ran; the workspace (split-K panels) comes from the harness.
// Every layout (nn, nt, tn, tt): the kernels read transposed operands in place.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/format.h>

#include "gemm/gemm_auto.hpp"
#include "gemm/gemm_gemv16.hpp"
#include "gemm/gemm_skinny16.hpp"
#include "gemm_fp8.hpp"
#include "gemm_params.hpp"
#include "gemm_tc_variants.hpp"
#include "harness/cuda_check.hpp"
#include "harness/registry.hpp"

namespace {

namespace kg = kernels::gemm;

using ChooseFn = kg::AutoChoice (*)(kg::Layout, int, int, int, int);

struct Dims {
  int M, N, K;
  kg::Layout layout;
  explicit Dims(const harness::Params& p)
      : M(static_cast<int>(p.get_int("M"))), N(static_cast<int>(p.get_int("N"))), K(static_cast<int>(p.get_int("K"))),
        layout(plugins::gemm::layout_param(p)) {}
};

// These kernels are FP32 (every layout): when the problem has a dtype parameter, other
// values skip.
std::optional<std::string> fp32_only(const harness::Params& p) {
  if (p.has("dtype") && p.get_string("dtype") != "f32")
    return fmt::format("FP32 kernel: dtype {} is not f32", p.get_string("dtype"));
  return std::nullopt;
}

bool is_16bit(const harness::Params& p) {
  const kg::TcDType t = plugins::gemm::dtype_param(p);
  return t == kg::TcDType::bf16 || t == kg::TcDType::f16;
}

std::optional<std::string> gemv_constraint(const harness::Params& p) {
  const Dims d(p);
  if (is_16bit(p)) {
    const char* why = kg::gemm_gemv16_unsupported(d.layout, d.M, d.N);
    if (why == nullptr || kg::gemm_gemv16_multi_unsupported(d.layout, d.M, d.N, d.K) == nullptr) return std::nullopt;
    return std::string(why);
  }
  if (d.M != 1 && d.N != 1) return fmt::format("gemv: needs M == 1 or N == 1 (M={} N={})", d.M, d.N);
  if (p.has("dtype") && p.get_string("dtype") != "f32")
    return fmt::format("gemv: f32, bf16 or f16 (dtype {})", p.get_string("dtype"));
  return std::nullopt;
}

// The 16-bit GEMV (gemm_gemv16.hpp) takes this case: bf16/f16, M or N 1, the matrix operand
// K contiguous. No workspace.
bool takes_gemv16(const harness::Params& p) {
  const Dims d(p);
  return is_16bit(p) && kg::gemm_gemv16_unsupported(d.layout, d.M, d.N) == nullptr;
}

// A 16-bit (bf16 or f16) case's operands, scalars and dtype, as the 16-bit kernels take them.
struct Args16 {
  kg::TcDType dtype;
  const void *A, *B;
  void* C;
  float alpha, beta;
  explicit Args16(harness::LaunchContext& ctx) : dtype(plugins::gemm::dtype_param(*ctx.params)) {
    const bool bf16 = dtype == kg::TcDType::bf16;
    A = bf16 ? static_cast<const void*>(ctx.in<__nv_bfloat16>("A")) : ctx.in<__half>("A");
    B = bf16 ? static_cast<const void*>(ctx.in<__nv_bfloat16>("B")) : ctx.in<__half>("B");
    C = bf16 ? static_cast<void*>(ctx.out<__nv_bfloat16>("C")) : ctx.out<__half>("C");
    alpha = static_cast<float>(ctx.param_float("alpha"));
    beta = static_cast<float>(ctx.param_float("beta"));
  }
};

void launch_gemv16(harness::LaunchContext& ctx) {
  const Dims d(*ctx.params);
  const Args16 a(ctx);
  if (kg::gemm_gemv16_unsupported(d.layout, d.M, d.N) == nullptr)
    HARNESS_CUDA(kg::gemm_gemv16(a.dtype, d.layout, d.M, d.N, d.K, a.alpha, a.A, a.B, a.beta, a.C, ctx.stream));
  else
    HARNESS_CUDA(kg::gemm_gemv16_multi(a.dtype, d.layout, d.M, d.N, d.K, a.alpha, a.A, a.B, a.beta, a.C, ctx.stream));
}

constexpr const char* kGemv16Config = "gemv (16-bit: a warp per output element, K-contiguous rows)";
constexpr const char* kGemv16MultiConfig = "gemv (16-bit: 4 matrix rows a warp against up to 8 K-contiguous vectors)";

std::string gemv16_config(const harness::Params& p) {
  const Dims d(p);
  return kg::gemm_gemv16_unsupported(d.layout, d.M, d.N) == nullptr ? kGemv16Config : kGemv16MultiConfig;
}

// The skinny kernel (gemm_skinny16.hpp): bf16/f16, layout nt, a small side of <= 64 rows,
// Hopper. No workspace. Without a device: the shape rule only.
std::optional<std::string> skinny_constraint(const harness::Params& p) {
  if (!is_16bit(p))
    return fmt::format("skinny: bf16 or f16 (dtype {})", p.has("dtype") ? p.get_string("dtype") : "f32");
  const Dims d(p);
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    device = -1;
  }
  if (const char* why = kg::gemm_skinny16_unsupported(device, d.layout, d.M, d.N, d.K)) return std::string(why);
  return std::nullopt;
}

void launch_skinny16(harness::LaunchContext& ctx) {
  const Dims d(*ctx.params);
  const Args16 a(ctx);
  HARNESS_CUDA(kg::gemm_skinny16(a.dtype, d.layout, d.M, d.N, d.K, a.alpha, a.A, a.B, a.beta, a.C, ctx.stream));
}

std::string skinny_config(const harness::Params& p) {
  const Dims d(p);
  const int sms = kg::current_sm_count();
  return sms > 0 ? kg::gemm_skinny16_plan(d.M, d.N, d.K, sms) : std::string();
}

// auto runs the skinny kernel where it was measured faster than the wgmma tiles
// (kg::gemm_skinny16_preferred) and it takes the shape and device.
bool takes_skinny16(const harness::Params& p) {
  const Dims d(p);
  return is_16bit(p) && kg::gemm_skinny16_preferred(d.M, d.N) && !skinny_constraint(p);
}

kg::AutoChoice choice_at(ChooseFn choose, const harness::Params& p) {
  const Dims d(p);
  return choose(d.layout, d.M, d.N, d.K, kg::current_sm_count());
}

void launch_with(ChooseFn choose, harness::LaunchContext& ctx) {
  const Dims d(*ctx.params);
  const kg::AutoChoice c = choose(d.layout, d.M, d.N, d.K, kg::current_sm_count());
  const std::size_t bytes = kg::auto_workspace_bytes(c, d.M, d.N, d.K);
  void* workspace = bytes > 0 ? ctx.workspace->get(0, bytes) : nullptr;
  HARNESS_CUDA(kg::gemm_auto(c, d.M, d.N, d.K, static_cast<float>(ctx.param_float("alpha")), ctx.in<float>("A"),
                             ctx.in<float>("B"), static_cast<float>(ctx.param_float("beta")), ctx.out<float>("C"),
                             workspace, bytes, ctx.stream));
}

std::size_t workspace_with(ChooseFn choose, const harness::Params& p) {
  const Dims d(p);
  return kg::auto_workspace_bytes(choice_at(choose, p), d.M, d.N, d.K);
}

// Without a device the choice would be made for a guessed SM count: say nothing then.
std::string config_with(ChooseFn choose, const harness::Params& p) {
  return kg::current_sm_count() > 0 ? kg::describe(choice_at(choose, p)) : std::string();
}

// auto in the reduced-precision dtypes: wgmma (Hopper: persistent, TMA, split-K for few output
// tiles) where its constraint passes, else mma (sm_80+, any shape: the unaligned path, e.g. K
// not a multiple of 8 in bf16). Both skip reasons when neither can run.
bool is_f32(const harness::Params& p) { return plugins::gemm::dtype_param(p) == kg::TcDType::f32; }

const plugins::gemm::TcVariant& tc_pick(const harness::Params& p) {
  const auto& wgmma = plugins::gemm::wgmma_variant();
  return wgmma.constraint(p) ? plugins::gemm::mma_variant() : wgmma;
}

std::optional<std::string> auto_constraint(const harness::Params& p) {
  if (is_f32(p) || takes_gemv16(p) || takes_skinny16(p)) return std::nullopt;
  const auto wgmma_why = plugins::gemm::wgmma_variant().constraint(p);
  if (!wgmma_why) return std::nullopt;
  const auto mma_why = plugins::gemm::mma_variant().constraint(p);
  if (!mma_why) return std::nullopt;
  return fmt::format("auto: {}; {}", *wgmma_why, *mma_why);
}

void launch_auto(harness::LaunchContext& ctx) {
  if (is_f32(*ctx.params)) {
    launch_with(kg::choose_auto, ctx);
    return;
  }
  if (takes_gemv16(*ctx.params)) {
    launch_gemv16(ctx);
    return;
  }
  if (takes_skinny16(*ctx.params)) {
    launch_skinny16(ctx);
    return;
  }
  tc_pick(*ctx.params).launch(ctx);
}

std::size_t auto_workspace(const harness::Params& p) {
  if (is_f32(p)) return workspace_with(kg::choose_auto, p);
  return takes_gemv16(p) || takes_skinny16(p) ? 0 : tc_pick(p).workspace(p);
}

// The kernel auto ran and, for mma, why not wgmma; nothing without a device (the choice
// would be a guess).
std::string auto_config(const harness::Params& p) {
  if (is_f32(p)) return config_with(kg::choose_auto, p);
  if (kg::current_sm_count() <= 0) return std::string();
  if (takes_gemv16(p)) return kGemv16Config;
  if (takes_skinny16(p)) return skinny_config(p);
  const auto wgmma_why = plugins::gemm::wgmma_variant().constraint(p);
  if (!wgmma_why) {  // wgmma's own config: its plan (and fp8's scales)
    const std::string plan = plugins::gemm::wgmma_variant().config(p);
    return plan.empty() ? std::string("wgmma") : "wgmma: " + plan;
  }
  const std::string fp8 = plugins::gemm::fp8_config(p);
  const std::string kernel = fmt::format("mma ({})", *wgmma_why);
  return fp8.empty() ? kernel : kernel + "; " + fp8;
}

void add(const char* name, const char* description, ChooseFn choose, harness::ConstraintFn constraint) {
  harness::Registry::instance().add_variant(
      harness::make_variant("gemm", name, harness::Backend::cuda,
                            [choose](harness::LaunchContext& ctx) { launch_with(choose, ctx); })
          .description(description)
          .constraint(std::move(constraint))
          .workspace([choose](const harness::Params& p) { return workspace_with(choose, p); })
          .config([choose](const harness::Params& p) { return config_with(choose, p); }));
}

const bool kRegistered = [] {
  harness::Registry::instance().add_variant(
      harness::make_variant("gemm", "auto", harness::Backend::cuda, launch_auto)
          .description("f32 by shape: GEMV (M or N = 1), rank-1 (K = 1), else the coarsened tile (128x128, "
                       "128x64, 64x64, 32x64) and deterministic split-K count (K >= 256) of least modelled time "
                       "on this GPU's SMs; bf16/f16: the 16-bit GEMV where M or N = 1 and the matrix operand is K "
                       "contiguous, the skinny kernel (Hopper) where layout nt has M <= 8 (16 while N <= 8192) or N <= 32; tf32/bf16/f16/fp8_e4m3: else wgmma where it takes the shape and device, "
                       "else mma (any shape, sm_80+); the choice and its reason in the result's config")
          .constraint(auto_constraint)
          .workspace(auto_workspace)
          .config(auto_config));
  add("splitk",
      "deterministic split-K (auto's model, >= 2 slices): coarsened-tile partials per K slice into a workspace, "
      "then a reduce",
      kg::choose_splitk, fp32_only);
  harness::Registry::instance().add_variant(
      harness::make_variant("gemm", "gemv", harness::Backend::cuda,
                            [](harness::LaunchContext& ctx) {
                              if (is_16bit(*ctx.params))
                                launch_gemv16(ctx);
                              else
                                launch_with(kg::choose_gemv, ctx);
                            })
          .description("GEMV (M = 1 or N = 1): warp per row of a K-contiguous matrix operand (A 'n' for N = 1, "
                       "B 't' for M = 1), else (f32 only) 128-column blocks over K slices; f32, bf16, f16 (f32 sums); "
                       "bf16/f16 layout nt also M or N <= 8 (4 matrix rows a warp against every vector)")
          .constraint(gemv_constraint)
          .workspace([](const harness::Params& p) { return is_16bit(p) ? 0 : workspace_with(kg::choose_gemv, p); })
          .config([](const harness::Params& p) {
            return is_16bit(p) ? gemv16_config(p) : config_with(kg::choose_gemv, p);
          }));
  harness::Registry::instance().add_variant(
      harness::make_variant("gemm", "skinny", harness::Backend::cuda, launch_skinny16)
          .description("bf16/f16, layout nt, min(M, N) <= 64 (Hopper): mma.sync m16n8k16 with the big operand "
                       "streamed from global memory straight into fragments (128 rows a CTA, 16 a warp) and the "
                       "small side as n (its K slice in shared memory where it fits), K split over a thread-block "
                       "cluster of up to 8 CTAs whose partial sums meet in distributed shared memory")
          .constraint(skinny_constraint)
          .workspace([](const harness::Params&) { return std::size_t{0}; })
          .config(skinny_config));
  return true;
}();

}  // namespace
