// Kernels that cheat are caught (issue 33), CPU side: the planted cheaters of
// tests/cheat_plugin run through `harness run` and the test reads what a user sees (the
// console line, the exit code, the report). The CUDA cheaters: cheat_gpu_test.cpp.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "family_support.hpp"
#include "harness/registry.hpp"
#include "profile/kernel_trace.hpp"
#include "profile/roof.hpp"
#include "cheat_support.hpp"
#include "test_support.hpp"

namespace harness {
namespace {

using test::has;
using test::result_of;
using test::run_command;
const std::string& kExe = test::kHarnessExe;
const std::string& kCheat = test::kCheatPlugin;

// The re-check's inputs come and go without leaving a trace: reseeding to another seed
// gives the outputs an instance built with that seed gives (derived inputs included:
// attention_backward computes O and LSE from Q, K, V), and reseeding back gives the
// original outputs bit for bit.
TEST(Reseed, FreshInputsMatchAFreshInstanceAndTheOriginalsComeBack) {
  const Problem& p = test::problem_named("attention_backward");
  Params v;
  v.set("batch", std::int64_t{1});
  v.set("heads", std::int64_t{2});
  v.set("kv_heads", std::int64_t{1});
  v.set("seq_len", std::int64_t{17});
  v.set("head_dim", std::int64_t{8});
  const Params prm = test::params_of(p, v);
  const Variant& cpu = *Registry::instance().find_variant("attention_backward", "cpu");
  auto inst = p.make_instance(prm, 42);
  inst->prepare(Backend::cpu);
  const auto original = test::run_once(cpu, *inst, prm);
  ASSERT_TRUE(inst->reseed(7));
  const auto reseeded = test::run_once(cpu, *inst, prm);
  auto seven = p.make_instance(prm, 7);
  seven->prepare(Backend::cpu);
  const auto fresh = test::run_once(cpu, *seven, prm);
  ASSERT_EQ(reseeded.size(), original.size());
  for (std::size_t i = 0; i < original.size(); ++i) {
    EXPECT_NE(reseeded[i].data, original[i].data) << original[i].name;
    EXPECT_EQ(reseeded[i].data, fresh[i].data) << original[i].name;
  }
  ASSERT_TRUE(inst->reseed(42));
  const auto back = test::run_once(cpu, *inst, prm);
  for (std::size_t i = 0; i < original.size(); ++i) EXPECT_EQ(back[i].data, original[i].data) << original[i].name;
}

// The roof is a generous bound: the dtype's tensor factor on the FP32 peak, an L2's worth
// of bytes free, suspicious only below 0.9x.
TEST(Roof, DtypeFactorsL2AndMargin) {
  DevicePeaks peaks;
  peaks.fp32_gflops = 50000;        // 50 TFLOP/s
  peaks.dram_gbytes_per_s = 4000;   // 4 TB/s
  EXPECT_EQ(flop_peak_factor("bf16"), 16);
  EXPECT_EQ(flop_peak_factor("f32"), 8);
  EXPECT_EQ(flop_peak_factor("i32"), 1);
  EXPECT_EQ(flop_peak_factor(""), 32);
  // A bf16 GEMM of 1.1e12 flops: 1.1e12 / (16 x 50e12) = 1.375 ms; 4e8 bytes: 100 us.
  const auto gemm = device_roof({1.1e12, 4e8}, "bf16", 50e6, peaks);
  ASSERT_TRUE(gemm);
  EXPECT_NEAR(gemm->time_s, 1.375e-3, 1e-9);
  EXPECT_FALSE(below_roof(1.3e-3, *gemm));      // 95% of the roof: honest and fast
  EXPECT_TRUE(below_roof(1.2e-3, *gemm));       // 87%: faster than the tensor cores can be
  // A copy of 4e8 bytes: the 50 MB L2 off, 87.5 us; within the L2: no byte roof (outputs
  // may stay in the L2 past the end event, inputs may be resident).
  EXPECT_NEAR(device_roof({0, 4e8}, "f32", 50e6, peaks)->time_s, 87.5e-6, 1e-12);
  EXPECT_EQ(device_roof({0, 4e7}, "f32", 50e6, peaks)->time_s, 0);
  EXPECT_FALSE(below_roof(1e-9, *device_roof({0, 4e7}, "f32", 50e6, peaks)));
  // Without measured peaks there is no roof.
  EXPECT_FALSE(device_roof({1e12, 1e9}, "bf16", 50e6, DevicePeaks{}));
}

KernelRecord kernel(std::uint32_t stream, std::uint64_t start, std::uint64_t end) {
  KernelRecord k;
  k.stream_id = stream;
  k.start_ns = start;
  k.end_ns = end;
  return k;
}

// The timed-region check of the profiling pass, on made-up CUPTI records: a kernel on
// another stream, and one ending after the launch stream had finished (beyond the slack).
TEST(TimedRegion, OtherStreamsAndLateKernelsAreCounted) {
  TimedRegionTally inside;
  // The launch stream's own kernels are never late (clock conversion noise aside).
  inside.add({kernel(13, 100, 900), kernel(13, 900, 1000 + 2 * TimedRegionTally::kSlackNs)}, 13u, 1000);
  EXPECT_FALSE(inside.text(1));
  TimedRegionTally t;
  t.add({kernel(13, 100, 900), kernel(14, 100, 181000)}, 13u, 1000);
  EXPECT_EQ(t.text(1).value_or(""),
            "1 kernel(s) in 1 traced run(s) on another stream than the launch stream (stream 14, not 13); 1 kernel(s) "
            "still running after the launch stream had finished (up to 180.0 us later)");
  // The legacy default stream has no id to compare with: lateness alone.
  TimedRegionTally legacy;
  legacy.add({kernel(7, 100, 900)}, std::nullopt, 1000);
  EXPECT_FALSE(legacy.text(1));
}

// A variant that remembers its first output and copies it back passes the check before
// timing (its first run is honest) and fails the check on fresh inputs after timing.
TEST(Cheat, ACachingVariantFailsAfterTimingOnFreshInputs) {
  const std::string out = test::temp_path("cheat-cache.json");
  const auto r = run_command(kExe + " run" + kCheat + "tests/data/suites/cheat_cpu.yaml --out " + out);
  EXPECT_EQ(r.exit_code, 1) << r.output;  // as for any failed check
  EXPECT_TRUE(has(r.output, "failed  cheat/cpu_cache n=4096 claim=1 spin_us=50  failed after timing: the output does not "
                            "match fresh inputs (the variant may cache its result): "))
      << r.output;
  EXPECT_TRUE(has(r.output, "2 results: 1 passed, 1 failed")) << r.output;
  const auto report = nlohmann::json::parse(test::read_file(out));
  const auto honest = result_of(report, "cpu"), cache = result_of(report, "cpu_cache");
  EXPECT_EQ(honest["status"], "passed");
  EXPECT_EQ(honest["integrity"]["recheck"], "passed");
  EXPECT_EQ(cache["status"], "failed");
  EXPECT_EQ(cache["check"]["passed"], true);  // the check before timing could not tell
  EXPECT_EQ(cache["integrity"]["recheck"], "failed");
  EXPECT_NE(cache["integrity"]["recheck_seed"], 42);
  EXPECT_FALSE(cache["stats"].is_null());     // it was timed: the cheat shows only afterwards
  EXPECT_EQ(run_command(kExe + " validate " + out).exit_code, 0);
  std::remove(out.c_str());
  std::remove((out + ".journal.jsonl").c_str());
}

// A problem that declares 10^9 flops per element runs faster than any roof for that work.
// Without a GPU the roof comes from the test-only HARNESS_TEST_ROOF; the same override
// leaves an honest claim alone.
TEST(Cheat, AnImpossibleClaimIsMarkedSuspicious) {
  const std::string out = test::temp_path("cheat-claim.json");
  const std::string roof = "HARNESS_TEST_ROOF=gflops=1000,gbytes_per_s=1000 ";
  const auto r = run_command(roof + kExe + " run" + kCheat + "tests/data/suites/cheat_claim.yaml --out " + out);
  EXPECT_EQ(r.exit_code, 0) << r.output;  // a mark, not a failure: the output was right
  EXPECT_TRUE(has(r.output, "    warning: suspicious: median ")) << r.output;
  EXPECT_TRUE(has(r.output, "of the roof time 4.096 s for the declared work (test override "
                            "HARNESS_TEST_ROOF=gflops=1000,gbytes_per_s=1000): the work cannot have been done in the "
                            "timed region"))
      << r.output;
  EXPECT_TRUE(has(r.output, "cheat/cpu n=4096 claim=1000000000 spin_us=50  suspect ")) << r.output;  // the summary
  const auto report = nlohmann::json::parse(test::read_file(out));
  const auto claim = result_of(report, "cpu");
  EXPECT_EQ(claim["status"], "passed");
  EXPECT_EQ(claim["integrity"]["suspicious"], true);
  EXPECT_NEAR(claim["integrity"]["roof_time_s"].get<double>(), 4.096, 1e-9);
  EXPECT_EQ(run_command(kExe + " validate " + out).exit_code, 0);
  const auto md = run_command(kExe + " report " + out + " --format md");
  EXPECT_TRUE(has(md.output, "suspicious: median ")) << md.output;

  // The honest claim (1 flop per element) under the same roof: not suspicious.
  const auto honest = run_command(roof + kExe + " run" + kCheat + "tests/data/suites/cheat_cpu.yaml --variants cpu --out " + out);
  EXPECT_EQ(honest.exit_code, 0) << honest.output;
  EXPECT_FALSE(has(honest.output, "suspicious")) << honest.output;
  EXPECT_EQ(result_of(nlohmann::json::parse(test::read_file(out)), "cpu")["integrity"]["suspicious"], false);
  // A malformed override is refused, not ignored.
  const auto bad = run_command("HARNESS_TEST_ROOF=fast " + kExe + " run" + kCheat + "tests/data/suites/cheat_claim.yaml --out " + out);
  EXPECT_TRUE(has(bad.output, "HARNESS_TEST_ROOF: 'fast' is not gflops=G or gbytes_per_s=B")) << bad.output;
  std::remove(out.c_str());
  std::remove((out + ".journal.jsonl").c_str());
}

}  // namespace
}  // namespace harness
