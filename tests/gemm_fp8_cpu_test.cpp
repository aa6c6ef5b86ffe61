// dtype fp8_e4m3 of the gemm problem without a GPU (issue 32 item 3): the parameter, the
// operands (e4m3 bytes, quantized with the scales, never zero, bf16 C), the work, the
// alpha/beta rule, the host-side skip reasons of wgmma and cublas (layout nt only, K % 16,
// cuBLASLt's N % 8), the e4m3 decoding, the cpu reference against a naive loop written here
// from the definition, the tolerance rule, and the suites that hold fp8 cases.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <unistd.h>

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <gtest/gtest.h>

#include "gemm/gemm_auto.hpp"
#include "gemm/gemm_cublaslt_fp8.hpp"
#include "gemm/gemm_reference.hpp"
#include "gemm/gemm_types.hpp"
#include "gemm/gemm_wgmma.hpp"
#include "gemm_fp8.hpp"
#include "gemm_params.hpp"
#include "gemm_problem_support.hpp"
#include "gemm_tolerance.hpp"
#include "harness/registry.hpp"
#include "test_support.hpp"

namespace {

namespace kg = kernels::gemm;
using kg::Layout;
using kg::TcDType;

using harness::test::gemm_problem;

// An fp8_e4m3 case (layout nt unless said).
harness::Params params(std::int64_t M, std::int64_t N, std::int64_t K, const char* layout = "nt", double alpha = 1.0,
                       double beta = 0.0) {
  return harness::test::gemm_params(M, N, K, "fp8_e4m3", layout, alpha, beta);
}

std::optional<std::string> constraint(const char* variant, const harness::Params& p) {
  const harness::Variant* v = harness::Registry::instance().find_variant("gemm", variant);
  EXPECT_NE(v, nullptr) << variant;
  if (v == nullptr || !v->constraint) return std::nullopt;
  return v->constraint(p);
}

// The operand's bytes as the harness fills them from `seed`.
std::vector<std::uint8_t> filled(const harness::OperandSpec& op, std::uint64_t seed) {
  std::vector<std::uint8_t> bytes(op.count());
  op.fill.custom(std::as_writable_bytes(std::span<std::uint8_t>(bytes)), seed);
  return bytes;
}

TEST(GemmFp8, DtypeParameter) {
  EXPECT_EQ(kg::tc_dtype_from_string("fp8_e4m3"), TcDType::fp8_e4m3);
  EXPECT_EQ(kg::to_string(TcDType::fp8_e4m3), "fp8_e4m3");
  EXPECT_EQ(kg::element_bytes(TcDType::fp8_e4m3), 1);
  EXPECT_EQ(kg::output_bytes(TcDType::fp8_e4m3), 2);
  EXPECT_EQ(kg::output_bytes(TcDType::f16), 2);
  EXPECT_EQ(plugins::gemm::dtype_param(params(8, 8, 16)), TcDType::fp8_e4m3);
  EXPECT_EQ(plugins::gemm::storage_dtype(TcDType::fp8_e4m3), harness::DType::u8);
  EXPECT_EQ(plugins::gemm::output_dtype(TcDType::fp8_e4m3), harness::DType::bf16);
}

TEST(GemmFp8, OperandsAreQuantizedNonZeroAndFresh) {
  const auto ops = gemm_problem().operands(params(3, 7, 32));
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].shape, (std::vector<std::int64_t>{3, 32}));  // A (M, K)
  EXPECT_EQ(ops[1].shape, (std::vector<std::int64_t>{7, 32}));  // B (N, K): layout nt
  EXPECT_EQ(ops[0].dtype, harness::DType::u8);
  EXPECT_EQ(ops[1].dtype, harness::DType::u8);
  EXPECT_EQ(ops[2].dtype, harness::DType::bf16);
  EXPECT_EQ(ops[2].role, harness::Role::output);
  // A large fill: every value nonzero, dequantized inside [-1, 1], the fp8 range used (A's
  // |q| reaches 448 = 1 / scale_a, B's 384), a new seed gives new values.
  const auto big = gemm_problem().operands(params(256, 256, 256));
  for (int i = 0; i < 2; ++i) {
    const float scale = i == 0 ? plugins::gemm::kFp8ScaleA : plugins::gemm::kFp8ScaleB;
    const auto q = filled(big[i], 7);
    float max_abs = 0;
    for (std::uint8_t b : q) {
      const float v = kg::fp8_e4m3_to_float(b);
      ASSERT_TRUE(std::isfinite(v));
      ASSERT_NE(v, 0.0f);
      EXPECT_LE(std::fabs(v * scale), 1.0f + 1e-6f);
      max_abs = std::max(max_abs, std::fabs(v));
    }
    EXPECT_GE(max_abs, 0.9f / scale) << i;
    EXPECT_NE(q, filled(big[i], 8)) << i;
    EXPECT_EQ(q, filled(big[i], 7)) << i;  // deterministic in the seed
  }
  EXPECT_NE(filled(big[0], 7), filled(big[1], 7));  // A and B: separate streams
}

TEST(GemmFp8, WorkAndConfig) {
  EXPECT_EQ(gemm_problem().work(params(2, 3, 16)).bytes, 1.0 * (2 * 16 + 16 * 3) + 2.0 * (2 * 3));
  EXPECT_EQ(gemm_problem().work(params(2, 3, 16)).flops, 2.0 * 2 * 3 * 16);
  for (const char* v : {"wgmma", "cublas", "cpu"}) {
    const harness::Variant* var = harness::Registry::instance().find_variant("gemm", v);
    ASSERT_NE(var, nullptr);
    ASSERT_TRUE(static_cast<bool>(var->config)) << v;
    harness::Params bf16 = params(8, 8, 16);
    bf16.set("dtype", std::string("bf16"));
    // wgmma puts its plan first where a device answers (kernels::gemm::gemm_wgmma_plan).
    const std::string plan = std::string(v) == "wgmma" && kernels::gemm::current_sm_count() > 0
                                 ? kernels::gemm::gemm_wgmma_plan(8, 8, 16, 1, kernels::gemm::current_sm_count())
                                 : std::string();
    EXPECT_EQ(var->config(params(8, 8, 16)), (plan.empty() ? "" : plan + "; ") + "fp8_e4m3 scale_a=1/448 scale_b=1/384")
        << v;
    EXPECT_EQ(var->config(bf16), std::string(v) == "wgmma" && kernels::gemm::current_sm_count() > 0
                                     ? kernels::gemm::gemm_wgmma_plan(8, 8, 16, 2, kernels::gemm::current_sm_count())
                                     : std::string())
        << v;
  }
}

TEST(GemmFp8, AlphaAndBetaOtherThanOneAndZeroAreRejected) {
  EXPECT_FALSE(gemm_problem().reject(params(8, 8, 16)).has_value());
  const auto alpha = gemm_problem().reject(params(8, 8, 16, "nt", 2.0));
  ASSERT_TRUE(alpha.has_value());
  EXPECT_NE(alpha->find("alpha 1 and beta 0"), std::string::npos) << *alpha;
  EXPECT_TRUE(gemm_problem().reject(params(8, 8, 16, "nt", 1.0, 0.5)).has_value());
}

// Decided on the host, so the same on every machine: wgmma and cuBLASLt take layout nt only
// and K % 16 == 0 (TMA's 16-byte rows); cuBLASLt also wants N % 8 == 0 (bf16 C rows).
TEST(GemmFp8, LayoutAndAlignmentSkipReasons) {
  for (const char* l : {"nn", "tn", "tt"}) {
    const auto w = constraint("wgmma", params(64, 64, 64, l));
    ASSERT_TRUE(w.has_value()) << l;
    EXPECT_NE(w->find("wgmma: layout"), std::string::npos) << *w;
    EXPECT_NE(w->find("nt"), std::string::npos) << *w;
    const auto c = constraint("cublas", params(64, 64, 64, l));
    ASSERT_TRUE(c.has_value()) << l;
    EXPECT_NE(c->find("cublas: layout"), std::string::npos) << *c;
  }
  const auto k = constraint("wgmma", params(64, 64, 40));
  ASSERT_TRUE(k.has_value());
  EXPECT_NE(k->find("K % 16"), std::string::npos) << *k;
  EXPECT_STREQ(kg::gemm_wgmma_fp8_unsupported(false, true, 48), nullptr);
  EXPECT_NE(kg::gemm_wgmma_fp8_unsupported(true, true, 48), nullptr);
  // cuBLASLt's rules at a compute capability with FP8, and without.
  EXPECT_STREQ(kg::gemm_cublaslt_fp8_unsupported(90, 4097, 4104, 4096), nullptr);
  EXPECT_NE(std::string(kg::gemm_cublaslt_fp8_unsupported(90, 64, 35, 48)).find("N % 8"), std::string::npos);
  EXPECT_NE(std::string(kg::gemm_cublaslt_fp8_unsupported(90, 64, 64, 40)).find("K % 16"), std::string::npos);
  EXPECT_NE(std::string(kg::gemm_cublaslt_fp8_unsupported(80, 64, 64, 64)).find("8.9"), std::string::npos);
  const auto cc = plugins::gemm::current_compute_capability();
  if (!cc || *cc >= kg::kCublasLtFp8MinComputeCapability) {
    const auto n = constraint("cublas", params(64, 35, 48));
    ASSERT_TRUE(n.has_value());
    EXPECT_NE(n->find("N % 8"), std::string::npos) << *n;
  }
  // mma and the FP32 kernels have no fp8 path; cpu takes every layout.
  const auto m = constraint("mma", params(64, 64, 64));
  ASSERT_TRUE(m.has_value());
  EXPECT_NE(m->find("fp8"), std::string::npos) << *m;
  EXPECT_TRUE(constraint("tiled", params(64, 64, 64)).has_value());
  EXPECT_FALSE(constraint("cpu", params(64, 64, 64, "tt")).has_value());
}

TEST(GemmFp8, E4m3DecodingIsExactAndAgreesWithCuda) {
  EXPECT_EQ(kg::fp8_e4m3_to_float(0x38), 1.0f);
  EXPECT_EQ(kg::fp8_e4m3_to_float(0x7E), 448.0f);
  EXPECT_EQ(kg::fp8_e4m3_to_float(0xFE), -448.0f);
  EXPECT_EQ(kg::fp8_e4m3_to_float(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(kg::fp8_e4m3_to_float(0x08), std::ldexp(1.0f, -6));
  EXPECT_TRUE(std::isnan(kg::fp8_e4m3_to_float(0x7F)));
  for (int b = 0; b < 256; ++b) {
    __nv_fp8_e4m3 x;
    x.__x = static_cast<__nv_fp8_storage_t>(b);
    const float want = static_cast<float>(x);
    const float got = kg::fp8_e4m3_to_float(static_cast<std::uint8_t>(b));
    if (std::isnan(want)) EXPECT_TRUE(std::isnan(got)) << b;
    else EXPECT_EQ(got, want) << b;
  }
}

// C = sa sb op(A) op(B) from the definition, one element at a time.
double naive(Layout l, const std::vector<std::uint8_t>& A, const std::vector<std::uint8_t>& B, int M, int N, int K,
             int i, int j) {
  double s = 0;
  for (int k = 0; k < K; ++k) {
    const double a = kg::fp8_e4m3_to_float(kg::a_transposed(l) ? A[static_cast<std::size_t>(k) * M + i]
                                                               : A[static_cast<std::size_t>(i) * K + k]);
    const double b = kg::fp8_e4m3_to_float(kg::b_transposed(l) ? B[static_cast<std::size_t>(j) * K + k]
                                                               : B[static_cast<std::size_t>(k) * N + j]);
    s += a * plugins::gemm::kFp8ScaleA * (b * plugins::gemm::kFp8ScaleB);
  }
  return s;
}

TEST(GemmFp8, CpuReferenceMatchesTheDefinitionInEveryLayout) {
  const int M = 13, N = 11, K = 48;
  for (Layout l : {Layout::nt, Layout::nn, Layout::tn, Layout::tt}) {
    const auto ops = gemm_problem().operands(params(M, N, K, std::string(kg::to_string(l)).c_str()));
    const auto A = filled(ops[0], 3), B = filled(ops[1], 3);
    std::vector<__nv_bfloat16> C(static_cast<std::size_t>(M) * N);
    kg::gemm_cpu_fp8_e4m3(l, M, N, K, plugins::gemm::kFp8ScaleA, plugins::gemm::kFp8ScaleB, A.data(), B.data(),
                          C.data());
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        const double want = naive(l, A, B, M, N, K, i, j);
        const double got = __bfloat162float(C[static_cast<std::size_t>(i) * N + j]);
        // One bf16 rounding of the exact value (the scales' product in double differs from
        // scaling each operand by ~2^-53).
        EXPECT_LE(std::fabs(got - want), std::ldexp(std::fabs(want), -8) + 1e-30) << kg::to_string(l) << " " << i << "," << j;
      }
  }
}

// The rule: the bf16 rule plus 2^-11 sqrt K. At K = 4096: an element one bf16 ulp off
// passes, a missed 128-long K step (|error| ~ 3.8) or a dropped scale fails.
TEST(GemmFp8, ToleranceRule) {
  const auto bf16 = plugins::gemm::tolerance_for(TcDType::bf16, 4096, 1, 0);
  const auto fp8 = plugins::gemm::tolerance_for(TcDType::fp8_e4m3, 4096, 1, 0);
  EXPECT_DOUBLE_EQ(fp8.rel, bf16.rel);
  EXPECT_NEAR(fp8.abs, bf16.abs + 64.0 / 2048.0, 1e-12);
  auto passes = [&](double got, double ref) { return std::fabs(got - ref) <= fp8.abs + fp8.rel * std::fabs(ref); };
  EXPECT_TRUE(passes(21.0 + 0.125, 21.0));   // one bf16 ulp at 21
  EXPECT_TRUE(passes(0.02, 0.0));            // near zero: the accumulation term
  EXPECT_FALSE(passes(21.0 + 3.8, 21.0));    // a K step of 128 products missing
  EXPECT_FALSE(passes(0.5 * 448 * 384, 0.5));  // scales not applied
  const std::string rule = gemm_problem().tolerance_rule();
  EXPECT_NE(rule.find("fp8_e4m3"), std::string::npos);
}

TEST(GemmFp8, SuitesHoldFp8Cases) {
  const auto r = harness::test::run_command(std::string(HARNESS_EXE) + " run " + HARNESS_SOURCE_DIR +
                                            "/suites/gemm-tensor-cores.yaml --dry-run");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* want : {"gemm/wgmma/M:4096/N:4096/K:4096/alpha:1/beta:0/dtype:fp8_e4m3/layout:nt",
                           "gemm/cublas/M:8192/N:8192/K:8192/alpha:1/beta:0/dtype:fp8_e4m3/layout:nt",
                           "gemm/wgmma/M:4097/N:4104/K:4096/alpha:1/beta:0/dtype:fp8_e4m3/layout:nt"})
    EXPECT_NE(r.output.find(want), std::string::npos) << want;
  const auto s = harness::test::run_command(std::string(HARNESS_EXE) + " run " + HARNESS_SOURCE_DIR +
                                            "/suites/sanitizer.yaml --dry-run");
  EXPECT_EQ(s.exit_code, 0) << s.output;
  EXPECT_NE(s.output.find("gemm/wgmma/M:67/N:35/K:48/alpha:1/beta:0/dtype:fp8_e4m3/layout:nt"), std::string::npos);
}

// What a user sees: fp8 with alpha 2 is an input error naming the rule; a small fp8 case
// runs on the host and passes its check (no GPU: the CUDA variants skip).
TEST(GemmFp8, CliRejectsAlphaAndRunsTheCpuReference) {
  const auto dir = std::filesystem::temp_directory_path() / ("gemm_fp8_cli_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto bad = dir / "bad.yaml";
  std::ofstream(bad) << "suite: bad\ncases:\n  - name: c\n    problem: gemm\n"
                        "    params: {M: 8, N: 8, K: 16, alpha: 2, dtype: fp8_e4m3, layout: nt}\n    variants: [cpu]\n";
  const auto r = harness::test::run_command(std::string(HARNESS_EXE) + " run " + bad.string() + " --dry-run");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("alpha 1 and beta 0"), std::string::npos) << r.output;
  const auto good = dir / "good.yaml";
  std::ofstream(good) << "suite: good\ncases:\n  - name: c\n    problem: gemm\n"
                         "    params: {M: 37, N: 29, K: 80, dtype: fp8_e4m3, layout: [nt, tn]}\n    variants: [cpu]\n";
  const auto out = (dir / "good.json").string();
  const auto g = harness::test::run_command(std::string(HARNESS_EXE) + " run " + good.string() + " --quiet --out " + out);
  EXPECT_EQ(g.exit_code, 0) << g.output;
  const std::string report = harness::test::read_file(out);
  EXPECT_NE(report.find("\"status\": \"passed\""), std::string::npos) << report.substr(0, 2000);
  EXPECT_NE(report.find("scale_a=1/448"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
