// Profiling on a real GPU (label gpu; skipped where no device exists):
//  - the FFMA counter counts exactly the FFMAs a kernel executes (the peaks FMA kernel,
//    and gemm/naive at M=N=K=256: M*N*K);
//  - DRAM bytes read by streaming kernels are within 10% of the model;
//  - the kernel trace names every kernel of multi-kernel launches;
//  - device peaks are plausible; an outside tool makes the harness skip its CUPTI work.
// Counters can be unavailable for environmental reasons (no permission, an outside tool,
// an unsupported GPU): such tests skip with the reason; any other CUPTI failure fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>

#include <cuda_runtime_api.h>

#include "measure/l2_flush.hpp"
#include "profile/device_peaks.hpp"
#include "harness/cuda_check.hpp"
#include "harness/registry.hpp"
#include "harness/workspace.hpp"
#include "profile/kernel_trace.hpp"
#include "profile/metrics.hpp"
#include "profile/peaks.hpp"
#include "test_support.hpp"

namespace {

using namespace harness;

constexpr const char* kFfma = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum";

using harness::test::have_device;

#define REQUIRE_DEVICE() \
  if (!have_device()) GTEST_SKIP() << "no CUDA device"

// Environmental reasons skip; anything else is a bug in the collection.
bool environmental(const std::string& why) {
  for (const char* s : {"INSUFFICIENT_PRIVILEGES", "is held by", "does not support counter collection",
                        "VIRTUALIZED_DEVICE", "CMP_DEVICE", "NOT_SUPPORTED"})
    if (why.find(s) != std::string::npos) return true;
  return false;
}

#define REQUIRE_VALUES(m)                                                          \
  do {                                                                             \
    if ((m).unavailable) {                                                         \
      if (environmental(*(m).unavailable)) GTEST_SKIP() << *(m).unavailable;       \
      FAIL() << *(m).unavailable;                                                  \
    }                                                                              \
  } while (0)

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { HARNESS_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~Stream() { HARNESS_CUDA_NOTHROW(cudaStreamDestroy(s)); }
};

template <class T>
struct Device {
  T* p = nullptr;
  explicit Device(std::size_t n) { HARNESS_CUDA(cudaMalloc(reinterpret_cast<void**>(&p), n * sizeof(T))); }
  ~Device() { HARNESS_CUDA_NOTHROW(cudaFree(p)); }
};

// A registered variant, ready to launch on `stream`; null when the plugin is not built in.
struct Prepared {
  const Problem* problem = nullptr;
  const Variant* variant = nullptr;
  Params params;
  std::unique_ptr<Instance> instance;
  Workspace workspace;
  LaunchContext ctx;
  std::string skip;
  void launch() { harness::launch_on(*variant, *instance, ctx); }
};

std::unique_ptr<Prepared> prepare(const char* problem, const char* variant, const Params& given, cudaStream_t stream) {
  auto p = std::make_unique<Prepared>();
  const Registry& reg = Registry::instance();
  p->problem = reg.find_problem(problem);
  p->variant = reg.find_variant(problem, variant);
  if (!p->problem || !p->variant) {
    p->skip = std::string(problem) + "/" + variant + " is not registered in this build";
    return p;
  }
  p->params = with_defaults(p->problem->params(), given);
  if (p->variant->constraint)
    if (auto why = p->variant->constraint(p->params)) {
      p->skip = *why;
      return p;
    }
  p->instance = p->problem->make_instance(p->params, 42);
  p->instance->prepare(Backend::cuda);
  p->instance->reset_outputs(Backend::cuda, stream);
  p->ctx = LaunchContext{stream, &p->workspace, &p->params};
  return p;
}

Params params(std::initializer_list<std::pair<const char*, ParamValue>> values) {
  Params p;
  for (const auto& [k, v] : values) p.set(k, v);
  return p;
}

bool has_kernel(const KernelBreakdown& b, const std::string& part) {
  return std::any_of(b.kernels.begin(), b.kernels.end(), [&](const KernelSummary& k) { return k.name.find(part) != std::string::npos; });
}

// ---------------------------------------------------------------------------------------
// Exact FFMA counts

TEST(MetricsGpu, FfmaCountOfTheFmaKernelIsExact) {
  REQUIRE_DEVICE();
  Stream stream;
  const harness::peaks::FmaShape shape{3, 96, 1001};
  Device<float> out(static_cast<std::size_t>(shape.blocks) * shape.threads);
  MetricCollector collector(0);
  // The whole default set (several passes), so replay is exercised too.
  const auto m = collector.collect([&] { HARNESS_CUDA(harness::peaks::fma(out.p, shape, 0.999f, 1e-3f, stream.s)); },
                                   stream.s, MetricCollector::default_metrics());
  REQUIRE_VALUES(m);
  ASSERT_EQ(m.values.size(), MetricCollector::default_metrics().size());
  ASSERT_TRUE(m.get(kFfma));
  EXPECT_EQ(*m.get(kFfma), static_cast<double>(harness::peaks::fma_count(shape)));
  EXPECT_GT(*m.get("gpu__time_duration.sum"), 0);
  EXPECT_GE(m.passes, 1u);
  // CUPTI's chip name is of the device's architecture family (GH100 on H100 / H200), the
  // family default_chip() derives from the compute capability.
  EXPECT_EQ(m.chip.substr(0, 2), MetricCollector::default_chip().substr(0, 2)) << m.chip;
  std::printf("chip %s, %zu passes, ffma %.0f (expected %llu)\n", m.chip.c_str(), m.passes, *m.get(kFfma),
              static_cast<unsigned long long>(harness::peaks::fma_count(shape)));
  for (const auto& v : m.values) std::printf("  %-66s %16.3f %s\n", v.name.c_str(), v.value, v.unit.c_str());
}

TEST(MetricsGpu, GemmNaiveExecutesExactlyMNKFfmas) {
  REQUIRE_DEVICE();
  Stream stream;
  auto g = prepare("gemm", "naive", params({{"M", std::int64_t{256}}, {"N", std::int64_t{256}}, {"K", std::int64_t{256}}}), stream.s);
  if (!g->skip.empty()) GTEST_SKIP() << g->skip;
  MetricCollector collector(0);
  const auto m = collector.collect([&] { g->launch(); }, stream.s, {kFfma, "gpu__time_duration.sum"});
  REQUIRE_VALUES(m);
  EXPECT_EQ(*m.get(kFfma), 256.0 * 256.0 * 256.0);
}

// ---------------------------------------------------------------------------------------
// DRAM bytes against the model

TEST(MetricsGpu, DramBytesOfACopyAreWithinTenPercentOfTheModel) {
  REQUIRE_DEVICE();
  Stream stream;
  const std::size_t n = std::size_t{1} << 26;  // 256 MiB per buffer: far beyond any L2
  Device<float> in(n), out(n);
  HARNESS_CUDA(cudaMemset(in.p, 0, n * sizeof(float)));
  L2Flusher evictor;
  MetricCollector collector(0);
  const auto m = collector.collect([&] { HARNESS_CUDA(harness::peaks::copy(in.p, out.p, n, stream.s)); }, stream.s,
                                   {"dram__bytes_read.sum", "dram__bytes_write.sum"}, [&] { evictor.flush(stream.s); });
  REQUIRE_VALUES(m);
  const double model = static_cast<double>(n * sizeof(float));
  std::printf("read %.0f, written %.0f, model %.0f each\n", *m.get("dram__bytes_read.sum"), *m.get("dram__bytes_write.sum"), model);
  EXPECT_NEAR(*m.get("dram__bytes_read.sum") / model, 1.0, 0.10);
  EXPECT_NEAR(*m.get("dram__bytes_write.sum") / model, 1.0, 0.10);
}

TEST(MetricsGpu, DramBytesReadOfStreamCopyAreWithinTenPercentOfTheModel) {
  REQUIRE_DEVICE();
  Stream stream;
  const std::int64_t n = std::int64_t{1} << 26;
  auto s = prepare("stream", "cuda", params({{"op", std::string("copy")}, {"n", n}}), stream.s);
  if (!s->skip.empty()) GTEST_SKIP() << s->skip;
  L2Flusher evictor;
  MetricCollector collector(0);
  const auto m = collector.collect([&] { s->launch(); }, stream.s, MetricCollector::default_metrics(),
                                   [&] { evictor.flush(stream.s); });
  REQUIRE_VALUES(m);
  const double read_model = 4.0 * static_cast<double>(n);  // copy reads x once
  EXPECT_NEAR(*m.get("dram__bytes_read.sum") / read_model, 1.0, 0.10);
  const Roofline r = derive_roofline(m, s->problem->work(s->params), 0, nullptr);
  ASSERT_TRUE(r.dram_bytes_vs_model);
  EXPECT_NEAR(*r.dram_bytes_vs_model, 1.0, 0.10);
}

// ---------------------------------------------------------------------------------------
// Kernel breakdown

TEST(KernelTraceGpu, NamesEveryKernelOfAMultiKernelLaunch) {
  REQUIRE_DEVICE();
  if (auto why = KernelTrace::unavailable_reason()) {
    if (environmental(*why)) GTEST_SKIP() << *why;
    FAIL() << *why;
  }
  Stream stream;
  const std::size_t n = 1000003;  // a float4 body and a scalar tail: two copy kernels
  Device<float> in(n), out(n);
  const harness::peaks::FmaShape shape{5, 64, 100};
  Device<float> sink(static_cast<std::size_t>(shape.blocks) * shape.threads);
  const auto b = KernelTrace::trace(
      [&] {
        HARNESS_CUDA(harness::peaks::copy(in.p, out.p, n, stream.s));
        HARNESS_CUDA(harness::peaks::fma(sink.p, shape, 0.5f, 0.5f, stream.s));
      },
      stream.s, 3);
  ASSERT_FALSE(b.unavailable) << *b.unavailable;
  ASSERT_EQ(b.kernels.size(), 3u);
  EXPECT_TRUE(has_kernel(b, "copy_vec4"));
  EXPECT_TRUE(has_kernel(b, "copy_scalar"));
  EXPECT_TRUE(has_kernel(b, "fma_chains"));
  for (const auto& k : b.kernels) {
    std::printf("  %-60s calls %.1f  %.3f us  grid (%d,%d,%d) block (%d,%d,%d) regs %d smem %d+%d\n", k.name.c_str(), k.calls,
                k.total_ns * 1e-3, k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2], k.registers,
                k.static_smem, k.dynamic_smem);
    EXPECT_DOUBLE_EQ(k.calls, 1.0) << k.name;
    EXPECT_GT(k.total_ns, 0) << k.name;
    EXPECT_GT(k.registers, 0) << k.name;
    if (k.name.find("fma_chains") != std::string::npos) {
      EXPECT_EQ(k.grid, (std::array<int, 3>{5, 1, 1}));
      EXPECT_EQ(k.block, (std::array<int, 3>{64, 1, 1}));
    }
  }
  EXPECT_EQ(b.runs, 3);
  EXPECT_GT(b.kernel_time_s, 0);
  EXPECT_EQ(b.dropped, 0u);
}

TEST(KernelTraceGpu, NamesEveryKernelOfAtomicGemmAndNaiveAttention) {
  REQUIRE_DEVICE();
  if (auto why = KernelTrace::unavailable_reason()) GTEST_SKIP() << *why;
  Stream stream;
  int checked = 0;
  {
    auto g = prepare("gemm", "atomic", params({{"M", std::int64_t{512}}, {"N", std::int64_t{512}}, {"K", std::int64_t{2048}}}), stream.s);
    if (g->skip.empty()) {
      const auto b = KernelTrace::trace([&] { g->launch(); }, stream.s, 2);
      ASSERT_FALSE(b.unavailable) << *b.unavailable;
      for (const auto& k : b.kernels) std::printf("  gemm/atomic: %s x%.0f\n", k.name.c_str(), k.calls);
      EXPECT_GE(b.kernels.size(), 2u) << "split-K: a scale kernel and the tiled kernel";
      auto traced = [&](const std::string& kernel) {
        return std::any_of(b.kernels.begin(), b.kernels.end(),
                           [&](const auto& k) { return k.name.find(kernel) != std::string::npos; });
      };
      EXPECT_TRUE(traced("scale_kernel")) << "the beta*C pass of kernels/gemm gemm_atomic";
      EXPECT_TRUE(traced("tiled_kernel")) << "the split-K tiles of kernels/gemm gemm_atomic";
      ++checked;
    }
  }
  {
    auto a = prepare("attention", "naive",
                     params({{"batch", std::int64_t{1}}, {"heads", std::int64_t{2}}, {"seq_len", std::int64_t{256}}, {"head_dim", std::int64_t{64}}}),
                     stream.s);
    if (a->skip.empty()) {
      const auto b = KernelTrace::trace([&] { a->launch(); }, stream.s, 2);
      ASSERT_FALSE(b.unavailable) << *b.unavailable;
      for (const auto& k : b.kernels) std::printf("  attention/naive: %s x%.0f\n", k.name.c_str(), k.calls);
      EXPECT_GE(b.kernels.size(), 2u) << "S = QK^T, softmax, O = PV";
      ++checked;
    }
  }
  if (checked == 0) GTEST_SKIP() << "neither gemm/atomic nor attention/naive is registered in this build";
}

// ---------------------------------------------------------------------------------------
// Peaks, the whole pass, outside tools

TEST(DevicePeaksGpu, ArePlausible) {
  REQUIRE_DEVICE();
  const DevicePeaks p = measure_device_peaks(0);
  ASSERT_TRUE(p.measured()) << p.unavailable.value_or("?");
  std::printf("DRAM %.0f GB/s (median %.0f, theoretical %.0f), FP32 %.0f GFLOP/s (median %.0f), %.2f s\n",
              p.dram_gbytes_per_s, p.dram_gbytes_per_s_median, p.dram_theoretical_gbytes_per_s, p.fp32_gflops,
              p.fp32_gflops_median, p.seconds);
  EXPECT_GT(p.dram_gbytes_per_s, 100);
  EXPECT_GT(p.fp32_gflops, 1000);
  if (p.dram_theoretical_gbytes_per_s > 0) {
    EXPECT_LE(p.dram_gbytes_per_s, 1.02 * p.dram_theoretical_gbytes_per_s);
  }
  EXPECT_LT(p.seconds, 10);
  // Tensor-core roofs: on sm_80+ each measured one is well above the FP32 roof, and the
  // 16-bit ones are about twice tf32's; on sm_90 every type is measured (fp8 ~2x bf16).
  int major = 0, minor = 0;
  HARNESS_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  HARNESS_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  for (const auto& t : p.tensor) {
    std::printf("%s tensor %.0f GFLOP/s (median %.0f)\n", t.dtype.c_str(), t.gflops, t.gflops_median);
    EXPECT_GT(t.gflops, 2 * p.fp32_gflops) << t.dtype;
  }
  if (major >= 8) {
    EXPECT_EQ(p.compute_peak("bf16").pipe, "bf16 tensor");
    EXPECT_GT(p.compute_peak("bf16").gflops, 1.6 * p.compute_peak("tf32").gflops);
  }
  if (major == 9 && minor == 0) {
    EXPECT_EQ(p.tensor.size(), 4u) << p.tensor_note;
    EXPECT_GT(p.compute_peak("fp8_e4m3").gflops, 1.6 * p.compute_peak("bf16").gflops);
  }
}

TEST(ProfilePassGpu, CopyIsMemoryBoundWithModelledBytes) {
  REQUIRE_DEVICE();
  Stream stream;
  const std::size_t n = std::size_t{1} << 26;
  Device<float> in(n), out(n);
  HARNESS_CUDA(cudaMemset(in.p, 0, n * sizeof(float)));
  const DevicePeaks peaks = measure_device_peaks(0);
  ASSERT_TRUE(peaks.measured());
  L2Flusher evictor;
  MetricCollector collector(0);
  ProfileOptions options;
  const Work work{0, 2.0 * n * sizeof(float)};
  const auto p = profile_pass(collector, [&] { HARNESS_CUDA(harness::peaks::copy(in.p, out.p, n, stream.s)); }, stream.s,
                              options, work, 0.0, &peaks, [&] { evictor.flush(stream.s); });
  std::printf("%s\n", to_json(p).dump(2).c_str());
  ASSERT_FALSE(p.kernels.unavailable) << *p.kernels.unavailable;
  ASSERT_EQ(p.kernels.kernels.size(), 1u);
  EXPECT_NE(p.kernels.kernels[0].name.find("copy_vec4"), std::string::npos);
  REQUIRE_VALUES(p.metrics);
  ASSERT_TRUE(p.roofline);
  EXPECT_EQ(p.roofline->bound, "memory");
  ASSERT_TRUE(p.roofline->dram_bytes_vs_model);
  EXPECT_NEAR(*p.roofline->dram_bytes_vs_model, 1.0, 0.10);
  ASSERT_TRUE(p.roofline->pct_of_roof);
  EXPECT_GT(*p.roofline->pct_of_roof, 20);
  EXPECT_LT(*p.roofline->pct_of_roof, 130);
}

// Profiling never perturbs timing: after a kernel trace and a counter collection, the
// host cost of a launch is what it was before CUPTI was touched. (If this fails, CUPTI
// stays attached after the profiling pass and the runner must detach it, e.g. with
// cuptiFinalize, before the next variant's timed runs.)
TEST(ProfilePassGpu, LaunchCostIsUnchangedAfterProfiling) {
  REQUIRE_DEVICE();
  Stream stream;
  const harness::peaks::FmaShape tiny{1, 32, 0};
  Device<float> sink(32);
  auto host_us_per_launch = [&] {
    constexpr int kLaunches = 20000;
    HARNESS_CUDA(cudaStreamSynchronize(stream.s));
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kLaunches; ++i) HARNESS_CUDA(harness::peaks::fma(sink.p, tiny, 1.0f, 0.0f, stream.s));
    HARNESS_CUDA(cudaStreamSynchronize(stream.s));
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / kLaunches;
  };
  (void)host_us_per_launch();  // warm up
  const double before = std::min(host_us_per_launch(), host_us_per_launch());
  MetricCollector collector(0);
  const auto b = KernelTrace::trace([&] { HARNESS_CUDA(harness::peaks::fma(sink.p, tiny, 1.0f, 0.0f, stream.s)); }, stream.s, 3);
  const auto m = collector.collect([&] { HARNESS_CUDA(harness::peaks::fma(sink.p, tiny, 1.0f, 0.0f, stream.s)); }, stream.s,
                                   MetricCollector::default_metrics());
  const double after = std::min(host_us_per_launch(), host_us_per_launch());
  std::printf("launch+run of a tiny kernel: %.3f us before CUPTI, %.3f us after (trace %s, metrics %s)\n", before, after,
              b.unavailable ? b.unavailable->c_str() : "ok", m.unavailable ? m.unavailable->c_str() : "ok");
  EXPECT_LT(after, 1.3 * before + 0.5);
}

TEST(OutsideToolGpu, UnderNsightTheHarnessSkipsItsOwnCupti) {
  REQUIRE_DEVICE();
  ::setenv("NSYS_PROFILING_SESSION_ID", "1", 1);
  bool launched = false;
  MetricCollector collector(0);
  const auto m = collector.collect([&] { launched = true; }, nullptr, MetricCollector::default_metrics());
  const auto b = KernelTrace::trace([&] { launched = true; }, nullptr, 1);
  ::unsetenv("NSYS_PROFILING_SESSION_ID");
  ASSERT_TRUE(m.unavailable);
  EXPECT_NE(m.unavailable->find("Nsight Systems"), std::string::npos) << *m.unavailable;
  ASSERT_TRUE(b.unavailable);
  EXPECT_NE(b.unavailable->find("Nsight Systems"), std::string::npos) << *b.unavailable;
  EXPECT_FALSE(launched);
}

}  // namespace
