// The gemm problem's dtype and layout parameters without a GPU: parameter domains and
// the CLI error for an unknown dtype, the FP32-only constraint, operand shapes per layout,
// the host reference in every dtype x layout against a naive loop written here from the
// layout definitions, TF32 rounding, and the per-dtype tolerance rule (correct roundings
// pass, broken results fail).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <unistd.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include "gemm/gemm_reference.hpp"
#include "gemm/gemm_types.hpp"
#include "gemm/gemm_wgmma.hpp"
#include "gemm_params.hpp"
#include "gemm_tolerance.hpp"
#include "harness/check.hpp"
#include "gemm_problem_support.hpp"
#include "harness/registry.hpp"
#include "test_support.hpp"

namespace {

namespace kg = kernels::gemm;
using kg::Layout;
using kg::TcDType;

using harness::test::gemm_problem;
using harness::test::gemm_params;

const harness::ParamSpec& spec(const char* name) {
  static const auto specs = gemm_problem().params();
  for (const auto& s : specs)
    if (s.name == name) return s;
  throw std::logic_error(name);
}

// wgmma's block tile N (host arithmetic, no device): 128 x 128 tiles for 16-bit inputs where
// 128 x 256 tiles would leave 7/8 of the SMs idle, or fewer than half of them busy while
// 128 x 128 tiles keep more than half busy; 128 x 256 otherwise, and always for tf32 and
// fp8; tuning.tile_n decides when set (HARNESS_WGMMA_TILE_N unset in ctest).
TEST(GemmTc, WgmmaTileNByShape) {
  namespace kg = kernels::gemm;
  ASSERT_EQ(std::getenv("HARNESS_WGMMA_TILE_N"), nullptr) << "the expectations are the by-shape rule's";
  const int sms = 132;
  EXPECT_EQ(kg::gemm_wgmma_tile_n(512, 512, 2, sms), 128);      // 8 tiles of 128 x 256
  EXPECT_EQ(kg::gemm_wgmma_tile_n(128, 4096, 2, sms), 128);     // 16 (sms / 8 = 16.5)
  EXPECT_EQ(kg::gemm_wgmma_tile_n(128 * 17, 256, 2, sms), 256); // 17 tiles, 34 of 128 x 128: split
  EXPECT_EQ(kg::gemm_wgmma_tile_n(1536, 512, 2, sms), 256);     // 24 tiles, 48 of 128 x 128
  EXPECT_EQ(kg::gemm_wgmma_tile_n(2048, 512, 2, sms), 256);     // 32 tiles, 64 of 128 x 128
  EXPECT_EQ(kg::gemm_wgmma_tile_n(128, 14336, 2, sms), 128);    // 56 tiles, 112 of 128 x 128: unsplit
  EXPECT_EQ(kg::gemm_wgmma_tile_n(128 * 66, 256, 2, sms), 128); // 66 tiles: half the SMs; 132 narrow ones
  EXPECT_EQ(kg::gemm_wgmma_tile_n(128 * 67, 256, 2, sms), 256); // 67: more than half
  EXPECT_EQ(kg::gemm_wgmma_tile_n(512, 6880, 2, sms), 256);     // 108 tiles
  EXPECT_EQ(kg::gemm_wgmma_tile_n(4096, 4096, 2, sms), 256);
  EXPECT_EQ(kg::gemm_wgmma_tile_n(512, 512, 4, sms), 256);      // tf32: 128 x 256 only
  EXPECT_EQ(kg::gemm_wgmma_tile_n(512, 512, 1, sms), 256);      // fp8: 128 x 256 only
  kg::GemmWgmmaTuning t;
  t.tile_n = 256;
  EXPECT_EQ(kg::gemm_wgmma_tile_n(512, 512, 2, sms, t), 256);
  t.tile_n = 128;
  EXPECT_EQ(kg::gemm_wgmma_tile_n(4096, 4096, 2, sms, t), 128);
  EXPECT_EQ(kg::gemm_wgmma_tile_n(512, 512, 4, sms, t), 256);   // not for tf32 (the call: an error)
}

// wgmma's split-K rule (host arithmetic, no device): split only where fewer than half of
// the SMs get a tile (of the by-shape tile N), into min(SMs / tiles, K steps / 16, 16) ranges.
TEST(GemmTc, WgmmaSplitKByShape) {
  namespace kg = kernels::gemm;
  const int sms = 132;
  EXPECT_EQ(kg::gemm_wgmma_splits(512, 512, 8192, 2, sms), 8);    // 16 tiles of 128 x 128, 128 steps
  EXPECT_EQ(kg::gemm_wgmma_splits(512, 2048, 8192, 2, sms), 4);   // 32 tiles of 128 x 256
  EXPECT_EQ(kg::gemm_wgmma_splits(2048, 512, 8192, 2, sms), 4);
  EXPECT_EQ(kg::gemm_wgmma_splits(128, 14336, 4096, 2, sms), 1);  // 112 tiles of 128 x 128
  EXPECT_EQ(kg::gemm_wgmma_splits(128, 4096, 4096, 2, sms), 4);   // 32 of 128 x 128, 64 steps
  EXPECT_EQ(kg::gemm_wgmma_splits(512, 512, 8192, 4, sms), 16);   // tf32: 8 tiles of 128 x 256, 256 steps of 32
  EXPECT_EQ(kg::gemm_wgmma_splits(72, 40, 2056, 2, sms), 2);      // 33 steps: 2 of >= 16
  EXPECT_EQ(kg::gemm_wgmma_splits(512, 512, 1300, 2, sms), 1);    // the seed's 21 steps: unsplit
  EXPECT_EQ(kg::gemm_wgmma_splits(512, 512, 1984, 2, sms), 1);    // 31 steps: no 2 ranges of 16
  EXPECT_EQ(kg::gemm_wgmma_splits(512, 6880, 8192, 2, sms), 1);   // 108 tiles: most SMs busy
  EXPECT_EQ(kg::gemm_wgmma_splits(4096, 4096, 4096, 2, sms), 1);
  EXPECT_EQ(kg::gemm_wgmma_splits(0, 512, 8192, 2, sms), 1);      // degenerate: no split
  EXPECT_EQ(kg::gemm_wgmma_splits(512, 512, 8192, 2, 0), 1);
}

// wgmma's plan, as a result's config shows it (host arithmetic, HARNESS_WGMMA_SPLITS unset
// in ctest): unsplit where most SMs have a tile, the by-shape split count with the K steps a
// split gets (unequal ranges as lo-hi), clusters named; nothing for a degenerate shape.
TEST(GemmTc, WgmmaPlanNamesTilesAndSplits) {
  namespace kg = kernels::gemm;
  ASSERT_EQ(std::getenv("HARNESS_WGMMA_SPLITS"), nullptr) << "the expectations are the by-shape rule's";
  EXPECT_EQ(kg::gemm_wgmma_plan(512, 512, 8192, 2, 132),
            "128x128 tiles: 16 for 132 SMs; split-K 8 (128 K steps, 16 a split; summed in the kernel)");
  EXPECT_EQ(kg::gemm_wgmma_plan(2048, 512, 8192, 2, 132),
            "128x256 tiles: 32 for 132 SMs; split-K 4 (128 K steps, 32 a split; summed in the kernel)");
  EXPECT_EQ(kg::gemm_wgmma_plan(128, 14336, 4096, 2, 132), "128x128 tiles: 112 for 132 SMs; unsplit");
  EXPECT_EQ(kg::gemm_wgmma_plan(72, 40, 2056, 2, 132),
            "128x128 tiles: 1 for 132 SMs; split-K 2 (33 K steps, 16-17 a split; summed in the kernel)");
  EXPECT_EQ(kg::gemm_wgmma_plan(512, 6880, 8192, 2, 132), "128x256 tiles: 108 for 132 SMs; unsplit");
  EXPECT_EQ(kg::gemm_wgmma_plan(4096, 4096, 4096, 2, 132, 2), "128x256 tiles: 512 for 132 SMs, clusters of 2; unsplit");
  EXPECT_EQ(kg::gemm_wgmma_plan(512, 512, 8192, 4, 132),
            "128x256 tiles: 8 for 132 SMs; split-K 16 (256 K steps, 16 a split; summed in the kernel)");
  EXPECT_EQ(kg::gemm_wgmma_plan(0, 512, 8192, 2, 132), "");
  EXPECT_EQ(kg::gemm_wgmma_plan(512, 512, 8192, 2, 0), "");
}

TEST(GemmTc, DtypeAndLayoutParameters) {
  const auto p = harness::with_defaults(gemm_problem().params(), harness::Params{});
  EXPECT_EQ(p.get_string("dtype"), "f32");
  EXPECT_EQ(p.get_string("layout"), "nn");
  for (const char* d : {"f32", "tf32", "bf16", "f16"}) EXPECT_FALSE(spec("dtype").reject(std::string(d))) << d;
  for (const char* l : {"nn", "nt", "tn", "tt"}) EXPECT_FALSE(spec("layout").reject(std::string(l))) << l;
  EXPECT_TRUE(spec("dtype").reject(std::string("fp8")).has_value());
  EXPECT_TRUE(spec("dtype").reject(std::string("F16")).has_value());
  EXPECT_TRUE(spec("layout").reject(std::string("tx")).has_value());
  EXPECT_EQ(plugins::gemm::dtype_param(gemm_params(1, 1, 1, "bf16")), TcDType::bf16);
  EXPECT_EQ(plugins::gemm::layout_param(gemm_params(1, 1, 1, "f32", "tn")), Layout::tn);
}

// What a user sees: `harness run` on a suite with dtype fp8 is an input error (exit 2)
// naming the parameter and the allowed values, before any GPU work.
TEST(GemmTc, CliRejectsUnknownDtype) {
  const auto dir = std::filesystem::temp_directory_path() / ("gemm_tc_cli_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto suite = dir / "bad.yaml";
  std::ofstream(suite) << "suite: bad\ncases:\n  - name: c\n    problem: gemm\n"
                          "    params: {M: 8, N: 8, K: 8, dtype: fp8}\n    variants: [cpu]\n";
  const auto r = harness::test::run_command(std::string(HARNESS_EXE) + " run " + suite.string() + " --dry-run");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("dtype"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("fp8"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("bf16"), std::string::npos) << r.output;  // the allowed values
  std::filesystem::remove_all(dir);
}

TEST(GemmTc, TensorCoreSuiteIsValid) {
  const auto r = harness::test::run_command(std::string(HARNESS_EXE) + " run " + HARNESS_SOURCE_DIR +
                                            "/suites/gemm-tensor-cores.yaml --dry-run");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// The shape zoo (issue 32) expands: every dtype, training's three layouts, cuBLAS in every
// case; and the Hopper attention suite (issue 30/31) beside it.
TEST(GemmTc, ShapeZooAndHopperAttentionSuitesAreValid) {
  const auto r = harness::test::run_command(std::string(HARNESS_EXE) + " run " + HARNESS_SOURCE_DIR +
                                            "/suites/gemm-shapes.yaml --dry-run");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* want : {"dtype:bf16", "dtype:f16", "dtype:tf32", "dtype:f32", "layout:nt", "layout:nn", "layout:tn",
                           "gemm/cublas/M:1/", "K:770", "M:4097/N:4095/K:4093"})
    EXPECT_NE(r.output.find(want), std::string::npos) << want;
  const auto a = harness::test::run_command(std::string(HARNESS_EXE) + " run " + HARNESS_SOURCE_DIR +
                                            "/suites/attention-hopper.yaml --dry-run");
  EXPECT_EQ(a.exit_code, 0) << a.output;
  for (const char* want : {"attention/flash_wgmma/", "attention/flash_fa2/", "attention_backward/flash_wgmma/",
                           "head_dim:256"})
    EXPECT_NE(a.output.find(want), std::string::npos) << want;
}

TEST(GemmTc, Fp32KernelsRunOnlyF32Nn) {
  EXPECT_FALSE(plugins::gemm::fp32_nn_only(gemm_params(8, 8, 8)).has_value());
  const auto why_dtype = plugins::gemm::fp32_nn_only(gemm_params(8, 8, 8, "bf16"));
  ASSERT_TRUE(why_dtype.has_value());
  EXPECT_NE(why_dtype->find("bf16"), std::string::npos) << *why_dtype;
  const auto why_layout = plugins::gemm::fp32_nn_only(gemm_params(8, 8, 8, "f32", "nt"));
  ASSERT_TRUE(why_layout.has_value());
  EXPECT_NE(why_layout->find("nt"), std::string::npos) << *why_layout;
  // Every FP32 table kernel carries it; cublas, mma and cpu take other dtypes and layouts.
  for (const char* name : {"naive", "atomic", "tiled", "vectorized", "coarsened"}) {
    const harness::Variant* v = harness::Registry::instance().find_variant("gemm", name);
    ASSERT_NE(v, nullptr) << name;
    ASSERT_TRUE(static_cast<bool>(v->constraint)) << name;
    EXPECT_FALSE(v->constraint(gemm_params(8, 8, 8)).has_value()) << name;
    EXPECT_TRUE(v->constraint(gemm_params(8, 8, 8, "tf32")).has_value()) << name;
    EXPECT_TRUE(v->constraint(gemm_params(8, 8, 8, "f32", "tt")).has_value()) << name;
  }
  const harness::Variant* cpu = harness::Registry::instance().find_variant("gemm", "cpu");
  ASSERT_NE(cpu, nullptr);
  EXPECT_FALSE(cpu->constraint(gemm_params(8, 8, 8, "f16", "tt")).has_value());
  const harness::Variant* mma = harness::Registry::instance().find_variant("gemm", "mma");
  ASSERT_NE(mma, nullptr);
  const auto why_mma = mma->constraint(gemm_params(8, 8, 8));
  ASSERT_TRUE(why_mma.has_value());  // no FP32 tensor-core path
  EXPECT_NE(why_mma->find("tf32"), std::string::npos) << *why_mma;
  // wgmma likewise (host-side, before any device query): f32 points to tf32.
  const harness::Variant* wgmma = harness::Registry::instance().find_variant("gemm", "wgmma");
  ASSERT_NE(wgmma, nullptr);
  const auto why_wgmma = wgmma->constraint(gemm_params(8, 8, 8));
  ASSERT_TRUE(why_wgmma.has_value());
  EXPECT_NE(why_wgmma->find("tf32"), std::string::npos) << *why_wgmma;
  // Its workspace: tf32 layouts other than nt hold the transposed operand; 16-bit none.
  ASSERT_TRUE(static_cast<bool>(wgmma->workspace_bytes));
  EXPECT_EQ(wgmma->workspace_bytes(gemm_params(64, 32, 16, "tf32", "nt")), 0u);
  EXPECT_EQ(wgmma->workspace_bytes(gemm_params(64, 32, 16, "tf32", "nn")), 32u * 16 * 4);
  EXPECT_EQ(wgmma->workspace_bytes(gemm_params(64, 32, 16, "tf32", "tt")), 64u * 16 * 4);
  EXPECT_EQ(wgmma->workspace_bytes(gemm_params(64, 32, 16, "bf16", "nn")), 0u);
}

TEST(GemmTc, OperandShapesAndWorkFollowLayoutAndDtype) {
  struct Want {
    const char* layout;
    std::vector<std::int64_t> a, b;
  };
  for (const Want& w : {Want{"nn", {3, 5}, {5, 7}}, Want{"nt", {3, 5}, {7, 5}}, Want{"tn", {5, 3}, {5, 7}},
                        Want{"tt", {5, 3}, {7, 5}}}) {
    const auto ops = gemm_problem().operands(gemm_params(3, 7, 5, "bf16", w.layout));
    ASSERT_EQ(ops.size(), 3u);
    EXPECT_EQ(ops[0].shape, w.a) << w.layout;
    EXPECT_EQ(ops[1].shape, w.b) << w.layout;
    EXPECT_EQ(ops[2].shape, (std::vector<std::int64_t>{3, 7})) << w.layout;
    for (const auto& o : ops) EXPECT_EQ(o.dtype, harness::DType::bf16);
  }
  EXPECT_EQ(gemm_problem().operands(gemm_params(3, 7, 5, "tf32"))[0].dtype, harness::DType::f32);
  EXPECT_EQ(gemm_problem().work(gemm_params(2, 3, 5, "f16")).bytes, 2.0 * (2 * 5 + 5 * 3 + 2 * 3));
  EXPECT_EQ(gemm_problem().work(gemm_params(2, 3, 5, "tf32")).bytes, 4.0 * (2 * 5 + 5 * 3 + 2 * 3));
}

TEST(GemmTc, RoundToTf32IsNearestTiesAway) {
  const float ulp = std::ldexp(1.0f, -10);  // TF32 spacing at [1, 2)
  EXPECT_EQ(kg::round_to_tf32(1.0f), 1.0f);
  EXPECT_EQ(kg::round_to_tf32(1.0f + ulp / 2), 1.0f + ulp);    // tie: away from zero
  EXPECT_EQ(kg::round_to_tf32(-1.0f - ulp / 2), -1.0f - ulp);
  EXPECT_EQ(kg::round_to_tf32(1.0f + ulp / 4), 1.0f);           // below half: down
  EXPECT_EQ(kg::round_to_tf32(1.0f + ulp * 0.75f), 1.0f + ulp);  // above half: up
  EXPECT_EQ(kg::round_to_tf32(1.0f + 3 * ulp), 1.0f + 3 * ulp);  // representable: kept
  EXPECT_TRUE(std::isinf(kg::round_to_tf32(INFINITY)));
}

// Matrices in a dtype's storage, filled with U[-1, 1] rounded to it.
struct Stored {
  TcDType dtype;
  std::vector<float> f;             // f32 / tf32
  std::vector<__nv_bfloat16> bf;
  std::vector<__half> h;
  Stored(TcDType d, std::size_t n, std::uint32_t seed) : dtype(d) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (std::size_t i = 0; i < n; ++i) {
      const float x = u(gen);
      if (d == TcDType::bf16) bf.push_back(__float2bfloat16(x));
      else if (d == TcDType::f16) h.push_back(__float2half(x));
      else f.push_back(x);
    }
  }
  void* data() {
    return dtype == TcDType::bf16 ? static_cast<void*>(bf.data())
                                  : dtype == TcDType::f16 ? static_cast<void*>(h.data()) : static_cast<void*>(f.data());
  }
  double at(std::size_t i) const {  // the value the math sees (tf32: rounded)
    switch (dtype) {
      case TcDType::bf16: return __bfloat162float(bf[i]);
      case TcDType::f16: return __half2float(h[i]);
      case TcDType::tf32: return kg::round_to_tf32(f[i]);
      case TcDType::f32:
      case TcDType::fp8_e4m3: break;  // fp8 has its own test (gemm_fp8_cpu_test)
    }
    return f[i];
  }
  double stored(std::size_t i) const { return dtype == TcDType::tf32 ? f[i] : at(i); }
};

double unit_roundoff(TcDType d) {
  return d == TcDType::bf16 ? std::ldexp(1.0, -8) : d == TcDType::f16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -24);
}

// The naive loop, straight from the layout definitions (gemm_types.hpp).
std::vector<double> naive(Layout l, int M, int N, int K, double alpha, const Stored& A, const Stored& B, double beta,
                          const Stored& C) {
  std::vector<double> out(static_cast<std::size_t>(M) * N);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double s = 0;
      for (int k = 0; k < K; ++k) {
        const double a = kg::a_transposed(l) ? A.at(static_cast<std::size_t>(k) * M + m) : A.at(static_cast<std::size_t>(m) * K + k);
        const double b = kg::b_transposed(l) ? B.at(static_cast<std::size_t>(n) * K + k) : B.at(static_cast<std::size_t>(k) * N + n);
        s += a * b;
      }
      out[static_cast<std::size_t>(m) * N + n] = alpha * s + beta * C.stored(static_cast<std::size_t>(m) * N + n);
    }
  return out;
}

TEST(GemmTc, ReferenceMatchesNaiveLoopInEveryDtypeAndLayout) {
  const int M = 5, N = 7, K = 9;
  const double alpha = -1.5, beta = 0.5;
  for (TcDType d : {TcDType::f32, TcDType::tf32, TcDType::bf16, TcDType::f16})
    for (Layout l : {Layout::nn, Layout::nt, Layout::tn, Layout::tt}) {
      Stored A(d, M * K, 1), B(d, K * N, 2), C(d, M * N, 3);
      const auto want = naive(l, M, N, K, alpha, A, B, beta, C);
      kg::gemm_cpu_ex(d, l, M, N, K, static_cast<float>(alpha), A.data(), B.data(), static_cast<float>(beta), C.data());
      // Correct rounding of the exact value: within half an ulp, u |x|.
      for (std::size_t i = 0; i < want.size(); ++i)
        ASSERT_LE(std::abs(C.stored(i) - want[i]), unit_roundoff(d) * std::abs(want[i]) + 1e-300)
            << kg::to_string(d) << " " << kg::to_string(l) << " element " << i;
    }
}

// tf32 really rounds the inputs: on an input with low mantissa bits the f32 and tf32
// references differ.
TEST(GemmTc, Tf32ReferenceRoundsInputs) {
  std::vector<float> A = {1.0f + std::ldexp(1.0f, -20)}, B = {1.0f}, C32(1), C19(1);
  kg::gemm_cpu_ex(TcDType::f32, Layout::nn, 1, 1, 1, 1.0f, A.data(), B.data(), 0.0f, C32.data());
  kg::gemm_cpu_ex(TcDType::tf32, Layout::nn, 1, 1, 1, 1.0f, A.data(), B.data(), 0.0f, C19.data());
  EXPECT_EQ(C32[0], A[0]);
  EXPECT_EQ(C19[0], 1.0f);
}

// Through the registry, as the runner does: the cpu variant on bf16 `tn` operands that the
// harness filled equals the naive loop on the same operands.
TEST(GemmTc, CpuVariantThroughTheHarness) {
  const int M = 6, N = 5, K = 11;
  for (const char* layout : {"nn", "tn", "nt", "tt"}) {
    const auto p = gemm_params(M, N, K, "bf16", layout, 2.0, -1.0);
    auto inst = gemm_problem().make_instance(p, 77);
    inst->prepare(harness::Backend::cpu);
    inst->reset_outputs(harness::Backend::cpu, nullptr);
    harness::Operands* ops = inst->operands(harness::Backend::cpu);
    ASSERT_NE(ops, nullptr);
    Stored A(TcDType::bf16, 0, 0), B(TcDType::bf16, 0, 0), C(TcDType::bf16, 0, 0);
    A.bf.assign(ops->in<__nv_bfloat16>("A"), ops->in<__nv_bfloat16>("A") + M * K);
    B.bf.assign(ops->in<__nv_bfloat16>("B"), ops->in<__nv_bfloat16>("B") + K * N);
    C.bf.assign(ops->out<__nv_bfloat16>("C"), ops->out<__nv_bfloat16>("C") + M * N);
    const auto want = naive(kg::layout_from_string(layout).value(), M, N, K, 2.0, A, B, -1.0, C);
    harness::LaunchContext ctx;
    ctx.params = &p;
    harness::launch_on(*harness::Registry::instance().find_variant("gemm", "cpu"), *inst, ctx);
    const auto got = inst->read_outputs(harness::Backend::cpu);
    ASSERT_EQ(got.size(), 1u);
    ASSERT_EQ(got[0].dtype, harness::DType::bf16);
    for (std::size_t i = 0; i < want.size(); ++i)
      EXPECT_LE(std::abs(got[0].value(i) - want[i]), std::ldexp(1.0, -8) * std::abs(want[i])) << layout << " " << i;
  }
}

harness::Output bf16_output(const std::vector<__nv_bfloat16>& v) {
  return harness::Output::of<__nv_bfloat16>("C", std::span<const __nv_bfloat16>(v));
}

// The bf16 / f16 rule: a result one ulp off everywhere passes (two correct roundings can
// differ by that), three ulps fail; results of a wrong layout or a missed k tile fail.
TEST(GemmTc, LowPrecisionToleranceRule) {
  const int M = 32, N = 32, K = 1024;
  for (TcDType d : {TcDType::bf16, TcDType::f16}) {
    const char* name = d == TcDType::bf16 ? "bf16" : "f16";
    const auto tol = gemm_problem().tolerance(gemm_params(M, N, K, name));
    EXPECT_EQ(tol.rel, 2.0 * unit_roundoff(d) + 4.0 * std::ldexp(1.0, -24)) << name;
    Stored A(d, M * K, 5), B(d, K * N, 6);
    Stored ref(d, M * N, 7), other(d, M * N, 7);
    kg::gemm_cpu_ex(d, Layout::nn, M, N, K, 1.0f, A.data(), B.data(), 0.0f, ref.data());
    auto to_output = [&](const Stored& s) {
      return d == TcDType::bf16 ? bf16_output(s.bf) : harness::Output::of<__half>("C", std::span<const __half>(s.h));
    };
    auto shifted = [&](int ulps) {  // every element moved by `ulps` ulps of its own value
      Stored s = ref;
      for (std::size_t i = 0; i < s.bf.size(); ++i) {
        std::uint16_t bits;
        std::memcpy(&bits, &s.bf[i], 2);
        bits = static_cast<std::uint16_t>(bits + ulps);
        std::memcpy(static_cast<void*>(&s.bf[i]), &bits, 2);
      }
      for (std::size_t i = 0; i < s.h.size(); ++i) {
        std::uint16_t bits;
        std::memcpy(&bits, &s.h[i], 2);
        bits = static_cast<std::uint16_t>(bits + ulps);
        std::memcpy(static_cast<void*>(&s.h[i]), &bits, 2);
      }
      return s;
    };
    EXPECT_TRUE(harness::compare_outputs({to_output(shifted(1))}, {to_output(ref)}, tol).passed) << name;
    const auto three = harness::compare_outputs({to_output(shifted(3))}, {to_output(ref)}, tol);
    EXPECT_FALSE(three.passed) << name;
    EXPECT_GT(three.mismatches, static_cast<std::size_t>(M * N / 2)) << name << three.summary();
    // Wrong layout: B read as if stored transposed (a square B, so the shapes fit).
    Stored Bsq(d, K * K, 8), Asq(d, K * K, 9);
    Stored r1(d, 4 * K, 10), r2(d, 4 * K, 10);
    kg::gemm_cpu_ex(d, Layout::nn, 4, K, K, 1.0f, Asq.data(), Bsq.data(), 0.0f, r1.data());
    kg::gemm_cpu_ex(d, Layout::nt, 4, K, K, 1.0f, Asq.data(), Bsq.data(), 0.0f, r2.data());
    const auto tol_sq = gemm_problem().tolerance(gemm_params(4, K, K, name));
    EXPECT_FALSE(harness::compare_outputs({to_output(r2)}, {to_output(r1)}, tol_sq).passed) << name;
    // A missed k tile: the first 32 rows of B zero.
    Stored B_missing = B;
    for (int i = 0; i < 32 * N; ++i) {
      if (d == TcDType::bf16) B_missing.bf[i] = __float2bfloat16(0.0f);
      else B_missing.h[i] = __float2half(0.0f);
    }
    kg::gemm_cpu_ex(d, Layout::nn, M, N, K, 1.0f, A.data(), B_missing.data(), 0.0f, other.data());
    EXPECT_FALSE(harness::compare_outputs({to_output(other)}, {to_output(ref)}, tol).passed) << name;
  }
}

// The f32 rule rejects a TF32-computed result (the dtype matters); the tf32 rule accepts
// it against a reference whose inputs were rounded differently (truncated), and rejects
// a missed k tile.
TEST(GemmTc, Tf32ToleranceRule) {
  const int M = 16, N = 16, K = 1024;
  Stored A(TcDType::tf32, M * K, 11), B(TcDType::tf32, K * N, 12);
  std::vector<float> f32(M * N), tf32(M * N), truncated(M * N), missing(M * N);
  kg::gemm_cpu_ex(TcDType::f32, Layout::nn, M, N, K, 1.0f, A.data(), B.data(), 0.0f, f32.data());
  kg::gemm_cpu_ex(TcDType::tf32, Layout::nn, M, N, K, 1.0f, A.data(), B.data(), 0.0f, tf32.data());
  auto trunc = [](std::vector<float> v) {
    for (float& x : v) {
      std::uint32_t b;
      std::memcpy(&b, &x, 4);
      b &= 0xffffe000u;
      std::memcpy(&x, &b, 4);
    }
    return v;
  };
  const auto At = trunc(A.f), Bt = trunc(B.f);
  kg::gemm_cpu_ex(TcDType::f32, Layout::nn, M, N, K, 1.0f, At.data(), Bt.data(), 0.0f, truncated.data());
  auto Bm = B.f;
  std::fill(Bm.begin(), Bm.begin() + 16 * N, 0.0f);
  kg::gemm_cpu_ex(TcDType::tf32, Layout::nn, M, N, K, 1.0f, A.f.data(), Bm.data(), 0.0f, missing.data());
  const auto tol32 = gemm_problem().tolerance(gemm_params(M, N, K, "f32"));
  const auto tol19 = gemm_problem().tolerance(gemm_params(M, N, K, "tf32"));
  using O = harness::Output;
  EXPECT_FALSE(harness::compare_outputs({O{"C", tf32}}, {O{"C", f32}}, tol32).passed);
  EXPECT_TRUE(harness::compare_outputs({O{"C", truncated}}, {O{"C", tf32}}, tol19).passed);
  EXPECT_FALSE(harness::compare_outputs({O{"C", missing}}, {O{"C", tf32}}, tol19).passed);
}

TEST(GemmTc, ToleranceRuleIsListed) {
  const std::string rule = gemm_problem().tolerance_rule();
  for (const char* part : {"f32: abs = u (|alpha| (4K + 8 sqrt K) + 4 |beta|), rel = 4u", "tf32:", "bf16/f16:",
                           "rel = 2 u_o + 4u", "cuBLAS in the same dtype"})
    EXPECT_NE(rule.find(part), std::string::npos) << part;
}

}  // namespace

// The split-K count by shape (host arithmetic): the by-shape tiles (gemm_wgmma_tile_n: 128 x 128
// at 512 x 512, else 128 x 256 here), 132 SMs, 64 bf16 elements per K step. Through a workspace
// each split keeps >= 16 K steps; sums straight into an f32 C (gemm_wgmma_bf16_f32, alpha 1,
// beta 0) need >= 2, the counts the split-K sweep measured fastest (docs/PERFORMANCE.md, "GEMM
// at the training's shapes").
TEST(GemmTc, SplitCountByShapeThroughAWorkspaceAndIntoAnF32C) {
  namespace kg = kernels::gemm;
  struct Case { int M, N, K, workspace, into_c; };
  for (const Case c : {Case{512, 512, 8192, 8, 8},      // 16 tiles of 128 x 128: 132 / 16 = 8
                       Case{512, 512, 1300, 1, 8},      // 21 K steps: 21 / 16 = 1; min(21 / 2, 8) = 8
                       Case{2048, 512, 1300, 1, 4},     // 32 tiles: 132 / 32 = 4
                       Case{1536, 512, 8192, 5, 5},     // 24 tiles: the SMs bind both
                       Case{6880, 512, 8192, 1, 1},     // 108 tiles: more than half the SMs busy
                       Case{512, 512, 64, 1, 1}}) {     // one K step: nothing to split
    EXPECT_EQ(kg::gemm_wgmma_splits(c.M, c.N, c.K, 2, 132), c.workspace) << c.M << "x" << c.N << "x" << c.K;
    EXPECT_EQ(kg::gemm_wgmma_splits(c.M, c.N, c.K, 2, 132, /*sums_into_c=*/true), c.into_c)
        << c.M << "x" << c.N << "x" << c.K;
  }
}
