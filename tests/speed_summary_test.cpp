// The end-of-run summary in hyperfine's style (run/speed_summary.hpp): what a person reads
// under the table of `harness run`.
#include <gtest/gtest.h>

#include <cstdio>

#include <fmt/format.h>

#include "run/console.hpp"
#include "run/speed_summary.hpp"

namespace harness {
namespace {

Result timed(const std::string& variant, int n, double median, double q1, double q3) {
  Result r;
  r.problem = "gemm";
  r.variant = variant;
  r.case_name = "square";
  r.params.set("M", std::int64_t{n});
  r.status = Status::passed;
  Timing t;
  t.stats.count = 20;
  t.stats.median = median;
  t.stats.q1 = q1;
  t.stats.q3 = q3;
  r.timing = t;
  return r;
}

TEST(SpeedSummary, TheFastestVariantAndEachOthersRatioWithItsSpread) {
  // cublas 1.0 ms (IQR 0.01349 ms: sigma 1%), wgmma 1.1 ms (IQR 0.0297 ms: sigma 2%): 1.10 ± 1.1 x 2.24%.
  const std::vector<Result> rs = {timed("wgmma", 4096, 1.1e-3, 1.1e-3 - 0.014839e-3, 1.1e-3 + 0.014839e-3),
                                  timed("cublas", 4096, 1.0e-3, 1.0e-3 - 0.006745e-3, 1.0e-3 + 0.006745e-3),
                                  timed("cublas", 8192, 8.0e-3, 8.0e-3, 8.0e-3)};  // alone at its shape
  const auto groups = speed_summary(rs);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].shape, "gemm M=4096");
  EXPECT_EQ(groups[0].fastest, "cublas");
  ASSERT_EQ(groups[0].slower.size(), 1u);
  EXPECT_NEAR(groups[0].slower[0].ratio, 1.1, 1e-12);
  EXPECT_NEAR(groups[0].slower[0].sigma, 1.1 * std::hypot(0.01, 0.02), 1e-6);
  EXPECT_EQ(speed_summary_text(groups), "gemm M=4096\n  cublas ran\n    1.10 ± 0.02 times faster than wgmma\n");
}

// One shape in two cases of a suite (gemm-tensor-cores.yaml holds 4096^3 nn in `square`
// and `layouts`): a group per case, named, and no variant compared with its own other run.
TEST(SpeedSummary, AShapeInTwoCasesIsAGroupPerCase) {
  std::vector<Result> rs = {timed("wgmma", 4096, 1.1e-3, 1.1e-3, 1.1e-3), timed("cublas", 4096, 1.0e-3, 1.0e-3, 1.0e-3),
                            timed("wgmma", 4096, 1.0e-3, 1.0e-3, 1.0e-3), timed("cublas", 4096, 1.05e-3, 1.05e-3, 1.05e-3),
                            timed("wgmma", 8192, 8.0e-3, 8.0e-3, 8.0e-3), timed("cublas", 8192, 8.0e-3, 8.0e-3, 8.0e-3)};
  rs[2].case_name = rs[3].case_name = "layouts";
  const auto groups = speed_summary(rs);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].shape, "gemm M=4096 (case square)");
  EXPECT_EQ(groups[0].fastest, "cublas");
  ASSERT_EQ(groups[0].slower.size(), 1u);
  EXPECT_EQ(groups[0].slower[0].variant, "wgmma");
  EXPECT_EQ(groups[1].shape, "gemm M=4096 (case layouts)");
  EXPECT_EQ(groups[1].fastest, "wgmma");
  ASSERT_EQ(groups[1].slower.size(), 1u);
  EXPECT_EQ(groups[1].slower[0].variant, "cublas");
  EXPECT_EQ(groups[2].shape, "gemm M=8192");  // in one case only: no case named
}

TEST(SpeedSummary, WithFiveSamplesASideTheLineGivesTheBootstrapInterval) {
  // Samples spread evenly over +-2% of each median: the interval holds the ratio 1.10.
  auto with_samples = [](const std::string& variant, double median, std::size_t n) {
    Result r = timed(variant, 4096, median, median * 0.99, median * 1.01);
    for (std::size_t i = 0; i < n; ++i)
      r.timing->samples.push_back(median * (0.98 + 0.04 * static_cast<double>(i) / static_cast<double>(n - 1)));
    return r;
  };
  const auto groups = speed_summary({with_samples("wgmma", 1.1e-3, 21), with_samples("cublas", 1.0e-3, 21)});
  ASSERT_EQ(groups.size(), 1u);
  ASSERT_EQ(groups[0].slower.size(), 1u);
  const auto& ci = groups[0].slower[0].interval;
  ASSERT_TRUE(ci);
  EXPECT_LT(ci->lo, 1.1);
  EXPECT_GT(ci->hi, 1.1);
  const std::string text = speed_summary_text(groups);
  EXPECT_EQ(text, fmt::format("gemm M=4096\n  cublas ran\n    1.10 ± 0.02 times faster than wgmma (95% CI {:.2f}-{:.2f})\n",
                              ci->lo, ci->hi));
  EXPECT_EQ(text, speed_summary_text(speed_summary({with_samples("wgmma", 1.1e-3, 21), with_samples("cublas", 1.0e-3, 21)})));
  // Four samples on one side: the ± alone.
  const auto few = speed_summary({with_samples("wgmma", 1.1e-3, 4), with_samples("cublas", 1.0e-3, 21)});
  EXPECT_FALSE(few[0].slower[0].interval);
  EXPECT_EQ(speed_summary_text(few).find("CI"), std::string::npos);
}

TEST(SpeedSummary, UntrustedOrUntimedResultsTakeNoPart) {
  std::vector<Result> rs = {timed("a", 64, 1e-3, 1e-3, 1e-3), timed("b", 64, 2e-3, 2e-3, 2e-3),
                            timed("c", 64, 0.5e-3, 0.5e-3, 0.5e-3)};
  rs[2].integrity.suspicious = "faster than the roof";
  rs.push_back(timed("d", 64, 0.1e-3, 0.1e-3, 0.1e-3));
  rs.back().status = Status::failed;
  const auto groups = speed_summary(rs);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].fastest, "a");
  ASSERT_EQ(groups[0].slower.size(), 1u);
  EXPECT_EQ(groups[0].slower[0].variant, "b");
  EXPECT_TRUE(speed_summary({timed("a", 64, 1e-3, 1e-3, 1e-3)}).empty());
}

TEST(SpeedSummary, TheConsoleEndsWithItUnlessQuiet) {
  const std::vector<Result> rs = {timed("tiled", 256, 2e-3, 2e-3, 2e-3), timed("naive", 256, 4e-3, 4e-3, 4e-3)};
  for (bool quiet : {false, true}) {
    std::FILE* f = std::tmpfile();
    Console(f, quiet).summary(rs);
    std::rewind(f);
    std::string out;
    char buf[512];
    while (std::fgets(buf, sizeof buf, f)) out += buf;
    std::fclose(f);
    EXPECT_EQ(out.find("Fastest per shape") != std::string::npos, !quiet) << out;
    EXPECT_EQ(out.find("  tiled ran\n    2.00 ± 0.00 times faster than naive\n") != std::string::npos, !quiet) << out;
    EXPECT_NE(out.find("2 results: 2 passed"), std::string::npos) << out;
  }
}

}  // namespace
}  // namespace harness
