// Kernels that cheat are caught (issue 33), GPU side: the CUDA cheaters of
// tests/cheat_plugin through `harness run` on tests/data/suites/cheat_gpu.yaml, checked
// by what a user sees (console lines, exit code, report). Skips without a CUDA device.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cheat_support.hpp"
#include "test_support.hpp"

namespace harness {
namespace {

using test::has;
using test::run_command;
const std::string& kExe = test::kHarnessExe;
const std::string& kCheat = test::kCheatPlugin;

class CheatGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test::have_device()) GTEST_SKIP() << "no CUDA device: the CUDA cheaters cannot run here";
  }
  // One run of the GPU suite for every test of the fixture (each takes a few seconds).
  static const test::CommandResult& run() {
    static const test::CommandResult r = run_command(kExe + " run" + kCheat + "tests/data/suites/cheat_gpu.yaml --out " + out());
    return r;
  }
  static const nlohmann::json& report() {
    static const nlohmann::json j = nlohmann::json::parse(test::read_file(out()));
    return j;
  }
  static std::string out() { return test::temp_path("cheat-gpu.json"); }
};

// The result of `variant` in the case named `case_name`.
nlohmann::json result_in(const nlohmann::json& report, const std::string& case_name, const std::string& variant) {
  for (const auto& r : report["results"])
    if (r["case"] == case_name && r["variant"] == variant) return r;
  ADD_FAILURE() << "no result for " << case_name << "/" << variant;
  return nlohmann::json::object();
}

TEST_F(CheatGpu, TheHonestKernelPassesEveryCheck) {
  EXPECT_EQ(run().exit_code, 1) << run().output;  // the cheaters fail the run
  const auto honest = result_in(report(), "cheaters", "cuda");
  EXPECT_EQ(honest["status"], "passed") << honest["reason"];
  EXPECT_EQ(honest["integrity"]["recheck"], "passed");
  EXPECT_EQ(honest["integrity"]["suspicious"], false) << honest["integrity"];
  EXPECT_EQ(honest["integrity"]["outside_timed_region"], false) << honest["integrity"];
  EXPECT_EQ(run_command(kExe + " validate " + out()).exit_code, 0);
}

// Launches once per output buffer, then leaves the previous output in place: the check on
// fresh inputs after timing finds the poison it never overwrote.
TEST_F(CheatGpu, AKernelThatReturnsThePreviousOutputFailsAfterTiming) {
  EXPECT_TRUE(has(run().output, "failed  cheat/cuda_cache n=65536 claim=1 spin_us=50  failed after timing: the output "
                                "does not match fresh inputs (the variant may cache its result): "))
      << run().output;
  const auto cache = result_in(report(), "cheaters", "cuda_cache");
  EXPECT_EQ(cache["status"], "failed");
  EXPECT_EQ(cache["check"]["passed"], true);
  EXPECT_EQ(cache["integrity"]["recheck"], "failed");
}

// Forks its kernel onto a stream of its own and never joins it back: the check passes
// (the read-back waits for every blocking stream), the timing's end event does not wait,
// and the profiling pass's trace sees the kernel on another stream, still running after
// the launch stream had finished.
TEST_F(CheatGpu, AKernelOnAnotherStreamIsWorkOutsideTheTimedRegion) {
  EXPECT_TRUE(has(run().output, "passed  cheat/cuda_side_stream n=65536 claim=1 spin_us=50  ")) << run().output;
  EXPECT_TRUE(has(run().output, "    warning: work outside the timed region: 3 kernel(s) in 3 traced run(s) on another "
                                "stream than the launch stream (stream "))
      << run().output;
  // Lateness ("still running after the launch stream had finished") is not asserted: on an
  // H100 (2026-11-26) the 50 us side kernel had ended before the traced run's host-side
  // synchronize returned, so only the stream was seen. The stream alone marks the result.
  const auto side = result_in(report(), "cheaters", "cuda_side_stream");
  EXPECT_EQ(side["status"], "passed");  // a mark, not a failure: its output is right
  EXPECT_EQ(side["integrity"]["outside_timed_region"], true) << side["integrity"];
  EXPECT_TRUE(side["profile"]["kernels"].contains("outside_timed_region")) << side["profile"]["kernels"];
}

// An honest kernel whose problem declares 10^9 flops per element runs below the roof the
// profiling pass measured (FP32 FFMA x 32 for a problem without a dtype, DRAM copy).
TEST_F(CheatGpu, AnImpossibleClaimIsSuspiciousAgainstTheMeasuredRoof) {
  EXPECT_TRUE(has(run().output, "    warning: suspicious: median ")) << run().output;
  EXPECT_TRUE(has(run().output, "for the declared work (measured peaks: 32 x ")) << run().output;
  const auto claim = result_in(report(), "claim", "cuda");
  EXPECT_EQ(claim["status"], "passed");
  EXPECT_EQ(claim["integrity"]["suspicious"], true) << claim["integrity"];
  EXPECT_GT(claim["integrity"]["roof_time_s"].get<double>(), 1e-3) << claim["integrity"];
  // And compare never calls it faster than the honest claim=1 result... of another case;
  // the pairing is by parameters, so compare the report with itself: `suspicious`.
  const auto r = run_command(kExe + " compare " + out() + " " + out());
  EXPECT_TRUE(has(r.output, "suspicious  (would be same, but the candidate is suspicious: median ")) << r.output;
}

}  // namespace
}  // namespace harness
