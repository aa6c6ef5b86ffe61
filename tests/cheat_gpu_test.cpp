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
using test::result_of;
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

TEST_F(CheatGpu, TheHonestKernelPassesEveryCheck) {
  EXPECT_EQ(run().exit_code, 1) << run().output;  // the cheaters fail the run
  const auto honest = result_of(report(), "cuda");
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
  const auto cache = result_of(report(), "cuda_cache");
  EXPECT_EQ(cache["status"], "failed");
  EXPECT_EQ(cache["check"]["passed"], true);
  EXPECT_EQ(cache["integrity"]["recheck"], "failed");
}

}  // namespace
}  // namespace harness
