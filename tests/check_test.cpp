#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "harness/check.hpp"

namespace harness {
namespace {

std::vector<Output> one(std::vector<float> v) { return {{"out", std::move(v)}}; }

TEST(Check, IdenticalOutputsPass) {
  const auto r = compare_outputs(one({1, 2, 3}), one({1, 2, 3}), {0, 0});
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.elements, 3u);
  EXPECT_DOUBLE_EQ(r.max_abs_error, 0);
}

TEST(Check, PoisonedElementsAreUnwrittenAndFail) {
  std::vector<float> got = {1, 2, 3, 4};
  poison_host(std::span<float>(got).subspan(2));
  EXPECT_TRUE(is_poison(got[3]));
  const auto r = compare_outputs(one(got), one({1, 2, 3, 4}), {1e9, 1e9});
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.unwritten, 2u);
  EXPECT_NE(r.summary().find("2 unwritten"), std::string::npos);
}

TEST(Check, NanAndInfFailEvenWithHugeTolerance) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const auto r = compare_outputs(one({nan, inf, 1}), one({1, 1, 1}), {1e30, 1e30});
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.nonfinite, 2u);
  EXPECT_EQ(r.unwritten, 0u);  // an arithmetic NaN is not the poison pattern
}

TEST(Check, ToleranceIsAbsPlusRelTimesReference) {
  // |1.1 - 1| = 0.1 <= 0.05 + 0.1 * 1  passes; |110 - 100| = 10 > 0.05 + 0.05*100 fails.
  EXPECT_TRUE(compare_outputs(one({1.1f}), one({1.0f}), {0.05, 0.1}).passed);
  const auto r = compare_outputs(one({110.0f}), one({100.0f}), {0.05, 0.05});
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.mismatches, 1u);
  EXPECT_NEAR(r.max_abs_error, 10, 1e-9);
  EXPECT_NEAR(r.rel_l2_error, 0.1, 1e-9);
  EXPECT_NE(r.worst.find("out[0]"), std::string::npos);
}

TEST(Check, MissingOutputFails) {
  const auto r = compare_outputs({{"other", {1}}}, one({1}), {0, 0});
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.worst.find("missing"), std::string::npos);
}

}  // namespace
}  // namespace harness
