// NVML sensors and steady warm-up on a real device (issue 33; label gpu). Skips without a
// device; the NVML parts skip with NVML's note where it cannot be used (not built, no
// library), the probe parts run anyway.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/device_buffer.hpp"
#include "measure/measure.hpp"
#include "measure/nvml_sensors.hpp"
#include "measure/steady.hpp"
#include "measure/traced_round.hpp"
#include "test_support.hpp"

namespace harness {
namespace {

using test::have_device;

// 256 MiB memset: ~100 us of DRAM-bound work per launch on an H100/H200.
struct Memset {
  DeviceBuffer<char> buf{std::size_t{256} << 20};
  cudaStream_t stream = nullptr;
  Memset() { EXPECT_EQ(cudaStreamCreate(&stream), cudaSuccess); }
  ~Memset() { (void)cudaStreamDestroy(stream); }
  void operator()() { ASSERT_EQ(cudaMemsetAsync(buf.data(), 1, buf.size(), stream), cudaSuccess); }
};

MeasureSettings quick() {
  MeasureSettings s;
  s.min_time = 0.5;
  s.max_time = 2;
  s.cache = CacheMode::hot;
  return s;
}

TEST(SensorsGpu, NvmlCoversTheTimedBatches) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  NvmlOpen nvml = open_nvml(0);
  if (!nvml.source) GTEST_SKIP() << nvml.note;
  Memset m;
  const Timing t = time_cuda([&] { m(); }, m.stream, quick(), nullptr, nvml.source.get());
  ASSERT_TRUE(t.sensors);
  const SensorStats& s = *t.sensors;
  EXPECT_GT(s.samples, 50u);  // ~250 at 2 ms over >= 0.5 s
  EXPECT_GT(s.sm_mhz_median, 0);
  EXPECT_GT(s.sm_mhz_limit, 0);
  EXPECT_LE(s.sm_mhz_max, s.sm_mhz_limit * 1.01);
  EXPECT_GT(s.power_w_median, 0);
  EXPECT_GT(s.temp_c_max, 0);
  ASSERT_TRUE(s.energy_j);
  EXPECT_GT(*s.energy_j, 0);
  EXPECT_GT(s.seconds, 0.4);
  // Mean power from the counter within reason of the power samples (both are the GPU's).
  EXPECT_GT(*s.mean_power_w(), 0.3 * s.power_w_median);
  EXPECT_LT(*s.mean_power_w(), 3.0 * s.power_w_median);
  std::printf("sensors: %s, %zu samples, energy %.3f J over %.2f s (%s)\n", clock_text(s).c_str(), s.samples,
              *s.energy_j, s.seconds, s.energy_source.c_str());
}

TEST(SensorsGpu, SteadyWarmUpEndsWithinItsCap) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  NvmlOpen nvml = open_nvml(0);
  Memset m;
  MeasureSettings s = quick();
  s.steady = true;
  s.steady_settings.max_time = 3;
  for (SensorSource* source : {nvml.source.get(), static_cast<SensorSource*>(nullptr)}) {
    const auto t0 = std::chrono::steady_clock::now();
    const Timing t = time_cuda([&] { m(); }, m.stream, s, nullptr, source);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_TRUE(t.steady);
    EXPECT_EQ(t.steady->clock_source, source ? "nvml" : "probe");
    EXPECT_GT(t.steady->burst_samples, 0u);
    EXPECT_GT(t.steady->burst_median_s, 0);
    EXPECT_LE(t.steady->seconds, 3.5);
    EXPECT_LT(took, 3.5 + s.max_time + 1.5);  // the cap, then max_time of samples
    std::printf("%s: %s; median %.2f us\n", t.steady->clock_source.c_str(), steady_text(*t.steady).c_str(),
                t.stats.median * 1e6);
  }
}

// End to end: a bf16 GEMM (steady by default) through `harness run`, then its report.
TEST(SensorsGpu, RunRecordsSensorsAndSteadyInTheReport) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const std::string suite = test::temp_path("sensors.yaml");
  std::ofstream(suite) << "suite: sensors\nsettings: {min_time: 0.3, max_time: 1}\ncases:\n"
                          "  - problem: gemm\n    params: {M: 2048, N: 2048, K: 2048, dtype: bf16}\n"
                          "    variants: [cublas]\n";
  const std::string out = test::temp_path("sensors.json");
  const auto r = test::run_command(std::string(HARNESS_EXE) + " run " + suite + " --no-profile --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::printf("%s\n", r.output.c_str());
  const auto report = nlohmann::json::parse(test::read_file(out));
  const auto& nvml = report["environment"]["nvml"];
  const auto& res = report["results"][0];
  ASSERT_EQ(res["status"], "passed") << res.dump();
  EXPECT_EQ(res["settings"]["steady"], true);
  ASSERT_TRUE(res.contains("steady"));
  EXPECT_NE(r.output.find("steady"), std::string::npos);
  EXPECT_GT(res["rates"]["cycles_per_launch"].get<double>(), 0);
  if (nvml["used"] == true) {
    ASSERT_TRUE(res.contains("sensors"));
    EXPECT_GT(res["rates"]["energy_per_launch_j"].get<double>(), 0);
    EXPECT_GT(res["rates"]["flop_per_j"].get<double>(), 0);
    EXPECT_EQ(res["steady"]["clock_source"], "nvml");
  } else {
    EXPECT_FALSE(res.contains("sensors"));
    EXPECT_NE(r.output.find("note: NVML"), std::string::npos);
  }
  const auto v = test::run_command(std::string(HARNESS_EXE) + " validate " + out);
  EXPECT_EQ(v.exit_code, 0) << v.output;
  test::remove_report(out);
  std::remove(suite.c_str());
}

// `harness run SUITE ARGS --out OUT` must exit 0; *results = the report's results.
void run_suite(const std::string& suite, const std::string& args, const std::string& out, nlohmann::json* results) {
  const auto r = test::run_command(std::string(HARNESS_EXE) + " run " + suite + " " + args + " --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  *results = nlohmann::json::parse(test::read_file(out))["results"];
}

// The profiling pass of a steady result starts in the state the result was timed in: the
// kernel is launched back to back first (measure/rewarm.hpp), and the report says so; a
// result timed without steady gets no re-warm.
TEST(SensorsGpu, TheProfilingPassOfASteadyResultIsReWarmed) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const std::string suite = test::temp_path("rewarm.yaml");
  std::ofstream(suite) << "suite: rewarm\nsettings: {min_time: 0.1, max_time: 0.3}\ncases:\n"
                          "  - problem: gemm\n    params: {M: 1024, N: 1024, K: 1024, dtype: bf16}\n"
                          "    variants: [cublas]\n";
  for (const char* steady : {"on", "off"}) {
    const std::string out = test::temp_path(std::string("rewarm-") + steady + ".json");
    nlohmann::json results;
    ASSERT_NO_FATAL_FAILURE(run_suite(suite, std::string("--steady ") + steady, out, &results));
    const auto res = results[0];
    ASSERT_EQ(res["status"], "passed") << res.dump();
    ASSERT_TRUE(res.contains("profile")) << res.dump();
    if (std::string(steady) == "on") {
      ASSERT_TRUE(res["profile"].contains("rewarm")) << res["profile"].dump();
      EXPECT_GE(res["profile"]["rewarm"]["seconds"].get<double>(), 0.5);
      EXPECT_GT(res["profile"]["rewarm"]["launches"].get<int>(), 0);
    } else {
      EXPECT_FALSE(res["profile"].contains("rewarm")) << res["profile"].dump();
    }
    test::remove_report(out);
  }
  std::remove(suite.c_str());
}

// A result timed in rounds gets one more traced round right after them
// (measure/traced_round.hpp): the events and CUPTI over the same launches, in the rounds'
// state. For a 4 ms GEMM the two agree within 2% (the events add only the gap between the
// start event and the kernel); interleave off: no traced round.
TEST(SensorsGpu, AResultTimedInRoundsGetsATracedRoundOfItsOwnLaunches) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const std::string suite = test::temp_path("traced-round.yaml");
  std::ofstream(suite) << "suite: traced-round\nsettings: {min_time: 0.1, max_time: 0.3, steady: false}\ncases:\n"
                          "  - problem: gemm\n    params: {M: 4096, N: 4096, K: 4096, dtype: f32}\n"
                          "    variants: [cublas, coarsened]\n";
  for (const char* interleave : {"on", "off"}) {
    const std::string out = test::temp_path(std::string("traced-round-") + interleave + ".json");
    nlohmann::json results;
    ASSERT_NO_FATAL_FAILURE(run_suite(suite, std::string("--interleave ") + interleave + " --metrics none", out, &results));
    for (const auto& res : results) {
      ASSERT_EQ(res["status"], "passed") << res.dump();
      ASSERT_TRUE(res.contains("profile")) << res.dump();
      const auto& p = res["profile"];
      if (std::string(interleave) == "off") {
        EXPECT_FALSE(p.contains("traced_round")) << p.dump();
        continue;
      }
      ASSERT_TRUE(p.contains("traced_round")) << p.dump();
      const auto& t = p["traced_round"];
      if (t.contains("unavailable")) GTEST_SKIP() << t["unavailable"].get<std::string>();
      // As many launches as a timed batch of it (about 50 ms), at least kTracedRoundLaunches.
      EXPECT_GE(t["launches"].get<int>(), kTracedRoundLaunches) << t.dump();
      EXPECT_LE(t["launches"].get<int>(), 256) << t.dump();
      // NVML's clock over the round's launches, where the result's sensors came from NVML.
      if (res.contains("sensors") && res["sensors"].value("source", "") == "nvml") {
        ASSERT_TRUE(t.contains("clock")) << t.dump();
        EXPECT_GT(t["clock"]["sm_mhz_median"].get<double>(), 0) << t.dump();
      }
      ASSERT_TRUE(t.contains("kernel_median_s")) << t.dump();  // one kernel per launch: grouped
      EXPECT_NEAR(t["event_over_kernel"].get<double>(), 1.0, 0.02) << t.dump();
      // The same launches' kernel time is near the rounds' median (same GPU state).
      EXPECT_NEAR(t["kernel_median_s"].get<double>() / res["stats"]["median_s"].get<double>(), 1.0, 0.1) << t.dump();
    }
    test::remove_report(out);
  }
  std::remove(suite.c_str());
}

}  // namespace
}  // namespace harness
