// The tensor-core GEMMs (`mma`, and `cublas` in every dtype) against the problem's
// reference (the double host reference up to 2^30 multiply-adds, cuBLAS above) through the
// registry, in every dtype x layout at odd sizes (partial tiles in M, N and K, unaligned
// rows: the scalar load path) and aligned ones (the cp.async path), with beta 0 and != 0;
// then 4097x4095x4093, and gemm_mma called directly (argument errors, a misaligned
// pointer). Label `gpu`: skipped with "no CUDA device" where there is none.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "family_support.hpp"
#include "gemm/gemm_lowp.hpp"
#include "gemm/gemm_mma.hpp"
#include "gemm/gemm_reference.hpp"
#include "test_support.hpp"

namespace {

namespace kg = kernels::gemm;
using harness::test::have_device;

#define SKIP_WITHOUT_DEVICE() \
  if (!have_device()) GTEST_SKIP() << "no CUDA device"

harness::Params params(std::int64_t M, std::int64_t N, std::int64_t K, const std::string& dtype,
                       const std::string& layout, double beta = 0.0) {
  harness::Params p;
  p.set("M", M);
  p.set("N", N);
  p.set("K", K);
  p.set("beta", beta);
  p.set("dtype", dtype);
  p.set("layout", layout);
  return harness::test::params_of(harness::test::problem_named("gemm"), p);
}

// Runs the reference variant and each of `names`, compares with the problem's tolerance;
// returns how many ran (a constraint skip prints its reason and does not count).
int check(const harness::Params& p, const std::vector<std::string>& names) {
  const harness::Problem& problem = harness::test::problem_named("gemm");
  const harness::Variant* ref = harness::Registry::instance().find_variant("gemm", problem.reference_variant(p));
  EXPECT_NE(ref, nullptr);
  auto inst = problem.make_instance(p, 2024);
  inst->prepare(harness::Backend::cpu);
  inst->prepare(harness::Backend::cuda);
  harness::Workspace ref_ws;
  const auto want = harness::test::run_once(*ref, *inst, p, &ref_ws);
  int ran = 0;
  for (const auto& name : names) {
    const harness::Variant* v = harness::Registry::instance().find_variant("gemm", name);
    EXPECT_NE(v, nullptr) << name;
    if (v->constraint) {
      if (const auto why = v->constraint(p)) {
        std::printf("  gemm/%s at %s: skipped: %s\n", name.c_str(), p.describe().c_str(), why->c_str());
        continue;
      }
    }
    harness::Workspace ws;
    const auto got = harness::test::run_once(*v, *inst, p, &ws);
    const auto r = harness::compare_outputs(got, want, problem.tolerance(p));
    EXPECT_TRUE(r.passed) << "gemm/" << name << " vs " << ref->name << " at " << p.describe() << ": " << r.summary();
    ++ran;
  }
  return ran;
}

const char* kDtypes[] = {"tf32", "bf16", "f16"};
const char* kLayouts[] = {"nn", "nt", "tn", "tt"};

TEST(GemmTcGpu, OddAndAlignedSizesEveryDtypeAndLayout) {
  SKIP_WITHOUT_DEVICE();
  struct Shape {
    int M, N, K;
    double beta;
  };
  // 1x1x1; primes (every tail, unaligned rows); 67x35x33 with beta; 256x384x320 aligned
  // (cp.async path, several tiles and k tiles); 130x136x72 aligned with partial tiles.
  const Shape shapes[] = {{1, 1, 1, 0}, {67, 35, 33, 0.5}, {131, 257, 97, 0}, {256, 384, 320, 0},
                          {130, 136, 72, -1.0}, {16, 4099, 8, 0}};
  for (const char* d : kDtypes)
    for (const char* l : kLayouts)
      for (const Shape& s : shapes) EXPECT_EQ(check(params(s.M, s.N, s.K, d, l, s.beta), {"mma", "cublas"}), 2);
  // f32: cublas in every layout (mma skips: no FP32 tensor-core path).
  for (const char* l : kLayouts) EXPECT_EQ(check(params(67, 35, 33, "f32", l, 0.5), {"mma", "cublas"}), 1);
}

// Above the cpu limit: cuBLAS in the same dtype is the reference.
TEST(GemmTcGpu, Odd4097x4095x4093) {
  SKIP_WITHOUT_DEVICE();
  for (const char* d : kDtypes)
    for (const char* l : {"nn", "tt"}) EXPECT_EQ(check(params(4097, 4095, 4093, d, l), {"mma"}), 1);
}

TEST(GemmTcGpu, MmaDirectCalls) {
  SKIP_WITHOUT_DEVICE();
  const int M = 40, N = 48, K = 64;  // leading dimensions aligned; the pointer is not
  std::vector<__nv_bfloat16> A(M * K + 1), B(K * N + 1);
  for (std::size_t i = 0; i < A.size(); ++i) A[i] = __float2bfloat16(static_cast<float>((i * 7) % 13) / 8.0f - 0.75f);
  for (std::size_t i = 0; i < B.size(); ++i) B[i] = __float2bfloat16(static_cast<float>((i * 5) % 11) / 8.0f - 0.6f);
  __nv_bfloat16 *dA = nullptr, *dB = nullptr, *dC = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dA), A.size() * 2), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dB), B.size() * 2), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dC), M * N * 2), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dA, A.data(), A.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dB, B.data(), B.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_TRUE(kg::gemm_mma_fast_path(kg::TcDType::bf16, kg::Layout::nn, M, N, K, dA, dB));
  EXPECT_FALSE(kg::gemm_mma_fast_path(kg::TcDType::bf16, kg::Layout::nn, M, N, K, dA + 1, dB));
  // Argument errors, nothing launched.
  EXPECT_EQ(kg::gemm_mma(kg::TcDType::f32, kg::Layout::nn, M, N, K, 1, dA, dB, 0, dC, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(kg::gemm_mma(kg::TcDType::bf16, kg::Layout::nn, 0, N, K, 1, dA, dB, 0, dC, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(kg::gemm_mma(kg::TcDType::bf16, kg::Layout::nn, M, N, K, 1, nullptr, dB, 0, dC, nullptr),
            cudaErrorInvalidValue);
  // A misaligned A pointer (the scalar path), through the models' entry point.
  ASSERT_EQ(kg::gemm_bf16(kg::Layout::nn, M, N, K, 1.0f, dA + 1, dB, 0.0f, dC, nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<__nv_bfloat16> got(M * N), want(M * N);
  ASSERT_EQ(cudaMemcpy(got.data(), dC, got.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  kg::gemm_cpu_ex(kg::TcDType::bf16, kg::Layout::nn, M, N, K, 1.0f, A.data() + 1, B.data(), 0.0f, want.data());
  int bad = 0;
  for (int i = 0; i < M * N; ++i) {
    const float g = __bfloat162float(got[i]), w = __bfloat162float(want[i]);
    if (std::abs(g - w) > 2.0f / 256.0f * std::abs(w) + 1e-3f) ++bad;
  }
  EXPECT_EQ(bad, 0);
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dC);
}

}  // namespace
