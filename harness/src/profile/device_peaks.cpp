#include "profile/device_peaks.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "harness/cuda_check.hpp"
#include "harness/error.hpp"
#include "profile/kernel_trace.hpp"
#include "profile/peaks.hpp"

namespace harness {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

struct DeviceMemory {
  void* p = nullptr;
  explicit DeviceMemory(std::size_t bytes) { HARNESS_CUDA(cudaMalloc(&p, bytes)); }
  ~DeviceMemory() {
    if (p) HARNESS_CUDA_NOTHROW(cudaFree(p));
  }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  float* f() const { return static_cast<float*>(p); }
};

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { HARNESS_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~Stream() {
    if (s) HARNESS_CUDA_NOTHROW(cudaStreamDestroy(s));
  }
};

struct EventPair {
  cudaEvent_t a = nullptr, b = nullptr;
  EventPair() {
    HARNESS_CUDA(cudaEventCreate(&a));
    HARNESS_CUDA(cudaEventCreate(&b));
  }
  ~EventPair() {
    if (a) HARNESS_CUDA_NOTHROW(cudaEventDestroy(a));
    if (b) HARNESS_CUDA_NOTHROW(cudaEventDestroy(b));
  }
};

// Seconds per run of `launch`, `runs` runs, each timed alone with events.
template <class Launch>
std::vector<double> time_runs(Launch&& launch, cudaStream_t stream, int runs) {
  EventPair ev;
  std::vector<double> out;
  for (int i = 0; i < runs; ++i) {
    HARNESS_CUDA(cudaEventRecord(ev.a, stream));
    HARNESS_CUDA(launch());
    HARNESS_CUDA(cudaEventRecord(ev.b, stream));
    HARNESS_CUDA(cudaEventSynchronize(ev.b));
    float ms = 0;
    HARNESS_CUDA(cudaEventElapsedTime(&ms, ev.a, ev.b));
    out.push_back(static_cast<double>(ms) * 1e-3);
  }
  return out;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

DevicePeaks measure_device_peaks(int device) {
  DevicePeaks p;
  if (auto why = no_device_reason()) {
    p.unavailable = "device peaks unavailable: " + *why;
    return p;
  }
  const auto t0 = std::chrono::steady_clock::now();
  constexpr int kRuns = 10;
  try {
    HARNESS_CUDA(cudaSetDevice(device));
    int sms = 0, mem_khz = 0, bus_bits = 0;
    HARNESS_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    if (cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess) mem_khz = 0;
    if (cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device) != cudaSuccess) bus_bits = 0;
    (void)cudaGetLastError();
    // Double data rate: two transfers per clock on each of bus_bits / 8 bytes.
    p.dram_theoretical_gbytes_per_s = 2.0 * mem_khz * 1e3 * (bus_bits / 8.0) * 1e-9;

    Stream stream;
    p.runs = kRuns;

    // DRAM: copy two buffers far larger than any L2.
    std::size_t free_b = 0, total_b = 0;
    HARNESS_CUDA(cudaMemGetInfo(&free_b, &total_b));
    const std::size_t bytes = std::min<std::size_t>(std::size_t{512} << 20, free_b / 4) / 16 * 16;
    if (bytes < (std::size_t{16} << 20))
      throw std::runtime_error(fmt::format("only {:.0f} MiB free on the device", static_cast<double>(free_b) / kMiB));
    const std::size_t n = bytes / sizeof(float);
    DeviceMemory in(bytes), out(bytes);
    HARNESS_CUDA(cudaMemsetAsync(in.p, 0, bytes, stream.s));
    auto copy = [&] { return harness::peaks::copy(in.f(), out.f(), n, stream.s); };
    (void)time_runs(copy, stream.s, 2);  // warm up: clocks, TLBs
    const auto copy_t = time_runs(copy, stream.s, kRuns);
    p.copy_bytes = 2.0 * static_cast<double>(bytes);
    p.dram_gbytes_per_s = p.copy_bytes / *std::min_element(copy_t.begin(), copy_t.end()) * 1e-9;
    p.dram_gbytes_per_s_median = p.copy_bytes / median(copy_t) * 1e-9;

    // FP32: full occupancy (8 blocks of 256 threads per SM), sized to ~5 ms per run.
    harness::peaks::FmaShape shape{std::max(sms, 1) * 8, 256, 1024};
    DeviceMemory sink(static_cast<std::size_t>(shape.blocks) * shape.threads * sizeof(float));
    auto fma = [&] { return harness::peaks::fma(sink.f(), shape, 0.9999f, 1e-4f, stream.s); };
    const double probe = median(time_runs(fma, stream.s, 3));
    if (probe > 0)
      shape.iterations = static_cast<int>(std::clamp(shape.iterations * 5e-3 / probe, 256.0, 1e6));
    (void)time_runs(fma, stream.s, 1);
    const auto fma_t = time_runs(fma, stream.s, kRuns);
    p.fma_flops = 2.0 * static_cast<double>(harness::peaks::fma_count(shape));
    p.fp32_gflops = p.fma_flops / *std::min_element(fma_t.begin(), fma_t.end()) * 1e-9;
    p.fp32_gflops_median = p.fma_flops / median(fma_t) * 1e-9;
  } catch (const std::exception& e) {
    p = DevicePeaks{};
    p.unavailable = std::string("device peaks unavailable: ") + e.what();
  }
  p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return p;
}

nlohmann::json to_json(const DevicePeaks& p) {
  if (p.unavailable) return {{"unavailable", *p.unavailable}};
  return {{"dram_gbytes_per_s", p.dram_gbytes_per_s},
          {"dram_gbytes_per_s_median", p.dram_gbytes_per_s_median},
          {"dram_theoretical_gbytes_per_s", p.dram_theoretical_gbytes_per_s},
          {"fp32_gflops", p.fp32_gflops},
          {"fp32_gflops_median", p.fp32_gflops_median},
          {"copy_bytes", p.copy_bytes},
          {"fma_flops", p.fma_flops},
          {"runs", p.runs},
          {"seconds", p.seconds},
          {"method", "best of runs: copy kernel (float4, 2 buffers of up to 512 MiB) for DRAM; "
                     "8 independent FFMA chains per thread at full occupancy for FP32"}};
}

DevicePeaks device_peaks_from_json(const nlohmann::json& j) {
  DevicePeaks p;
  try {
    if (!j.is_object()) throw std::runtime_error("not an object");
    if (j.contains("unavailable")) {
      p.unavailable = j["unavailable"].get<std::string>();
      return p;
    }
    p.dram_gbytes_per_s = j.at("dram_gbytes_per_s").get<double>();
    p.fp32_gflops = j.at("fp32_gflops").get<double>();
    p.dram_gbytes_per_s_median = j.value("dram_gbytes_per_s_median", 0.0);
    p.fp32_gflops_median = j.value("fp32_gflops_median", 0.0);
    p.dram_theoretical_gbytes_per_s = j.value("dram_theoretical_gbytes_per_s", 0.0);
    p.copy_bytes = j.value("copy_bytes", 0.0);
    p.fma_flops = j.value("fma_flops", 0.0);
    p.runs = j.value("runs", 0);
    p.seconds = j.value("seconds", 0.0);
  } catch (const std::exception& e) {
    p = DevicePeaks{};
    p.unavailable = std::string("device peaks unavailable: malformed device_peaks: ") + e.what();
  }
  return p;
}

}  // namespace harness
