#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include <gtest/gtest.h>

#include "measure/measure.hpp"
#include "measure/stats.hpp"
#include "measure/stopping.hpp"

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
  EXPECT_EQ(why, "noise reached");
  EXPECT_TRUE(should_stop({0.1, 0.2, 0.1, 0.2, 0.1, 0.2}, 10.5, m, &why));  // noisy but out of time
  EXPECT_EQ(why, "time cap");
}

TEST(StoppingRule, CpuTimingStopsAtTheTimeCap) {
  MeasureSettings m;
  m.warmup = 1;
  m.min_samples = 3;
  m.min_time = 0;
  m.max_time = 0.05;
  m.noise = 0;  // unreachable with unequal samples: must stop on the cap
  int calls = 0;
  // Every other call spins 20 us, so the samples differ whatever the clock's resolution (an
  // empty body could time identically every call, noise 0, and stop on "noise reached").
  const Timing t = time_cpu(
      [&] {
        const auto t0 = std::chrono::steady_clock::now();
        if (++calls % 2 == 0)
          while (std::chrono::steady_clock::now() - t0 < std::chrono::microseconds(20)) {
          }
      },
      m);
  EXPECT_EQ(t.stop_reason, "time cap");
  EXPECT_GE(t.samples.size(), 3u);
  EXPECT_EQ(static_cast<std::size_t>(calls), t.samples.size() + 1);
  EXPECT_LT(t.wall_time, 1.0);
}


TEST(StoppingRule, AFixedCountStopsAtExactlyThatManySamples) {
  MeasureSettings m;
  m.stopping.rule = StoppingRule::samples;
  m.stopping.samples = 7;
  m.max_time = 100;
  std::string why;
  std::vector<double> s(6, 0.1);
  EXPECT_FALSE(should_stop(s, 1.0, m, &why));
  s.push_back(0.5);  // noisy or not: the count decides
  EXPECT_TRUE(should_stop(s, 1.0, m, &why));
  EXPECT_EQ(why, "sample count reached");
}

TEST(StoppingRule, EntropyStopsOnceNewSamplesRepeatTheDistribution) {
  MeasureSettings m;
  m.stopping.rule = StoppingRule::entropy;
  m.min_samples = 10;
  m.min_time = 0;
  m.max_time = 1e9;
  StoppingCriterion c(m);
  std::string why;
  // Timings at the 0.5 us resolution of CUDA events: a bell of ~40 distinct values
  // (the sum of four uniforms from a fixed generator). The entropy climbs while the
  // distribution is discovered, then flattens.
  std::uint64_t x = 12345;
  auto uniform = [&] {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(x >> 11) / 9007199254740992.0;
  };
  std::size_t stopped_at = 0;
  for (std::size_t i = 0; i < 5000 && !stopped_at; ++i) {
    const double bell = uniform() + uniform() + uniform() + uniform();  // 0..4
    c.add(100e-6 + std::round(bell * 10) * 0.5e-6);
    if (c.finished(0, &why)) stopped_at = i + 1;
  }
  ASSERT_GT(stopped_at, 10u) << "never stopped";
  std::printf("entropy rule stopped after %zu samples, H = %.3f bits\n", stopped_at, c.entropy());
  EXPECT_EQ(why, "entropy flat");
  EXPECT_GT(c.entropy(), 3.0);
  EXPECT_LT(c.entropy(), std::log2(41.0));
  // Every sample new: the entropy keeps climbing (log2 k), so the rule never holds.
  StoppingCriterion growing(m);
  for (int i = 0; i < 600; ++i) {
    growing.add(1.0 + i * 1e-3);
    EXPECT_FALSE(growing.finished(0, &why)) << i;
  }
}

TEST(StoppingRule, LineFitGivesSlopeAndR2) {
  const LineFit f = fit_line({1.0, 3.0, 5.0, 7.0});
  EXPECT_DOUBLE_EQ(f.slope, 2.0);
  EXPECT_DOUBLE_EQ(f.intercept, 1.0);
  EXPECT_DOUBLE_EQ(f.r2, 1.0);
  EXPECT_DOUBLE_EQ(fit_line({4.0, 4.0, 4.0}).r2, 1.0);  // constant: a flat, perfect fit
  EXPECT_LT(fit_line({0.0, 1.0, 0.0, 1.0, 0.0, 1.0}).r2, 0.2);
}

TEST(Clocks, BatchesUnderTheThresholdAreThrottled) {
  const ClockStats c = clock_stats({1980, 1975, 1200, 1970}, 1980, 0.75);
  EXPECT_DOUBLE_EQ(c.min_mhz, 1200);
  EXPECT_DOUBLE_EQ(c.median_mhz, 1972.5);
  EXPECT_EQ(c.throttled_batches, 1u);  // 1200 < 0.75 * 1980 = 1485
  EXPECT_TRUE(c.throttled());
  EXPECT_FALSE(clock_stats({1980, 1975, 1500}, 1980, 0.75).throttled());
  EXPECT_EQ(clock_stats({1980, 1975, 1500}, 1980, 1.0).throttled_batches, 2u);  // a high threshold flags more
  EXPECT_FALSE(clock_stats({}, 1980, 0.75).throttled());
}

}  // namespace
}  // namespace harness
