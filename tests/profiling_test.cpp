// The profiling modules without a GPU (label cpu): NVTX names, kernel summaries and
// demangling, metric-name validation against the chip tables (host only), the derived
// roofline figures, JSON shapes, outside-tool detection and the no-device paths.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include <cuda_runtime_api.h>

#include "profile/device_peaks.hpp"
#include "profile/kernel_trace.hpp"
#include "profile/metrics.hpp"
#include "profile/nvtx.hpp"
#include "measure/measure.hpp"
#include "measure/traced_round.hpp"
#include "types/settings.hpp"
#include "test_support.hpp"

namespace {

using namespace harness;

using harness::test::have_device;

using harness::test::ScopedEnv;

// ---------------------------------------------------------------------------------------
// NVTX names

TEST(NvtxNames, SafeNamesHaveNoNcuSeparators) {
  EXPECT_EQ(nvtx_safe_name("gemm/tiled"), "gemm.tiled");
  EXPECT_EQ(nvtx_safe_name("a@b"), "a_b");
  EXPECT_EQ(nvtx_safe_name("x[1]*2"), "x(1)_2");
  EXPECT_EQ(nvtx_safe_name("  two\t\tblanks\n here  "), "two blanks here");
  EXPECT_EQ(nvtx_safe_name("gemm.tiled M=4096 N=4096 K=4096"), "gemm.tiled M=4096 N=4096 K=4096");
  EXPECT_EQ(nvtx_safe_name(""), "");
}

TEST(NvtxNames, CaseAndVariantNamesCarryTheParameters) {
  Params p;
  p.set("M", std::int64_t{4096});
  p.set("N", std::int64_t{4096});
  p.set("K", std::int64_t{4096});
  EXPECT_EQ(nvtx_variant_name("gemm", "tiled", p), "gemm.tiled M=4096 N=4096 K=4096");
  EXPECT_EQ(nvtx_case_name("square/big", "gemm", p), "square.big: gemm M=4096 N=4096 K=4096");
  EXPECT_EQ(nvtx_variant_name("stream", "cuda", Params{}), "stream.cuda");
}

TEST(NvtxNames, EveryPhaseHasANameAndAnOpaqueColour) {
  const std::pair<NvtxPhase, const char*> phases[] = {
      {NvtxPhase::suite, "suite"},     {NvtxPhase::case_, "case"},          {NvtxPhase::variant, "variant"},
      {NvtxPhase::check, "check"},     {NvtxPhase::warmup, "warmup"},       {NvtxPhase::timed, "timed"},
      {NvtxPhase::profile, "profile"}, {NvtxPhase::step, "step"},           {NvtxPhase::layer, "layer"},
      {NvtxPhase::forward, "forward"}, {NvtxPhase::backward, "backward"},   {NvtxPhase::optimizer, "optimizer"},
      {NvtxPhase::other, "other"}};
  for (const auto& [p, name] : phases) {
    EXPECT_EQ(to_string(p), name);
    EXPECT_EQ(nvtx_color(p) >> 24, 0xFFu) << name;
  }
  EXPECT_NE(nvtx_color(NvtxPhase::check), nvtx_color(NvtxPhase::timed));
}

// ---------------------------------------------------------------------------------------
// Kernel trace: names and summaries (no CUPTI involved)

TEST(KernelTrace, DisplayNamesDropReturnTypeAndParameters) {
  // void harness::peaks::(anonymous namespace)::fma_chains(float*, int, float, float)
  EXPECT_EQ(kernel_display_name("_ZN7harness5peaks12_GLOBAL__N_110fma_chainsEPfiff"),
            "harness::peaks::(anonymous namespace)::fma_chains");
  // void ns::tiled<32>(int, float const*)
  EXPECT_EQ(kernel_display_name("_ZN2ns5tiledILi32EEEviPKf"), "ns::tiled<32>");
  EXPECT_EQ(kernel_display_name("extern_c_kernel"), "extern_c_kernel");
}

KernelRecord rec(const std::string& mangled, std::uint64_t start, std::uint64_t end, int gx, int dyn = 0) {
  KernelRecord r;
  r.mangled = mangled;
  r.name = mangled + "_name";
  r.grid = {gx, 1, 1};
  r.block = {256, 1, 1};
  r.registers = 32;
  r.static_smem = 1024;
  r.dynamic_smem = dyn;
  r.start_ns = start;
  r.end_ns = end;
  return r;
}

TEST(KernelTrace, SummariesArePerKernelPerRunLargestFirst) {
  // Two runs of: a (100 ns), b (300 ns), a again with another grid (50 ns).
  std::vector<KernelRecord> r = {rec("a", 0, 100, 8),    rec("b", 100, 400, 4), rec("a", 400, 450, 16),
                                 rec("a", 1000, 1100, 8), rec("b", 1100, 1400, 4), rec("a", 1400, 1450, 16)};
  const auto s = KernelTrace::summarize(r, 2);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].mangled, "b");
  EXPECT_DOUBLE_EQ(s[0].calls, 1);
  EXPECT_DOUBLE_EQ(s[0].total_ns, 300);
  EXPECT_EQ(s[0].configs, 1);
  EXPECT_EQ(s[1].mangled, "a");
  EXPECT_EQ(s[1].name, "a_name");
  EXPECT_DOUBLE_EQ(s[1].calls, 2);
  EXPECT_DOUBLE_EQ(s[1].total_ns, 150);
  EXPECT_DOUBLE_EQ(s[1].min_ns, 50);
  EXPECT_DOUBLE_EQ(s[1].max_ns, 100);
  EXPECT_EQ(s[1].grid[0], 8);  // the first launch's
  EXPECT_EQ(s[1].configs, 2);
  EXPECT_EQ(s[1].registers, 32);
  EXPECT_EQ(s[1].static_smem, 1024);
}

TEST(KernelTrace, BreakdownJson) {
  KernelBreakdown b;
  b.runs = 2;
  b.kernels = KernelTrace::summarize({rec("a", 0, 1000, 8, 4096)}, 1);
  b.kernel_time_s = 1e-6;
  const auto j = to_json(b);
  ASSERT_EQ(j["kernels"].size(), 1u);
  EXPECT_EQ(j["kernels"][0]["name"], "a_name");
  EXPECT_EQ(j["kernels"][0]["grid"], nlohmann::json({8, 1, 1}));
  EXPECT_EQ(j["kernels"][0]["dynamic_smem_bytes"], 4096);
  EXPECT_DOUBLE_EQ(j["kernels"][0]["time_s"].get<double>(), 1e-6);
  EXPECT_DOUBLE_EQ(j["kernel_time_s"].get<double>(), 1e-6);
  KernelBreakdown u;
  u.unavailable = "kernel trace unavailable: no CUDA device";
  EXPECT_EQ(to_json(u), nlohmann::json({{"unavailable", "kernel trace unavailable: no CUDA device"}}));
}

// The traced round of a result timed in rounds (measure/traced_round.hpp): the flush's
// kernels are taken out, the rest cut into one group per launch in GPU order.
TEST(TracedRound, KernelsGroupPerLaunchWithoutTheFlush) {
  TracedLaunches t;
  t.launches = 2;
  t.event_s = {1.1e-6, 1.3e-6};
  // Records out of order: flush, a (600 ns), b (400 ns) per launch.
  assign_kernels(t, {rec("b", 1600, 2000, 1), rec("flush", 0, 500, 1), rec("a", 500, 1100, 1), rec("flush", 2000, 2500, 1),
                     rec("a", 2500, 3100, 1), rec("b", 3100, 3500, 1)},
                 {"flush"});
  ASSERT_EQ(t.kernel_s.size(), 2u);
  EXPECT_NEAR(t.kernel_s[0], 1.0e-6, 1e-15);  // a + b, not the flush
  EXPECT_NEAR(t.kernel_s[1], 1.0e-6, 1e-15);
  EXPECT_NEAR(t.kernel_total_s, 2.0e-6, 1e-15);
  auto j = to_json(t);
  EXPECT_EQ(j["launches"], 2);
  EXPECT_NEAR(j["event_median_s"].get<double>(), 1.2e-6, 1e-15);
  EXPECT_NEAR(j["kernel_median_s"].get<double>(), 1.0e-6, 1e-15);
  EXPECT_NEAR(j["event_over_kernel"].get<double>(), 1.2, 1e-9);
  // Records that do not divide into the launches: the mean only.
  assign_kernels(t, {rec("a", 0, 600, 1), rec("a", 700, 1300, 1), rec("b", 1300, 1700, 1)}, {});
  EXPECT_TRUE(t.kernel_s.empty());
  j = to_json(t);
  EXPECT_FALSE(j.contains("kernel_median_s"));
  EXPECT_NEAR(j["kernel_mean_s"].get<double>(), 0.8e-6, 1e-15);
  EXPECT_FALSE(j.contains("clock"));  // none recorded
  t.sm_mhz_median = 1650;
  t.clock_samples = 9;
  j = to_json(t);
  EXPECT_EQ(j["clock"], nlohmann::json({{"source", "nvml"}, {"during", "traced launches"}, {"samples", 9},
                                        {"sm_mhz_median", 1650.0}}));
  TracedLaunches u;
  u.unavailable = "kernel trace unavailable: no CUDA device";
  EXPECT_EQ(to_json(u), nlohmann::json({{"unavailable", "kernel trace unavailable: no CUDA device"}}));
}

// A traced round is as long as one of the result's timed batches (about 50 ms of launches,
// at most 256), and never shorter than kTracedRoundLaunches launches.
TEST(TracedRound, LastsAsLongAsATimedBatch) {
  EXPECT_EQ(traced_round_launches(1e-3), 50);             // 50 x 1 ms
  EXPECT_EQ(traced_round_launches(200e-6), 250);          // 250 x 200 us
  EXPECT_EQ(traced_round_launches(1e-6), 256);            // the batch's cap
  EXPECT_EQ(traced_round_launches(4e-3), 12);            // 12 x 4 ms
  EXPECT_EQ(traced_round_launches(10e-3), kTracedRoundLaunches);  // a batch of 5; at least 10
  EXPECT_EQ(traced_round_launches(0), kTracedRoundLaunches);      // nothing to size it from
  EXPECT_EQ(batch_launches(1e-3), 50u);
}

// ---------------------------------------------------------------------------------------
// Outside tools and missing devices

TEST(OutsideTool, NsightComputeSystemsAndInjectionToolsAreDetected) {
  ScopedEnv a("NV_NSIGHT_INJECTION_TRANSPORT_TYPE", nullptr), b("NSYS_PROFILING_SESSION_ID", nullptr),
      c("CUDA_INJECTION64_PATH", nullptr), d("HARNESS_CUPTI_IGNORE_OUTSIDE_TOOL", nullptr);
  EXPECT_FALSE(outside_profiler());
  {
    ScopedEnv e("CUDA_INJECTION64_PATH", "/opt/tool/libinject.so");
    ASSERT_TRUE(outside_profiler());
    EXPECT_NE(outside_profiler()->find("CUDA_INJECTION64_PATH=/opt/tool/libinject.so"), std::string::npos);
  }
  {
    ScopedEnv e("NSYS_PROFILING_SESSION_ID", "7");
    ASSERT_TRUE(outside_profiler());
    EXPECT_NE(outside_profiler()->find("Nsight Systems"), std::string::npos);
    ScopedEnv f("HARNESS_CUPTI_IGNORE_OUTSIDE_TOOL", "1");
    EXPECT_FALSE(outside_profiler());
  }
  {
    ScopedEnv e("NV_NSIGHT_INJECTION_TRANSPORT_TYPE", "2");
    ASSERT_TRUE(outside_profiler());
    EXPECT_NE(outside_profiler()->find("Nsight Compute"), std::string::npos);
  }
}

TEST(NoDevice, EveryProfilingPathSaysNoCudaDevice) {
  if (have_device()) GTEST_SKIP() << "a CUDA device is present (the no-device paths are not taken)";
  ASSERT_TRUE(KernelTrace::unavailable_reason());
  EXPECT_EQ(KernelTrace::unavailable_reason()->rfind("no CUDA device", 0), 0u) << *KernelTrace::unavailable_reason();
  ASSERT_TRUE(MetricCollector::unavailable_reason());
  EXPECT_EQ(MetricCollector::unavailable_reason()->rfind("no CUDA device", 0), 0u);

  bool launched = false;
  const auto b = KernelTrace::trace([&] { launched = true; }, nullptr, 3);
  ASSERT_TRUE(b.unavailable);
  EXPECT_EQ(b.unavailable->rfind("kernel trace unavailable: no CUDA device", 0), 0u) << *b.unavailable;

  MetricCollector collector(0);
  const auto m = collector.collect([&] { launched = true; }, nullptr, MetricCollector::default_metrics());
  ASSERT_TRUE(m.unavailable);
  EXPECT_EQ(m.unavailable->rfind("metrics unavailable: no CUDA device", 0), 0u) << *m.unavailable;
  EXPECT_TRUE(m.values.empty());
  EXPECT_FALSE(launched);

  const DevicePeaks peaks = measure_device_peaks(0);
  ASSERT_TRUE(peaks.unavailable);
  EXPECT_EQ(peaks.unavailable->rfind("device peaks unavailable: no CUDA device", 0), 0u);
  EXPECT_FALSE(peaks.measured());
  EXPECT_EQ(to_json(peaks)["unavailable"], *peaks.unavailable);

  ProfileOptions options;
  const auto p = profile_pass(collector, [&] { launched = true; }, nullptr, options, Work{2e9, 1e9}, 1e-3, nullptr);
  EXPECT_TRUE(p.kernels.unavailable);
  EXPECT_TRUE(p.metrics.unavailable);
  EXPECT_FALSE(p.roofline);
  EXPECT_FALSE(launched);
  const auto j = to_json(p);
  EXPECT_TRUE(j["kernels"].contains("unavailable"));
  EXPECT_TRUE(j["metrics"].contains("unavailable"));
  EXPECT_TRUE(j["roofline"].is_null());
}

// ---------------------------------------------------------------------------------------
// Metric names, checked against the chip's tables on the host

TEST(MetricNames, TheDefaultSetIsValidOnGH100) {
  EXPECT_EQ(MetricCollector::default_metrics().size(), 8u);
  const auto why = MetricCollector::validate(MetricCollector::default_metrics(), "GH100");
  EXPECT_FALSE(why) << *why;
}

TEST(MetricNames, TheDefaultChipIsGH100WithoutADeviceAndCanBeOverridden) {
  {
    ScopedEnv e("HARNESS_METRICS_CHIP", "GA100");
    EXPECT_EQ(MetricCollector::default_chip(), "GA100");
  }
  if (!have_device()) {
    EXPECT_EQ(MetricCollector::default_chip(), "GH100");
  }
  EXPECT_FALSE(MetricCollector::validate(MetricCollector::default_metrics()));
}

TEST(MetricNames, AMisspeltMetricIsAnErrorWithASuggestion) {
  const auto why = MetricCollector::validate_metric("dram__bytes_reed.sum", "GH100");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("unknown metric 'dram__bytes_reed.sum'"), std::string::npos) << *why;
  EXPECT_NE(why->find("GH100"), std::string::npos) << *why;
  EXPECT_NE(why->find("did you mean 'dram__bytes_read.sum'?"), std::string::npos) << *why;
}

TEST(MetricNames, AnUnknownSubmetricIsAnErrorWithASuggestion) {
  const auto why = MetricCollector::validate_metric("dram__bytes_read.summ", "GH100");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("has no submetric '.summ'"), std::string::npos) << *why;
  EXPECT_NE(why->find("did you mean 'dram__bytes_read.sum'?"), std::string::npos) << *why;
}

TEST(MetricNames, ABareCounterNeedsARollup) {
  const auto why = MetricCollector::validate_metric("dram__bytes_read", "GH100");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("needs a rollup"), std::string::npos) << *why;
  EXPECT_NE(why->find("dram__bytes_read.sum"), std::string::npos) << *why;
}

TEST(MetricNames, NonsenseEmptyAndBlankNamesAreErrors) {
  const auto nonsense = MetricCollector::validate_metric("zzzz_not_a_metric", "GH100");
  ASSERT_TRUE(nonsense);
  EXPECT_NE(nonsense->find("unknown metric 'zzzz_not_a_metric'"), std::string::npos) << *nonsense;
  EXPECT_TRUE(MetricCollector::validate_metric("", "GH100"));
  EXPECT_TRUE(MetricCollector::validate_metric(" dram__bytes_read.sum", "GH100"));
  // The first bad name of a list is the one reported.
  const auto first = MetricCollector::validate({"gpu__time_duration.sum", "bogus__x.sum", "nope.sum"}, "GH100");
  ASSERT_TRUE(first);
  EXPECT_NE(first->find("bogus__x.sum"), std::string::npos) << *first;
}

TEST(MetricNames, OtherUsefulMetricsAreValid) {
  for (const char* m : {"dram__throughput.avg.pct_of_peak_sustained_elapsed", "smsp__inst_executed.sum",
                        "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
                        "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", "dram__bytes_read.sum.per_second",
                        "sm__cycles_elapsed.avg.per_second"})
    EXPECT_FALSE(MetricCollector::validate_metric(m, "GH100")) << m;
}

TEST(MetricNames, AnUnknownChipIsReported) {
  const auto why = MetricCollector::validate_metric("dram__bytes_read.sum", "XX999");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("cannot check metric names for chip 'XX999'"), std::string::npos) << *why;
}

// ---------------------------------------------------------------------------------------
// Derived figures

MetricsResult metrics(std::initializer_list<std::pair<const char*, double>> values) {
  MetricsResult m;
  m.chip = "GH100";
  m.passes = 1;
  for (const auto& [n, v] : values) m.values.push_back({n, v, ""});
  return m;
}

DevicePeaks peaks(double gbs, double gflops) {
  DevicePeaks p;
  p.dram_gbytes_per_s = gbs;
  p.fp32_gflops = gflops;
  return p;
}

TEST(Roofline, AMemoryBoundCopy) {
  // 1 GB read + 1 GB written in 1 ms, no FLOPs: 2000 GB/s against a 3000 GB/s peak.
  const auto m = metrics({{"dram__bytes_read.sum", 1e9}, {"dram__bytes_write.sum", 1e9},
                          {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 0}});
  const auto pk = peaks(3000, 60000);
  const Roofline r = derive_roofline(m, Work{0, 2e9}, 1e-3, &pk);
  ASSERT_TRUE(r.dram_bytes);
  EXPECT_DOUBLE_EQ(*r.dram_bytes, 2e9);
  EXPECT_DOUBLE_EQ(*r.dram_bytes_vs_model, 1.0);
  EXPECT_DOUBLE_EQ(*r.achieved_dram_gbytes_per_s, 2000);
  EXPECT_DOUBLE_EQ(*r.flops, 0);
  EXPECT_FALSE(r.flops_vs_model);  // no FLOPs in the model
  EXPECT_EQ(r.bound, "memory");
  EXPECT_NEAR(*r.pct_of_roof, 100.0 * 2000 / 3000, 1e-9);
  EXPECT_NEAR(*r.pct_of_dram_peak, 100.0 * 2000 / 3000, 1e-9);
  EXPECT_DOUBLE_EQ(*r.roof_gflops, 0);
  EXPECT_DOUBLE_EQ(*r.ridge_intensity, 20);
}

TEST(Roofline, AComputeBoundGemmWithExactFfmaCount) {
  // 4096^3 GEMM: 2*4096^3 FLOPs from exactly 4096^3 FFMAs, 200 MB of DRAM traffic, 5 ms.
  const double n3 = 4096.0 * 4096.0 * 4096.0;
  const auto m = metrics({{"gpu__time_duration.sum", 5.5e6}, {"dram__bytes_read.sum", 1.5e8},
                          {"dram__bytes_write.sum", 0.5e8}, {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", n3}});
  const auto pk = peaks(3000, 60000);
  const Roofline r = derive_roofline(m, Work{2 * n3, 3 * 4096.0 * 4096.0 * 4}, 5e-3, &pk);
  EXPECT_DOUBLE_EQ(*r.flops, 2 * n3);
  EXPECT_DOUBLE_EQ(*r.flops_vs_model, 1.0);
  EXPECT_EQ(r.flops_from, std::vector<std::string>{"ffma"});
  EXPECT_NEAR(r.achieved_gflops, 2 * n3 / 5e-3 * 1e-9, 1e-6);
  EXPECT_NEAR(r.intensity, 2 * n3 / 2e8, 1e-6);
  EXPECT_EQ(r.bound, "compute");
  EXPECT_DOUBLE_EQ(*r.roof_gflops, 60000);
  EXPECT_NEAR(*r.pct_of_roof, 100.0 * r.achieved_gflops / 60000, 1e-9);
  EXPECT_DOUBLE_EQ(r.time_s, 5e-3);
}

TEST(Roofline, ABf16ResultIsJudgedAgainstTheBf16TensorPeak) {
  auto pk = peaks(3000, 60000);
  pk.tensor.push_back({"bf16", 800000, 790000});
  pk.tensor.push_back({"fp8_e4m3", 1600000, 1590000});
  EXPECT_EQ(pk.compute_peak("bf16").pipe, "bf16 tensor");
  EXPECT_EQ(pk.compute_peak("fp8_e5m2").gflops, 1600000);  // e5m2 at e4m3's rate
  EXPECT_EQ(pk.compute_peak("f32").pipe, "fp32");
  EXPECT_EQ(pk.compute_peak("").gflops, 60000);
  // 4096^3 in 0.5 ms: 275 TFLOP/s, 34% of 800 TFLOP/s (and 458% of FP32's roof).
  const double n3 = 4096.0 * 4096.0 * 4096.0;
  const Roofline r = derive_roofline(MetricsResult{}, Work{2 * n3, 3 * 4096.0 * 4096.0 * 2}, 5e-4, &pk, "bf16");
  EXPECT_EQ(r.bound, "compute");
  EXPECT_EQ(r.compute_pipe, "bf16 tensor");
  EXPECT_NEAR(*r.pct_of_roof, 100.0 * r.achieved_gflops / 800000, 1e-9);
  EXPECT_NEAR(*r.pct_of_fp32_peak, 100.0 * r.achieved_gflops / 60000, 1e-9);
  const auto j = to_json(r);
  EXPECT_EQ(j["compute_pipe"], "bf16 tensor");
  EXPECT_DOUBLE_EQ(j["compute_peak_gflops"].get<double>(), 800000);
}

// The gemm problem's `dtype: fp8_e4m3` (its parameter value, as dtype_param reads it) is
// judged against the fp8 tensor peak, not bf16's or FP32's.
TEST(Roofline, AnFp8GemmResultIsJudgedAgainstTheFp8TensorPeak) {
  auto pk = peaks(3000, 60000);
  pk.tensor.push_back({"bf16", 800000, 790000});
  pk.tensor.push_back({"fp8_e4m3", 1600000, 1590000});
  harness::Params params;
  params.set("dtype", std::string("fp8_e4m3"));
  const std::string dtype = harness::dtype_param(params);
  EXPECT_EQ(pk.compute_peak(dtype).pipe, "fp8_e4m3 tensor");
  EXPECT_TRUE(harness::steady_by_default(params));
  const double n3 = 4096.0 * 4096.0 * 4096.0;
  const Roofline r = derive_roofline(MetricsResult{}, Work{2 * n3, 2 * 4096.0 * 4096.0 + 2 * 4096.0 * 4096.0}, 2e-4,
                                     &pk, dtype);
  EXPECT_EQ(r.compute_pipe, "fp8_e4m3 tensor");
  EXPECT_NEAR(*r.pct_of_roof, 100.0 * r.achieved_gflops / 1600000, 1e-9);
}

TEST(Roofline, WithoutPeaksOrTimeTheCountersStillCompare) {
  const auto m = metrics({{"gpu__time_duration.sum", 2e6}, {"dram__bytes_read.sum", 3e9}, {"dram__bytes_write.sum", 1e9},
                          {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 1e9},
                          {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 5e8}});
  const Roofline r = derive_roofline(m, Work{2e9, 4e9}, 0, nullptr);
  EXPECT_DOUBLE_EQ(r.time_s, 2e-3);  // from gpu__time_duration.sum
  EXPECT_DOUBLE_EQ(*r.flops, 2.5e9);
  EXPECT_EQ(r.flops_from, (std::vector<std::string>{"ffma", "fadd"}));
  EXPECT_DOUBLE_EQ(*r.flops_vs_model, 1.25);
  EXPECT_DOUBLE_EQ(*r.achieved_dram_gbytes_per_s, 2000);
  EXPECT_TRUE(r.bound.empty());
  EXPECT_FALSE(r.pct_of_roof);
  const auto j = to_json(r);
  EXPECT_TRUE(j["bound"].is_null());
  EXPECT_DOUBLE_EQ(j["dram_bytes"].get<double>(), 4e9);
}

TEST(Roofline, MissingCountersStayMissing) {
  const Roofline r = derive_roofline(MetricsResult{}, Work{1e9, 1e9}, 1e-3, nullptr);
  EXPECT_FALSE(r.dram_bytes);
  EXPECT_FALSE(r.flops);
  EXPECT_FALSE(r.achieved_dram_gbytes_per_s);
  EXPECT_DOUBLE_EQ(r.intensity, 1.0);  // the model's bytes
  EXPECT_DOUBLE_EQ(r.achieved_gflops, 1000);
}

TEST(Metrics, ResultJson) {
  MetricsResult m = metrics({{"dram__bytes_read.sum", 42}});
  m.values[0].unit = "byte";
  m.passes = 3;
  const auto j = to_json(m);
  EXPECT_EQ(j["chip"], "GH100");
  EXPECT_EQ(j["passes"], 3);
  EXPECT_EQ(j["values"]["dram__bytes_read.sum"], 42.0);
  EXPECT_EQ(j["units"]["dram__bytes_read.sum"], "byte");
  EXPECT_EQ(*m.get("dram__bytes_read.sum"), 42.0);
  EXPECT_FALSE(m.get("nope"));
  MetricsResult u;
  u.unavailable = "metrics unavailable: x";
  EXPECT_EQ(to_json(u), nlohmann::json({{"unavailable", "metrics unavailable: x"}}));
}

TEST(Metrics, JsonRoundTrips) {
  MetricsResult m = metrics({{"dram__bytes_read.sum", 42}, {"gpu__time_duration.sum", 7}});
  m.values[0].unit = "byte";
  const MetricsResult back = metrics_from_json(to_json(m));
  EXPECT_FALSE(back.unavailable);
  EXPECT_EQ(back.chip, "GH100");
  EXPECT_EQ(*back.get("dram__bytes_read.sum"), 42.0);
  EXPECT_EQ(*back.get("gpu__time_duration.sum"), 7.0);
  EXPECT_EQ(back.values.size(), 2u);
  EXPECT_TRUE(metrics_from_json(nlohmann::json::array()).unavailable);
  EXPECT_EQ(*metrics_from_json({{"unavailable", "metrics unavailable: x"}}).unavailable, "metrics unavailable: x");

  DevicePeaks p = peaks(3000, 60000);
  p.runs = 10;
  p.tensor.push_back({"bf16", 800000, 790000});
  p.tensor_note = "no tensor-core peak kernel for fp8_e4m3 on compute capability 8.0";
  const DevicePeaks q = device_peaks_from_json(to_json(p));
  ASSERT_EQ(q.tensor.size(), 1u);
  EXPECT_EQ(q.tensor[0].dtype, "bf16");
  EXPECT_DOUBLE_EQ(q.tensor[0].gflops_median, 790000);
  EXPECT_EQ(q.tensor_note, p.tensor_note);
  EXPECT_TRUE(q.measured());
  EXPECT_DOUBLE_EQ(q.dram_gbytes_per_s, 3000);
  EXPECT_DOUBLE_EQ(q.fp32_gflops, 60000);
  EXPECT_EQ(q.runs, 10);
  EXPECT_FALSE(device_peaks_from_json(nlohmann::json{{"dram_gbytes_per_s", "x"}}).measured());
}

}  // namespace
