// The ratio of two results' medians with its bootstrap interval (measure/ratio_interval.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "measure/ratio_interval.hpp"

namespace harness {
namespace {

// n samples around `median` with a relative spread of `rel` (a fixed normal stream).
std::vector<double> synthetic(std::size_t n, double median, double rel, unsigned seed) {
  std::mt19937 gen(seed);  // mt19937's sequence is fixed by the standard
  std::vector<double> v(n);
  for (auto& x : v) {
    // Box-Muller from the raw 32-bit draws (normal_distribution is implementation-defined).
    const double u1 = (static_cast<double>(gen()) + 1.0) / 4294967297.0, u2 = static_cast<double>(gen()) / 4294967296.0;
    x = median * (1 + rel * std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2));
  }
  return v;
}

TEST(RatioInterval, TheKnownRatioLiesInside) {
  const auto a = synthetic(200, 1.10e-3, 0.03, 1), b = synthetic(200, 1.00e-3, 0.03, 2);
  const auto ci = median_ratio_interval(a, b);
  ASSERT_TRUE(ci);
  EXPECT_NEAR(ci->ratio, 1.10, 0.02);
  EXPECT_LT(ci->lo, 1.10);
  EXPECT_GT(ci->hi, 1.10);
  EXPECT_LE(ci->lo, ci->ratio);
  EXPECT_GE(ci->hi, ci->ratio);
}

TEST(RatioInterval, ItNarrowsWithMoreSamples) {
  double last = 1e9;
  for (std::size_t n : {10u, 100u, 1000u}) {
    const auto ci = median_ratio_interval(synthetic(n, 2.0, 0.05, 3), synthetic(n, 1.0, 0.05, 4));
    ASSERT_TRUE(ci);
    const double width = ci->hi - ci->lo;
    EXPECT_LT(width, last) << n;
    last = width;
  }
  // 1000 samples a side at 5% spread: the median's standard error is ~1.25 x 5% / sqrt(1000)
  // = 0.2% per side, so the ratio's 95% interval is about 2 x 1.96 x 0.28% ~ 1.1% of 2 wide.
  EXPECT_LT(last, 2.0 * 0.02);
}

TEST(RatioInterval, TheSameSamplesGiveTheSameInterval) {
  const auto a = synthetic(50, 3.0, 0.1, 5), b = synthetic(70, 2.0, 0.1, 6);
  const auto x = median_ratio_interval(a, b), y = median_ratio_interval(a, b);
  ASSERT_TRUE(x && y);
  EXPECT_EQ(x->lo, y->lo);
  EXPECT_EQ(x->hi, y->hi);
  EXPECT_EQ(x->ratio, y->ratio);
  // Another seed moves the bounds a little, not the point estimate.
  const auto z = median_ratio_interval(a, b, kBootstrapResamples, 42);
  ASSERT_TRUE(z);
  EXPECT_EQ(z->ratio, x->ratio);
  EXPECT_NEAR(z->lo, x->lo, 0.05 * x->ratio);
}

TEST(RatioInterval, TooFewSamplesOrNoTimeGiveNone) {
  const std::vector<double> four = {1, 2, 3, 4}, five = {1, 2, 3, 4, 5};
  EXPECT_FALSE(median_ratio_interval(four, five));
  EXPECT_FALSE(median_ratio_interval(five, four));
  EXPECT_TRUE(median_ratio_interval(five, five));
  EXPECT_FALSE(median_ratio_interval(five, {0, 0, 0, 0, 0}));
  // Identical constant samples: ratio and both bounds exactly 1.
  const std::vector<double> c(20, 2.5e-6);
  const auto one = median_ratio_interval(c, c);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->ratio, 1);
  EXPECT_EQ(one->lo, 1);
  EXPECT_EQ(one->hi, 1);
}

}  // namespace
}  // namespace harness
