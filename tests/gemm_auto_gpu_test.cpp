// `auto`, `splitk` and `gemv` (kernels/gemm/gemm_auto.hpp) on the GPU: through the registry
// as the runner runs them (workspace from the harness, the gemm problem's operands and
// tolerance, the host reference) at odd shapes, and their kernels called directly: every
// tile size plain and split, forced slice counts, misaligned pointers (scalar paths),
// alpha/beta, bit-identical reruns of split-K, and bad arguments. Label `gpu`.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "family_support.hpp"
#include "gemm/gemm.hpp"
#include "gemm/gemm_auto.hpp"
#include "gemm/gemm_gemv16.hpp"
#include "gemm/gemm_skinny16.hpp"
#include "gemm/gemm_reference.hpp"
#include "gemm_tolerance.hpp"
#include "harness/device_buffer.hpp"
#include "harness/registry.hpp"
#include "gemm_test_support.hpp"
#include "test_support.hpp"

namespace {

namespace kg = kernels::gemm;
using harness::test::have_device;

#define SKIP_WITHOUT_DEVICE() \
  if (!have_device()) GTEST_SKIP() << "no CUDA device"

struct Shape {
  int M, N, K;
  float alpha = 1.0f, beta = 0.0f;
  kg::Layout layout = kg::Layout::nn;
  const char* dtype = nullptr;  // the problem's default (f32) when null
};

std::string name_of(const Shape& s) {
  return std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K) + " alpha=" +
         std::to_string(s.alpha) + " beta=" + std::to_string(s.beta) + " layout=" + std::string(kg::to_string(s.layout));
}

Shape with_layout(Shape s, kg::Layout l) {
  s.layout = l;
  return s;
}

constexpr kg::Layout kLayouts[] = {kg::Layout::nn, kg::Layout::nt, kg::Layout::tn, kg::Layout::tt};

// ---------------------------------------------------------------------------------------
// Through the registry.

harness::Params params_of(const Shape& s) {
  harness::Params p;
  p.set("M", std::int64_t{s.M});
  p.set("N", std::int64_t{s.N});
  p.set("K", std::int64_t{s.K});
  p.set("alpha", static_cast<double>(s.alpha));
  p.set("beta", static_cast<double>(s.beta));
  p.set("layout", std::string(kg::to_string(s.layout)));
  if (s.dtype != nullptr) p.set("dtype", std::string(s.dtype));
  return harness::test::params_of(harness::test::problem_named("gemm"), p);
}

// Runs each of `variants` once against `reference` (a variant name; the problem's own choice
// when empty); returns how many ran.
int check_variants(const Shape& s, const std::vector<std::string>& variants, std::string reference = "cpu") {
  using namespace harness;
  const Params params = params_of(s);
  const Problem& problem = test::problem_named("gemm");
  if (reference.empty()) reference = problem.reference_variant(params);
  auto inst = problem.make_instance(params, 2024);
  inst->prepare(Backend::cpu);
  inst->prepare(Backend::cuda);
  Workspace ref_workspace;
  const auto want = test::run_once(*Registry::instance().find_variant("gemm", reference), *inst, params, &ref_workspace);
  int ran = 0;
  for (const auto& name : variants) {
    const Variant* v = Registry::instance().find_variant("gemm", name);
    EXPECT_NE(v, nullptr) << name;
    if (v == nullptr) continue;
    if (v->constraint && v->constraint(params)) continue;
    Workspace workspace;
    const auto got = test::run_once(*v, *inst, params, &workspace);
    const CheckResult r = compare_outputs(got, want, problem.tolerance(params));
    EXPECT_TRUE(r.passed) << name << " at " << name_of(s) << " (" << v->config(params) << "): " << r.summary();
    // The workspace it used is what it declared (the runner skips on that number).
    EXPECT_LE(workspace.peak_bytes(), v->workspace_bytes(params)) << name << " at " << name_of(s);
    ++ran;
  }
  return ran;
}

TEST(GemmAutoGpu, VariantsPassAtOddShapes) {
  SKIP_WITHOUT_DEVICE();
  const Shape shapes[] = {
      {1, 1, 1},           {1, 4097, 33},        {4097, 1, 31},       {127, 129, 4099},
      {33, 65, 70000},     {1, 4096, 4096, 1.5f, -0.5f}, {4096, 1, 4096, -1.0f, 2.0f},
      {1, 1, 70000},       {300, 200, 1, 2.0f, 0.5f},    {16, 1029, 3000},    {64, 4096, 2048},
      {2048, 64, 2048},    {1000, 1000, 1000, 0.5f, 1.5f}, {17, 33, 9, -1.5f, 0.5f},
      {1023, 1025, 999},   {128, 4096, 1024},  // auto: 128x128 split-K, scalar and float4 partials
  };
  for (const Shape& s : shapes) {
    const int ran = check_variants(s, {"auto", "splitk", "gemv"});
    EXPECT_GE(ran, 2) << name_of(s);  // auto and splitk always; gemv where M or N is 1
  }
}

// Every layout through the registry (operands stored as the layout says, read in place):
// odd shapes against the cpu reference, 4097x4095x4093 against the problem's reference
// (cuBLAS FP32 above 2^30 multiply-adds).
TEST(GemmAutoGpu, VariantsPassAtOddShapesEveryLayout) {
  SKIP_WITHOUT_DEVICE();
  const Shape shapes[] = {{1, 1, 1},       {1, 4097, 33},     {4097, 1, 31},   {127, 129, 4099},
                          {1, 130, 5000, 2.0f, -1.0f}, {3, 1, 5000, 1.0f, 0.5f}, {300, 200, 1, 2.0f, 0.5f},
                          {16, 1029, 3000}, {17, 33, 9, -1.5f, 0.5f}, {256, 512, 128, 1.0f, 1.0f},
                          {253, 129, 2337, 1.0f, 0.5f}};  // auto: 128x128 split-K (33 slices)
  for (kg::Layout l : kLayouts) {
    for (const Shape& s : shapes) EXPECT_GE(check_variants(with_layout(s, l), {"auto", "splitk", "gemv"}), 2);
    EXPECT_EQ(check_variants(with_layout({4097, 4095, 4093}, l), {"auto"}, ""), 1);
  }
}

TEST(GemmAutoGpu, ConfigNamesTheChoiceOnThisGpu) {
  SKIP_WITHOUT_DEVICE();
  const harness::Variant* v = harness::Registry::instance().find_variant("gemm", "auto");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->config(params_of({127, 129, 4099})),
            kg::describe(kg::choose_auto(127, 129, 4099, kg::current_sm_count())));
  EXPECT_EQ(v->config(params_of({127, 129, 4099})).rfind("splitk tile=64x64 splits=", 0), 0u);
  EXPECT_EQ(v->config(params_of({4096, 1, 4096})), "gemv");
}

// ---------------------------------------------------------------------------------------
// The kernels directly.

using harness::test::DeviceFloats;
using harness::test::random_floats;

struct Inputs {
  std::vector<float> A, B, C;
};

Inputs inputs(const Shape& s) {
  const std::size_t mn = static_cast<std::size_t>(s.M) * s.N;
  Inputs in{random_floats(static_cast<std::size_t>(s.M) * s.K, 1), random_floats(static_cast<std::size_t>(s.K) * s.N, 2),
            random_floats(mn, 3)};
  if (s.beta == 0.0f) in.C.assign(mn, std::numeric_limits<float>::quiet_NaN());  // must not be read
  return in;
}

std::vector<float> reference(const Shape& s, const Inputs& in) {
  auto c = in.C;
  kg::gemm_cpu_ex(kg::TcDType::f32, s.layout, s.M, s.N, s.K, s.alpha, in.A.data(), in.B.data(), s.beta, c.data());
  return c;
}

// (A, B, C, workspace, stream) -> status
using Launch = std::function<cudaError_t(const Shape&, const float*, const float*, float*, void*, std::size_t)>;

std::vector<float> run(const Launch& launch, const Shape& s, const Inputs& in, std::size_t misalign,
                       std::size_t workspace_bytes) {
  DeviceFloats a(in.A.size(), misalign), b(in.B.size(), misalign), c(in.C.size(), misalign);
  a.upload(in.A);
  b.upload(in.B);
  c.upload(in.C);
  void* ws = nullptr;
  if (workspace_bytes > 0) {
    EXPECT_EQ(cudaMalloc(&ws, workspace_bytes), cudaSuccess);
  }
  EXPECT_EQ(launch(s, a.get(), b.get(), c.get(), ws, workspace_bytes), cudaSuccess) << name_of(s);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << name_of(s);
  cudaFree(ws);
  return c.download(in.C.size());
}

std::string mismatches(const std::vector<float>& got, const std::vector<float>& want, const Shape& s) {
  const auto tol = plugins::gemm::tolerance_for(s.K, s.alpha, s.beta);
  std::size_t bad = 0;
  std::string first;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double err = std::abs(static_cast<double>(got[i]) - want[i]);
    if (!(err <= tol.abs + tol.rel * std::abs(want[i]))) {
      if (bad++ == 0)
        first = " first C(" + std::to_string(i / s.N) + "," + std::to_string(i % s.N) + ") got " + std::to_string(got[i]) +
                " want " + std::to_string(want[i]);
    }
  }
  return bad == 0 ? std::string() : std::to_string(bad) + " of " + std::to_string(want.size()) + " wrong;" + first;
}

void expect_matches(const std::string& what, const Launch& launch, const Shape& s, std::size_t workspace_bytes) {
  const Inputs in = inputs(s);
  const auto want = reference(s, in);
  for (std::size_t misalign : {0, 1})
    EXPECT_EQ(mismatches(run(launch, s, in, misalign, workspace_bytes), want, s), "")
        << what << " at " << name_of(s) << (misalign ? " (misaligned)" : "");
}

const kg::Tile kTiles[] = {kg::Tile::t128x128, kg::Tile::t128x64, kg::Tile::t64x64, kg::Tile::t32x64};

TEST(GemmAutoGpu, EveryTilePlainAndSplit) {
  SKIP_WITHOUT_DEVICE();
  // {132, 68, 72}: every stored leading dimension a multiple of 4 in every layout (the 16-byte
  // path, cp.async for the rows-contiguous operands) with partial tiles.
  const Shape shapes[] = {{1, 1, 1},      {33, 65, 70},    {129, 130, 1027, -0.5f, 1.5f}, {200, 64, 600},
                          {31, 257, 2051}, {132, 68, 72, 1.0f, 0.5f}};
  for (kg::Layout l : kLayouts) {
    for (const Shape& shape : shapes) {
      const Shape s = with_layout(shape, l);
      for (kg::Tile t : kTiles) {
        expect_matches(std::string("tile ") + kg::tile_name(t),
                       [t](const Shape& x, const float* A, const float* B, float* C, void*, std::size_t) {
                         return kg::gemm_tile(x.layout, t, x.M, x.N, x.K, x.alpha, A, B, x.beta, C, nullptr);
                       },
                       s, 0);
        for (int splits : {2, 3, 7}) {
          expect_matches(std::string("splitk ") + kg::tile_name(t) + " splits=" + std::to_string(splits),
                         [t, splits](const Shape& x, const float* A, const float* B, float* C, void* ws,
                                     std::size_t bytes) {
                           return kg::gemm_splitk(x.layout, t, splits, x.M, x.N, x.K, x.alpha, A, B, x.beta, C, ws,
                                                  bytes, nullptr);
                         },
                         s, kg::splitk_workspace_bytes(s.M, s.N, s.K, splits));
        }
      }
    }
  }
}

TEST(GemmAutoGpu, GemvAndOuterAtEveryAlignment) {
  SKIP_WITHOUT_DEVICE();
  const Shape gemv_shapes[] = {{1, 1, 1}, {1, 4097, 33}, {4097, 1, 31}, {1, 130, 5000, 2.0f, -1.0f},
                               {3, 1, 5000, 1.0f, 0.5f}, {1, 1, 70000}};
  for (kg::Layout l : kLayouts) {
    for (const Shape& shape : gemv_shapes)
      for (int splits : {1, 5, 64}) {
        const Shape s = with_layout(shape, l);
        const int used = kg::gemv_uses_cols(l, s.M, s.N) ? splits : 1;
        expect_matches("gemv splits=" + std::to_string(splits),
                       [used](const Shape& x, const float* A, const float* B, float* C, void* ws, std::size_t bytes) {
                         return kg::gemm_gemv(x.layout, x.M, x.N, x.K, x.alpha, A, B, x.beta, C, used, ws, bytes,
                                              nullptr);
                       },
                       s, kg::gemv_workspace_bytes(s.M, s.N, used));
      }
    // K == 1: both operands are vectors in every layout, so outer needs no layout.
    for (const Shape& s : {Shape{1, 1, 1}, Shape{300, 201, 1, 2.0f, 0.5f}, Shape{5, 4096, 1}})
      expect_matches("outer",
                     [](const Shape& x, const float* A, const float* B, float* C, void*, std::size_t) {
                       return kg::gemm_outer(x.M, x.N, x.K, x.alpha, A, B, x.beta, C, nullptr);
                     },
                     with_layout(s, l), 0);
  }
}

// The 16-bit GEMV through the registry (`gemv`, and `auto`, which runs it there), bf16 and
// f16, against the problem's cpu reference and tolerance: M == 1 with B stored (N, K), N == 1
// with A stored (M, K), M == N == 1 in every layout; K a multiple of 8 (16-byte loads) and not
// (element by element), alpha and beta != 0 (C read), a decode shape; the multi-vector form at
// M or N <= 8 (layout nt). Every case must run.
TEST(GemmAutoGpu, Gemv16AgainstTheReference) {
  SKIP_WITHOUT_DEVICE();
  for (const char* dtype : {"bf16", "f16"}) {
    int ran = 0, cases = 0;
    auto check = [&](Shape s) {
      s.dtype = dtype;
      ran += check_variants(s, {"gemv", "auto"});
      cases += 2;
    };
    for (kg::Layout l : {kg::Layout::nt, kg::Layout::tt}) {
      check({1, 4097, 520, 1.0f, 0.0f, l});
      check({1, 37, 4099, 2.0f, 0.5f, l});  // K % 8 != 0
      check({1, 14336, 4096, 1.0f, 0.0f, l});
    }
    for (kg::Layout l : {kg::Layout::nn, kg::Layout::nt}) {
      check({4097, 1, 1000, 1.0f, 0.0f, l});
      check({300, 1, 77, -1.0f, 1.5f, l});
    }
    for (kg::Layout l : kLayouts) check({1, 1, 9, 1.0f, 0.25f, l});
    // Several vectors (layout nt, M or N <= 8): 2, 4 and 8 of them (3, 5, 7 padded), rows not a
    // multiple of a warp's 4 or a block's 16, K chunks not a multiple of two a lane, beta != 0.
    check({8, 4096, 4096, 1.0f, 0.0f, kg::Layout::nt});
    check({3, 1001, 520, 2.0f, 0.5f, kg::Layout::nt});
    check({5, 14337, 1032, 1.0f, 0.0f, kg::Layout::nt});
    check({4097, 7, 2056, -1.0f, 1.0f, kg::Layout::nt});
    check({2, 130, 8, 1.0f, 0.0f, kg::Layout::nt});
    EXPECT_EQ(ran, cases) << dtype << ": a case was skipped";
  }
}

// The 16-bit GEMV called directly: a misaligned operand (the element-by-element path) gives the
// aligned call's values within bf16 rounding; the cases it does not take and bad arguments are
// refused with cudaErrorInvalidValue.
TEST(GemmAutoGpu, Gemv16MisalignedAndRefused) {
  SKIP_WITHOUT_DEVICE();
  const int N = 999, K = 1024;
  std::vector<__nv_bfloat16> hb(static_cast<std::size_t>(N) * K + 8), ha(K + 8);
  const auto rb = random_floats(hb.size(), 5u), ra = random_floats(ha.size(), 6u);
  for (std::size_t i = 0; i < hb.size(); ++i) hb[i] = __float2bfloat16(rb[i]);
  for (std::size_t i = 0; i < ha.size(); ++i) ha[i] = __float2bfloat16(ra[i]);
  harness::DeviceBuffer<__nv_bfloat16> da(ha.size()), db(hb.size()), dc(2 * N), da1(ha.size()), db1(hb.size());
  __nv_bfloat16 *a = da.data(), *b = db.data(), *c = dc.data(), *a1 = da1.data(), *b1 = db1.data();
  da.upload(ha);
  db.upload(hb);
  ASSERT_EQ(cudaMemset(c, 0xFF, 2 * N * 2), cudaSuccess);  // NaN
  // Aligned, then the same values one element further (2-byte aligned: no 16-byte loads).
  ASSERT_EQ(kg::gemm_gemv16(kg::TcDType::bf16, kg::Layout::nt, 1, N, K, 1.0f, a, b, 0.0f, c, nullptr), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(a1 + 1, ha.data(), static_cast<std::size_t>(K) * 2, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(b1 + 1, hb.data(), static_cast<std::size_t>(N) * K * 2, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(kg::gemm_gemv16(kg::TcDType::bf16, kg::Layout::nt, 1, N, K, 1.0f, a1 + 1, b1 + 1, 0.0f, c + N, nullptr),
            cudaSuccess);
  std::vector<__nv_bfloat16> out(2 * N);
  ASSERT_EQ(cudaMemcpy(out.data(), c, out.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  for (int n = 0; n < N; ++n) {
    const float x = __bfloat162float(out[n]), y = __bfloat162float(out[N + n]);
    ASSERT_TRUE(std::isfinite(x) && std::isfinite(y)) << n;
    EXPECT_NEAR(x, y, 0.01f * std::fabs(x) + 1e-3f) << n;
  }
  const auto refused = [&](kg::TcDType t, kg::Layout l, int M, int n, const void* pa) {
    return kg::gemm_gemv16(t, l, M, n, K, 1.0f, pa, b, 0.0f, c, nullptr);
  };
  EXPECT_EQ(refused(kg::TcDType::bf16, kg::Layout::nn, 1, N, a), cudaErrorInvalidValue);   // B stored (K, N)
  EXPECT_EQ(refused(kg::TcDType::bf16, kg::Layout::tn, N, 1, a), cudaErrorInvalidValue);   // A stored (K, M)
  EXPECT_EQ(refused(kg::TcDType::bf16, kg::Layout::nt, 2, N, a), cudaErrorInvalidValue);   // not a vector shape
  EXPECT_EQ(refused(kg::TcDType::f32, kg::Layout::nt, 1, N, a), cudaErrorInvalidValue);    // not 16-bit
  EXPECT_EQ(refused(kg::TcDType::bf16, kg::Layout::nt, 1, N, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

// The skinny kernel's own refusal (not Hopper, say) as the skip reason.
#define SKIP_WITHOUT_SKINNY16()                                                                   \
  do {                                                                                            \
    int device_ = 0;                                                                              \
    ASSERT_EQ(cudaGetDevice(&device_), cudaSuccess);                                              \
    if (const char* why_ = kg::gemm_skinny16_unsupported(device_, kg::Layout::nt, 8, 4096, 4096)) \
      GTEST_SKIP() << why_;                                                                       \
  } while (0)

// The skinny 16-bit GEMM through the registry (`skinny`, and `auto`, which runs it there), bf16
// and f16, layout nt, against the problem's cpu reference and tolerance: the small side M
// (B streamed) and N (A streamed) at each padding (<= 8, 16, 32, 64 rows), big sides that are
// not multiples of the 128-row block, K not a multiple of the 32-wide step, slices whose step
// count is not a multiple of the load group, one and eight K slices, the small operand's slice
// in shared memory and (too large for it) from L1/L2, alpha and beta != 0 (C read). On Hopper
// every case must run.
TEST(GemmAutoGpu, SkinnyAgainstTheReference) {
  SKIP_WITHOUT_DEVICE();
  SKIP_WITHOUT_SKINNY16();
  for (const char* dtype : {"bf16", "f16"}) {
    int ran = 0, cases = 0;
    auto check = [&](Shape s) {
      s.dtype = dtype;
      s.layout = kg::Layout::nt;
      ran += check_variants(s, {"skinny", "auto"});
      cases += 2;
    };
    check({8, 4096, 4096});
    check({3, 1000, 520, 2.0f, 0.5f});      // K = 16 steps + 8: a partial last step
    check({13, 4097, 4104});                // 16-row padding, a ragged row block
    check({32, 14336, 4096, 1.0f, 1.0f});   // four splits, C read
    check({47, 300, 72, -1.0f, 0.0f});      // 64-row padding, one split, K = 2 steps + 8
    check({64, 257, 8192});
    check({4097, 5, 2048, 0.5f, -1.0f});    // N small: A streamed, C written row by row
    check({1000, 64, 1032});
    check({2, 130, 8});                     // K = 8: a quarter of one step
    check({5, 14336, 1000});                // 3 K slices (128 rows: 43, 43, 42 a CTA), K = 31 steps + 8
    check({64, 300, 14336});                // X slice too large for shared memory: read from L1/L2
    EXPECT_EQ(ran, cases) << dtype << ": a case was skipped";
  }
}

// The skinny kernel called directly: two runs give the same bits (partial sums added in a
// fixed order); misaligned operands, other layouts and dtypes, a small side over 64 and K % 8
// != 0 are refused with cudaErrorInvalidValue and launch nothing.
TEST(GemmAutoGpu, SkinnyDeterministicAndRefused) {
  SKIP_WITHOUT_DEVICE();
  SKIP_WITHOUT_SKINNY16();
  const int M = 24, N = 3000, K = 4096;
  std::vector<__nv_bfloat16> ha(static_cast<std::size_t>(M) * K + 8), hb(static_cast<std::size_t>(N) * K + 8);
  const auto ra = random_floats(ha.size(), 7u), rb = random_floats(hb.size(), 8u);
  for (std::size_t i = 0; i < ha.size(); ++i) ha[i] = __float2bfloat16(ra[i]);
  for (std::size_t i = 0; i < hb.size(); ++i) hb[i] = __float2bfloat16(rb[i]);
  harness::DeviceBuffer<__nv_bfloat16> da(ha.size()), db(hb.size()), dc(2 * static_cast<std::size_t>(M) * N);
  da.upload(ha);
  db.upload(hb);
  __nv_bfloat16 *a = da.data(), *b = db.data(), *c = dc.data();
  const std::size_t mn = static_cast<std::size_t>(M) * N;
  ASSERT_EQ(cudaMemset(c, 0xFF, 2 * mn * 2), cudaSuccess);  // NaN
  ASSERT_EQ(kg::gemm_skinny16(kg::TcDType::bf16, kg::Layout::nt, M, N, K, 1.0f, a, b, 0.0f, c, nullptr), cudaSuccess);
  ASSERT_EQ(kg::gemm_skinny16(kg::TcDType::bf16, kg::Layout::nt, M, N, K, 1.0f, a, b, 0.0f, c + mn, nullptr),
            cudaSuccess);
  std::vector<std::uint16_t> out(2 * mn);
  ASSERT_EQ(cudaMemcpy(out.data(), c, out.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  for (std::size_t i = 0; i < mn; ++i) {
    ASSERT_EQ(out[i], out[mn + i]) << i;
    ASSERT_NE(out[i] & 0x7F80u, 0x7F80u) << i;  // not NaN/inf: every element written
  }
  const auto call = [&](kg::TcDType t, kg::Layout l, int m, int n, int k, const void* pa) {
    return kg::gemm_skinny16(t, l, m, n, k, 1.0f, pa, b, 0.0f, c, nullptr);
  };
  EXPECT_EQ(call(kg::TcDType::bf16, kg::Layout::nt, M, N, K, a + 1), cudaErrorInvalidValue);  // 2-byte aligned
  EXPECT_EQ(call(kg::TcDType::bf16, kg::Layout::nn, M, N, K, a), cudaErrorInvalidValue);
  EXPECT_EQ(call(kg::TcDType::bf16, kg::Layout::nt, 65, N, K, a), cudaErrorInvalidValue);
  EXPECT_EQ(call(kg::TcDType::bf16, kg::Layout::nt, M, N, K - 4, a), cudaErrorInvalidValue);
  EXPECT_EQ(call(kg::TcDType::tf32, kg::Layout::nt, M, N, K, a), cudaErrorInvalidValue);
  EXPECT_EQ(call(kg::TcDType::bf16, kg::Layout::nt, M, N, K, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

TEST(GemmAutoGpu, SplitKIsBitIdenticalRunToRun) {
  SKIP_WITHOUT_DEVICE();
  const Shape s{127, 129, 4099};
  const Inputs in = inputs(s);
  const kg::AutoChoice c = kg::choose_auto(s.M, s.N, s.K, kg::current_sm_count());
  ASSERT_EQ(c.kind, kg::AutoKind::splitk);
  const Launch launch = [c](const Shape& x, const float* A, const float* B, float* C, void* ws, std::size_t bytes) {
    return kg::gemm_auto(c, x.M, x.N, x.K, x.alpha, A, B, x.beta, C, ws, bytes, nullptr);
  };
  const std::size_t bytes = kg::auto_workspace_bytes(c, s.M, s.N, s.K);
  const auto first = run(launch, s, in, 0, bytes);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(run(launch, s, in, 0, bytes), first);
}

// The plain entry point for models/ (gemm_auto(Layout, ...)): every layout at odd shapes,
// with exactly the workspace it asks for; too little workspace is an error, not a launch.
TEST(GemmAutoGpu, PlainEntryPointEveryLayout) {
  SKIP_WITHOUT_DEVICE();
  for (kg::Layout l : kLayouts)
    for (const Shape& shape : {Shape{1, 1, 1}, Shape{127, 129, 4099}, Shape{1, 4097, 33}, Shape{4097, 1, 31},
                               Shape{300, 200, 1, 2.0f, 0.5f}, Shape{129, 130, 1027, -0.5f, 1.5f}}) {
      const Shape s = with_layout(shape, l);
      expect_matches("gemm_auto(layout)",
                     [](const Shape& x, const float* A, const float* B, float* C, void* ws, std::size_t bytes) {
                       return kg::gemm_auto(x.layout, x.M, x.N, x.K, x.alpha, A, B, x.beta, C, ws, bytes, nullptr);
                     },
                     s, kg::gemm_auto_workspace_bytes(l, s.M, s.N, s.K));
    }
  const std::size_t need = kg::gemm_auto_workspace_bytes(kg::Layout::tt, 127, 129, 4099);
  ASSERT_GT(need, 0u);  // split-K
  DeviceFloats a(127 * 4099), b(4099 * 129), c(127 * 129), w(need / sizeof(float));
  EXPECT_EQ(kg::gemm_auto(kg::Layout::tt, 127, 129, 4099, 1.0f, a.get(), b.get(), 0.0f, c.get(), w.get(), need - 16,
                          nullptr),
            cudaErrorInvalidValue);
}

TEST(GemmAutoGpu, BadArgumentsLaunchNothing) {
  SKIP_WITHOUT_DEVICE();
  DeviceFloats a(64 * 64), b(64 * 64), c(64 * 64);
  // Too little workspace, a 128x128 split, a matrix to gemv, K != 1 to outer, null pointers.
  ASSERT_EQ(kg::splitk_slices(64, 4), 4);  // four slices of 16: panels needed
  EXPECT_EQ(kg::gemm_splitk(kg::Tile::t64x64, 4, 64, 64, 64, 1.0f, a.get(), b.get(), 0.0f, c.get(), nullptr, 0, nullptr),
            cudaErrorInvalidValue);
  void* small = nullptr;
  ASSERT_EQ(cudaMalloc(&small, 64 * 64 * 4 * sizeof(float) - 16), cudaSuccess);
  EXPECT_EQ(kg::gemm_splitk(kg::Tile::t64x64, 4, 64, 64, 64, 1.0f, a.get(), b.get(), 0.0f, c.get(), small,
                            64 * 64 * 4 * sizeof(float) - 16, nullptr),
            cudaErrorInvalidValue);
  cudaFree(small);
  // 128x128 splits too (issue 14): its bad arguments are refused the same way.
  EXPECT_EQ(kg::gemm_splitk(kg::Tile::t128x128, 0, 64, 64, 64, 1.0f, a.get(), b.get(), 0.0f, c.get(), nullptr, 0, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(kg::gemm_splitk(kg::Tile::t128x128, 2, 64, 64, 64, 1.0f, a.get(), b.get(), 0.0f, c.get(), nullptr, 0, nullptr),
            cudaErrorInvalidValue);  // two slices of 32 need a workspace
  EXPECT_EQ(kg::gemm_gemv(8, 8, 8, 1.0f, a.get(), b.get(), 0.0f, c.get(), 1, nullptr, 0, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(kg::gemm_outer(8, 8, 2, 1.0f, a.get(), b.get(), 0.0f, c.get(), nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(kg::gemm_tile(kg::Tile::t64x64, 8, 8, 8, 1.0f, nullptr, b.get(), 0.0f, c.get(), nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

}  // namespace
