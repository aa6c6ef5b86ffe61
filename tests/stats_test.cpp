#include <cmath>

#include <gtest/gtest.h>

#include "measure/measure.hpp"
#include "measure/stats.hpp"

namespace harness {
namespace {

TEST(Stats, KnownValues) {
  const Stats s = compute_stats({4, 1, 3, 2, 5});
  EXPECT_EQ(s.count, 5u);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.q1, 2);
  EXPECT_DOUBLE_EQ(s.q3, 4);
  EXPECT_NEAR(s.stddev, std::sqrt(2.5), 1e-12);  // sample standard deviation
  EXPECT_NEAR(s.rel_noise, std::sqrt(2.5) / 3, 1e-12);
}

TEST(Stats, EvenCountMedianInterpolates) {
  const Stats s = compute_stats({10, 20, 30, 40});
  EXPECT_DOUBLE_EQ(s.median, 25);
  EXPECT_DOUBLE_EQ(s.q1, 17.5);
}

TEST(Stats, SingleSampleHasNoNoise) {
  const Stats s = compute_stats({7});
  EXPECT_DOUBLE_EQ(s.median, 7);
  EXPECT_DOUBLE_EQ(s.stddev, 0);
}

TEST(StoppingRule, NeedsMinSamplesMinTimeAndLowNoise) {
  MeasureSettings m;
  m.min_samples = 5;
  m.min_time = 0.5;
  m.max_time = 10;
  m.noise = 0.01;
  std::string why;
  EXPECT_FALSE(should_stop({0.2, 0.2, 0.2, 0.2}, 1.0, m, &why));            // too few samples
  EXPECT_FALSE(should_stop({0.01, 0.01, 0.01, 0.01, 0.01}, 1.0, m, &why));  // too little time
  EXPECT_FALSE(should_stop({0.1, 0.2, 0.1, 0.2, 0.1, 0.2}, 1.0, m, &why));  // too noisy
  EXPECT_TRUE(should_stop({0.1, 0.1, 0.1, 0.1, 0.1, 0.1}, 1.0, m, &why));
  EXPECT_EQ(why, "converged");
  EXPECT_TRUE(should_stop({0.1, 0.2, 0.1, 0.2, 0.1, 0.2}, 10.5, m, &why));  // noisy but out of time
  EXPECT_EQ(why, "time cap");
}

TEST(StoppingRule, CpuTimingStopsAtTheTimeCap) {
  MeasureSettings m;
  m.warmup = 1;
  m.min_samples = 3;
  m.min_time = 0;
  m.max_time = 0.05;
  m.noise = 0;  // unreachable: must stop on the cap
  int calls = 0;
  const Timing t = time_cpu([&] { ++calls; }, m);
  EXPECT_EQ(t.stop_reason, "time cap");
  EXPECT_GE(t.samples.size(), 3u);
  EXPECT_EQ(static_cast<std::size_t>(calls), t.samples.size() + 1);
  EXPECT_LT(t.wall_time, 1.0);
}

}  // namespace
}  // namespace harness
