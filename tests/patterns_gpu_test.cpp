// Every CUDA variant of reduce, scan and histogram against the CPU reference through the
// plugin (inputs, poisoning, workspace, check) at n = 1, a prime, non-multiples of the
// blocks, and 2^20 + 3 (label gpu; skips without a device).
#include <gtest/gtest.h>

#include <cstdint>

#include "patterns_test_support.hpp"
#include "test_support.hpp"

namespace {

using harness::test::check_variant;
using harness::test::cuda_variants;
using harness::test::have_device;
using harness::test::params_of;

const std::int64_t kSizes[] = {1, 1009, 4097, 5000, (1 << 20) + 3};

TEST(PatternsGpu, ReduceEveryVariantMatchesTheCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const std::vector<std::pair<std::string, std::string>> kinds = {{"sum", "f32"}, {"sum", "i32"}, {"max", "f32"}};
  for (const auto& [op, dtype] : kinds)
    for (std::int64_t n : kSizes)
      for (const auto& v : cuda_variants("reduce")) {
        const auto p = params_of("reduce", {{"op", op}, {"dtype", dtype}, {"n", n}});
        const auto r = check_variant("reduce", v, p);
        EXPECT_TRUE(r.passed) << "reduce/" << v << " " << p.describe() << ": " << r.summary();
      }
}

TEST(PatternsGpu, ScanEveryVariantMatchesTheCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  for (const char* dtype : {"f32", "i32"})
    for (std::int64_t n : {std::int64_t{1}, std::int64_t{1009}, std::int64_t{2049}, std::int64_t{4097},
                           std::int64_t{(1 << 20) + 3}, std::int64_t{(1 << 22) + 1}})
      for (const auto& v : cuda_variants("scan")) {
        const auto p = params_of("scan", {{"dtype", std::string(dtype)}, {"n", n}});
        const auto r = check_variant("scan", v, p);
        EXPECT_TRUE(r.passed) << "scan/" << v << " " << p.describe() << ": " << r.summary();
      }
}

TEST(PatternsGpu, HistogramEveryVariantMatchesTheCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  for (const char* bins : {"bytes", "letters"})
    for (const char* data : {"uniform", "skewed", "text"})
      for (std::int64_t n : {std::int64_t{1}, std::int64_t{1009}, std::int64_t{8193}, std::int64_t{(1 << 20) + 3}})
        for (const auto& v : cuda_variants("histogram")) {
          const auto p = params_of("histogram", {{"bins", std::string(bins)}, {"data", std::string(data)}, {"n", n}});
          const auto r = check_variant("histogram", v, p);
          EXPECT_TRUE(r.passed) << "histogram/" << v << " " << p.describe() << ": " << r.summary();
        }
}

}  // namespace
