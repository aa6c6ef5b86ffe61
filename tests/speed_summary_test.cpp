// The end-of-run summary in hyperfine's style (run/speed_summary.hpp): what a person reads
// under the table of `harness run`.
#include <gtest/gtest.h>

#include <cstdio>

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
