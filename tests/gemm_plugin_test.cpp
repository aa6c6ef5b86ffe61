// The `gemm` problem as the harness sees it, through the registry, on the cpu backend
// (no GPU needed): parameters, deterministic inputs, poisoning and restoring C, the cpu
// variant's output, work, reference choice, constraints and tolerance.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gemm/gemm.hpp"
#include "gemm_problem_support.hpp"
#include "harness/check.hpp"
#include "harness/random.hpp"
#include "harness/registry.hpp"

namespace {

using harness::test::gemm_problem;

// An FP32 nn case (the problem's defaults).
harness::Params params(std::int64_t M, std::int64_t N, std::int64_t K, double alpha = 1.0, double beta = 0.0) {
  return harness::test::gemm_params(M, N, K, "f32", "nn", alpha, beta);
}

const harness::Variant& variant(std::string_view name) {  // by value: no dangling-reference warning
  const harness::Variant* v = harness::Registry::instance().find_variant("gemm", name);
  EXPECT_NE(v, nullptr) << name;
  return *v;
}

TEST(GemmPlugin, RegistersEveryVariant) {
  const auto names = harness::Registry::instance().variant_names("gemm");
  for (const char* want : {"naive", "atomic", "tiled", "vectorized", "coarsened", "coarsened_k16",
                           "cublas", "cpu"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  EXPECT_EQ(variant("cpu").backend, harness::Backend::cpu);
  EXPECT_EQ(variant("cublas").backend, harness::Backend::cuda);
}

TEST(GemmPlugin, ParameterDomains) {
  const auto specs = gemm_problem().params();
  ASSERT_EQ(specs.size(), 7u);  // M N K alpha beta dtype layout
  EXPECT_TRUE(specs[0].reject(harness::ParamValue{std::int64_t{0}}).has_value());  // M >= 1
  EXPECT_FALSE(specs[0].reject(harness::ParamValue{std::int64_t{1}}).has_value());
  const auto p = harness::with_defaults(specs, harness::Params{});
  EXPECT_EQ(p.get_float("alpha"), 1.0);
  EXPECT_EQ(p.get_float("beta"), 0.0);
}

// The cpu variant through the Instance: inputs are fill_uniform(seed, 1 / 2 / 3) in
// [-1, 1], C is poisoned (beta == 0) or restored from C_in (beta != 0) by reset_outputs.
void check_cpu_run(double alpha, double beta) {
  const int M = 17, N = 33, K = 9;
  const std::uint64_t seed = 1234;
  const auto p = params(M, N, K, alpha, beta);
  auto instance = gemm_problem().make_instance(p, seed);
  instance->prepare(harness::Backend::cpu);
  instance->reset_outputs(harness::Backend::cpu, nullptr);

  std::vector<float> A(M * K), B(K * N), C(M * N);
  harness::fill_uniform(A, seed, 1, -1.0f, 1.0f);
  harness::fill_uniform(B, seed, 2, -1.0f, 1.0f);
  if (beta != 0) harness::fill_uniform(C, seed, 3, -1.0f, 1.0f);

  const auto before = instance->read_outputs(harness::Backend::cpu);
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before[0].name, "C");
  ASSERT_EQ(before[0].floats().size(), C.size());
  for (std::size_t i = 0; i < C.size(); ++i) {
    if (beta == 0) EXPECT_TRUE(before[0].poisoned(i)) << i;
    else EXPECT_EQ(before[0].value(i), C[i]) << i;
  }

  harness::LaunchContext ctx;
  ctx.params = &p;
  harness::launch_on(variant("cpu"), *instance, ctx);
  const auto got = instance->read_outputs(harness::Backend::cpu);

  auto want = C;
  kernels::gemm::gemm_cpu(M, N, K, static_cast<float>(alpha), A.data(), B.data(),
                          static_cast<float>(beta), want.data());
  EXPECT_EQ(got[0].floats(), want);

  // A second run after reset_outputs starts from the same C: same result.
  instance->reset_outputs(harness::Backend::cpu, nullptr);
  harness::launch_on(variant("cpu"), *instance, ctx);
  EXPECT_EQ(instance->read_outputs(harness::Backend::cpu)[0].floats(), want);

  const auto check = harness::compare_outputs(got, {harness::Output{"C", want}},
                                              gemm_problem().tolerance(p));
  EXPECT_TRUE(check.passed) << check.summary();
}

TEST(GemmPlugin, CpuRunBetaZero) { check_cpu_run(1.0, 0.0); }
TEST(GemmPlugin, CpuRunAlphaBeta) { check_cpu_run(-1.5, 0.5); }

TEST(GemmPlugin, CheckFailsAWrongResult) {
  const auto p = params(8, 8, 4096);
  std::vector<float> want(64, 0.5f);
  auto got = want;
  got[9] += 0.01f;  // one product of typical size too much
  const auto check = harness::compare_outputs({harness::Output{"C", got}},
                                              {harness::Output{"C", want}},
                                              gemm_problem().tolerance(p));
  EXPECT_FALSE(check.passed);
  EXPECT_EQ(check.mismatches, 1u);
}

TEST(GemmPlugin, Work) {
  const auto w0 = gemm_problem().work(params(2, 3, 5));
  EXPECT_EQ(w0.flops, 2.0 * 2 * 3 * 5);
  EXPECT_EQ(w0.bytes, 4.0 * (2 * 5 + 5 * 3 + 2 * 3));
  const auto w1 = gemm_problem().work(params(2, 3, 5, 1.0, 0.5));
  EXPECT_EQ(w1.bytes, 4.0 * (2 * 5 + 5 * 3 + 2 * 2 * 3));  // C read and written
  EXPECT_EQ(harness::memory_need(gemm_problem(), params(2, 3, 5)).device, 4u * (10 + 15 + 6));
  EXPECT_EQ(harness::memory_need(gemm_problem(), params(2, 3, 5, 1.0, 0.5)).device, 4u * (10 + 15 + 12));
}

TEST(GemmPlugin, ReferenceIsCpuUpTo2To30) {
  EXPECT_EQ(gemm_problem().reference_variant(params(1024, 1024, 1024)), "cpu");
  EXPECT_EQ(gemm_problem().reference_variant(params(1023, 1025, 999)), "cpu");
  EXPECT_EQ(gemm_problem().reference_variant(params(1025, 1024, 1024)), "cublas");
  EXPECT_EQ(gemm_problem().reference_variant(params(8192, 64, 8192)), "cublas");
}

TEST(GemmPlugin, CpuVariantSkipsHugeShapes) {
  const harness::Variant& cpu = variant("cpu");  // the registry owns it
  ASSERT_TRUE(static_cast<bool>(cpu.constraint));
  EXPECT_FALSE(cpu.constraint(params(2048, 2048, 2048)).has_value());
  const auto why = cpu.constraint(params(8192, 8192, 8192));
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("cpu"), std::string::npos) << *why;
}

TEST(GemmPlugin, ToleranceScalesWithKAndAlpha) {
  const auto t1 = gemm_problem().tolerance(params(64, 64, 1024));
  const auto t2 = gemm_problem().tolerance(params(64, 64, 4096));
  const auto t3 = gemm_problem().tolerance(params(64, 64, 4096, 2.0));
  EXPECT_GT(t2.abs, 3.5 * t1.abs);
  EXPECT_NEAR(t3.abs, 2.0 * t2.abs, 1e-12);
  EXPECT_LT(t2.abs, 1.1e-3);  // far below a typical single product, E|a*b| = 0.25
  // The documented rule states the formula checked above.
  const std::string rule = gemm_problem().tolerance_rule();
  EXPECT_NE(rule.find("f32: abs = u (|alpha| (4K + 8 sqrt K) + 4 |beta|), rel = 4u"), std::string::npos) << rule;
}

}  // namespace
