// arch::poly_exp2 (2^x on the FMA pipe, kernels/arch/numeric.cuh) against exp2 in double over
// the softmax's range and its edges (-inf, x <= -127, the rounding boundaries at integers),
// beside MUFU's ex2.approx. Label gpu; skips without a device.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "arch_numeric_probe.hpp"
#include "test_support.hpp"

namespace {

TEST(ArchNumericGpu, PolyExp2MatchesExp2WithinItsBound) {
  if (!harness::test::have_device()) GTEST_SKIP() << "no CUDA device";
  std::vector<float> x;
  for (int i = 0; i <= 1 << 20; ++i) x.push_back(-130.0f + 140.0f * static_cast<float>(i) / (1 << 20));  // [-130, 10]
  for (int j = -127; j <= 10; ++j)  // both sides of every integer: j's floor changes there
    for (const float d : {0.0f, 1e-6f, -1e-6f, 0.5f}) x.push_back(static_cast<float>(j) + d);
  x.push_back(-std::numeric_limits<float>::infinity());
  x.push_back(-1e30f);
  std::vector<float> poly(x.size()), mufu(x.size());
  ASSERT_EQ(probe_exp2(x.data(), poly.data(), mufu.data(), static_cast<int>(x.size())), cudaSuccess);
  double worst = 0.0, worst_mufu = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double ref = std::exp2(static_cast<double>(x[i]));
    if (x[i] <= -127.0f) {
      ASSERT_EQ(poly[i], 0.0f) << "x = " << x[i];
      ASSERT_FALSE(std::signbit(poly[i])) << "x = " << x[i];
      continue;
    }
    ASSERT_TRUE(std::isfinite(poly[i])) << "x = " << x[i];
    if (ref < 0x1p-126) {  // below the normal range: under 2^-126, never negative
      EXPECT_GE(poly[i], 0.0f) << "x = " << x[i];
      EXPECT_LT(poly[i], 0x1p-126f) << "x = " << x[i];
      continue;
    }
    worst = std::max(worst, std::fabs(poly[i] / ref - 1.0));
    worst_mufu = std::max(worst_mufu, std::fabs(mufu[i] / ref - 1.0));
  }
  // The cubic's bound (numeric.cuh: 8.6e-5 in f32 arithmetic), with room for f32 rounding.
  EXPECT_LT(worst, 9e-5);
  EXPECT_GT(worst, 1e-6);  // a cubic, not MUFU by mistake
  EXPECT_LT(worst_mufu, 1e-5);
  std::printf("poly_exp2: max relative error %.3g (MUFU ex2.approx: %.3g) over %zu points\n", worst, worst_mufu,
              x.size());
}

}  // namespace
