// The host reference GEMM (kernels/gemm/gemm_cpu.cpp) against a plain triple loop, and the
// gemm tolerance rule against simulated correct and wrong FP32 kernels. CPU only.
#include <cmath>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <ostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gemm/gemm.hpp"
#include "gemm_tolerance.hpp"

namespace {

using kernels::gemm::gemm_cpu;

std::vector<float> random_matrix(std::size_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

// C = alpha * A B + beta * C, (M, K) x (K, N), row-major, double sums in k order.
std::vector<float> triple_loop(int M, int N, int K, float alpha, const std::vector<float>& A,
                               const std::vector<float>& B, float beta, std::vector<float> C) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = 0;
      for (int k = 0; k < K; ++k)
        s += static_cast<double>(A[static_cast<std::size_t>(i) * K + k]) *
             static_cast<double>(B[static_cast<std::size_t>(k) * N + j]);
      float& c = C[static_cast<std::size_t>(i) * N + j];
      c = static_cast<float>(alpha * s + (beta == 0.0f ? 0.0 : beta * static_cast<double>(c)));
    }
  return C;
}

struct Case {
  int M, N, K;
  float alpha, beta;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.M << "x" << c.N << "x" << c.K << " alpha=" << c.alpha << " beta=" << c.beta;
}

class GemmCpu : public ::testing::TestWithParam<Case> {};

TEST_P(GemmCpu, MatchesTripleLoop) {
  const Case c = GetParam();
  const std::size_t mk = static_cast<std::size_t>(c.M) * c.K;
  const std::size_t kn = static_cast<std::size_t>(c.K) * c.N;
  const std::size_t mn = static_cast<std::size_t>(c.M) * c.N;
  const auto A = random_matrix(mk, 1);
  const auto B = random_matrix(kn, 2);
  auto C = random_matrix(mn, 3);
  if (c.beta == 0.0f) C.assign(mn, std::numeric_limits<float>::quiet_NaN());  // must not be read
  const auto want = triple_loop(c.M, c.N, c.K, c.alpha, A, B, c.beta, C);

  for (unsigned threads : {1u, 3u, 0u}) {
    auto got = C;
    gemm_cpu(c.M, c.N, c.K, c.alpha, A.data(), B.data(), c.beta, got.data(), threads);
    for (std::size_t i = 0; i < mn; ++i) {
      ASSERT_FALSE(std::isnan(got[i])) << "C[" << i << "] is NaN, threads=" << threads;
      // Both sum exact double products in k order: at most a last-bit difference.
      ASSERT_NEAR(got[i], want[i], 1e-6 * (1.0 + std::abs(want[i])))
          << "C[" << i << "] threads=" << threads;
    }
  }
}

std::string case_name(const ::testing::TestParamInfo<Case>& param_info) {
  const Case& c = param_info.param;
  auto num = [](float v) {
    std::string t = std::to_string(static_cast<int>(std::lround(v * 100)));
    for (auto& ch : t)
      if (ch == '-') ch = 'm';
    return t;
  };
  return std::to_string(c.M) + "x" + std::to_string(c.N) + "x" + std::to_string(c.K) + "_a" +
         num(c.alpha) + "_b" + num(c.beta);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GemmCpu,
    ::testing::Values(Case{1, 1, 1, 1.0f, 0.0f}, Case{3, 5, 7, 1.0f, 0.0f},
                      Case{17, 33, 9, 1.0f, 0.0f}, Case{17, 33, 9, -1.5f, 0.5f},
                      Case{1, 1100, 3, 2.0f, -1.0f},    // one row, crosses column panels
                      Case{130, 1, 70, 0.25f, 1.0f},    // one column, many row panels
                      Case{129, 513, 257, 1.0f, 0.0f},  // every panel edge ragged
                      Case{64, 64, 1, 1.0f, 2.0f},      // K = 1
                      Case{33, 65, 129, 0.0f, 0.75f}),  // alpha = 0: C = beta * C
    case_name);

TEST(GemmCpu, ThreadCountDoesNotChangeBits) {
  const int M = 67, N = 1031, K = 301;
  const auto A = random_matrix(static_cast<std::size_t>(M) * K, 4);
  const auto B = random_matrix(static_cast<std::size_t>(K) * N, 5);
  std::vector<float> one(static_cast<std::size_t>(M) * N), many(one.size());
  gemm_cpu(M, N, K, 1.0f, A.data(), B.data(), 0.0f, one.data(), 1);
  gemm_cpu(M, N, K, 1.0f, A.data(), B.data(), 0.0f, many.data(), 7);
  EXPECT_EQ(one, many);
}

TEST(GemmCpu, RejectsBadArguments) {
  float x = 0;
  EXPECT_THROW(gemm_cpu(0, 1, 1, 1.0f, &x, &x, 0.0f, &x), std::invalid_argument);
  EXPECT_THROW(gemm_cpu(1, -1, 1, 1.0f, &x, &x, 0.0f, &x), std::invalid_argument);
  EXPECT_THROW(gemm_cpu(1, 1, 0, 1.0f, &x, &x, 0.0f, &x), std::invalid_argument);
  EXPECT_THROW(gemm_cpu(1, 1, 1, 1.0f, nullptr, &x, 0.0f, &x), std::invalid_argument);
}

// The tolerance rule, checked without a GPU: an FP32 kernel that sums in k order with
// fused multiply-adds (what naive/tiled/coarsened do, the worst order we have) must pass
// against the double reference with margin; one that drops a single product, or rounds
// its operands to TF32, must fail.
struct Fp32Kernel {
  enum Kind { correct, drops_one_product, tf32 } kind;
};

float tf32(float x) {  // round to nearest, 10 explicit mantissa bits
  std::uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits = (bits + 0x1000u) & ~0x1FFFu;
  std::memcpy(&x, &bits, 4);
  return x;
}

// Largest (|got - ref| - rel |ref|) / abs over C: <= 1 passes.
double worst_ratio(int M, int N, int K, Fp32Kernel::Kind kind, float alpha, float beta) {
  const auto A = random_matrix(static_cast<std::size_t>(M) * K, 11);
  const auto B = random_matrix(static_cast<std::size_t>(K) * N, 12);
  const auto C = random_matrix(static_cast<std::size_t>(M) * N, 13);
  auto ref = C;
  gemm_cpu(M, N, K, alpha, A.data(), B.data(), beta, ref.data());
  const harness::Tolerance tol = plugins::gemm::tolerance_for(K, alpha, beta);
  double worst = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float acc = 0;
      for (int k = 0; k < K; ++k) {
        if (kind == Fp32Kernel::drops_one_product && k == K / 2) continue;
        float a = A[static_cast<std::size_t>(i) * K + k];
        float b = B[static_cast<std::size_t>(k) * N + j];
        if (kind == Fp32Kernel::tf32) {
          a = tf32(a);
          b = tf32(b);
        }
        acc = std::fma(a, b, acc);
      }
      const std::size_t idx = static_cast<std::size_t>(i) * N + j;
      const float got = beta == 0.0f ? alpha * acc : std::fma(beta, C[idx], alpha * acc);
      const double err = std::abs(static_cast<double>(got) - ref[idx]);
      worst = std::max(worst, (err - tol.rel * std::abs(ref[idx])) / tol.abs);
    }
  return worst;
}

TEST(GemmTolerance, PassesSequentialFp32WithMargin) {
  // K = 8192: the largest reduction of the suite. 32 x 32 outputs keep it to ~0.1 s.
  EXPECT_LT(worst_ratio(32, 32, 8192, Fp32Kernel::correct, 1.0f, 0.0f), 0.5);
  EXPECT_LT(worst_ratio(32, 32, 999, Fp32Kernel::correct, -1.5f, 0.5f), 0.5);
  EXPECT_LT(worst_ratio(64, 64, 1, Fp32Kernel::correct, 2.0f, 3.0f), 1.0);
}

TEST(GemmTolerance, FailsAKernelThatDropsOneProduct) {
  EXPECT_GT(worst_ratio(32, 32, 4096, Fp32Kernel::drops_one_product, 1.0f, 0.0f), 10.0);
  EXPECT_GT(worst_ratio(32, 32, 8192, Fp32Kernel::drops_one_product, 1.0f, 1.0f), 10.0);
}

TEST(GemmTolerance, FailsTf32) {
  EXPECT_GT(worst_ratio(32, 32, 4096, Fp32Kernel::tf32, 1.0f, 0.0f), 2.0);
  EXPECT_GT(worst_ratio(32, 32, 256, Fp32Kernel::tf32, 1.0f, 0.0f), 2.0);
}

}  // namespace
