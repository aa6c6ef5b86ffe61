#include "profile/device_peaks.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/cuda_check.hpp"
#include "harness/error.hpp"
#include "profile/kernel_trace.hpp"
#include "profile/peaks.hpp"
#include "peaks/tensor_peak.hpp"

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

// The tensor-core roofs (kernels/peaks/tensor_peak.hpp), each sized to ~3 ms a run, best
// of 5 after a warm-up run; types without a kernel on this device are named in tensor_note.
void measure_tensor_peaks(DevicePeaks& p, int device, int sms, cudaStream_t stream) {
  using kernels::peaks::TensorType;
  int major = 0, minor = 0;
  HARNESS_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  HARNESS_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  // wgmma: one CTA an SM (40 KB of shared memory, 256 threads of 128 accumulators);
  // mma.sync: 8 warps a CTA, 4 CTAs an SM.
  const int blocks = std::max(sms, 1) * (major == 9 ? 1 : 4);
  DeviceMemory sink(static_cast<std::size_t>(blocks) * sizeof(float));
  std::vector<std::string> missing;
  for (TensorType t : {TensorType::tf32, TensorType::bf16, TensorType::f16, TensorType::fp8_e4m3}) {
    const char* name = kernels::peaks::tensor_type_name(t);
    if (!kernels::peaks::tensor_peak_supported(t, major, minor)) {
      missing.emplace_back(name);
      continue;
    }
    int iterations = 64;
    auto run = [&] { return kernels::peaks::tensor_peak(t, major, minor, blocks, iterations, sink.f(), stream); };
    const double probe = median(time_runs(run, stream, 2));
    if (probe > 0) iterations = static_cast<int>(std::clamp(iterations * 3e-3 / probe, 16.0, 1e7));
    (void)time_runs(run, stream, 1);
    const auto t_runs = time_runs(run, stream, 5);
    const double flops = kernels::peaks::tensor_peak_flops(t, major, blocks, iterations);
    p.tensor.push_back({name, flops / *std::min_element(t_runs.begin(), t_runs.end()) * 1e-9,
                        flops / median(t_runs) * 1e-9});
  }
  if (!missing.empty())
    p.tensor_note = fmt::format("no tensor-core peak kernel for {} on compute capability {}.{}",
                                fmt::join(missing, ", "), major, minor);
}

}  // namespace

std::string_view peak_dtype(std::string_view dtype) { return dtype == "fp8_e5m2" ? "fp8_e4m3" : dtype; }

ComputePeak DevicePeaks::compute_peak(std::string_view dtype) const {
  const std::string_view type = peak_dtype(dtype);
  for (const auto& t : tensor)
    if (t.dtype == type && t.gflops > 0) return {t.gflops, t.dtype + " tensor"};
  return {fp32_gflops, "fp32"};
}

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
    measure_tensor_peaks(p, device, sms, stream.s);
  } catch (const std::exception& e) {
    p = DevicePeaks{};
    p.unavailable = std::string("device peaks unavailable: ") + e.what();
  }
  p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return p;
}

namespace {
nlohmann::json tensor_json(const DevicePeaks& p) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& t : p.tensor) out[t.dtype] = {{"gflops", t.gflops}, {"gflops_median", t.gflops_median}};
  return out;
}
}  // namespace

nlohmann::json to_json(const DevicePeaks& p) {
  if (p.unavailable) return {{"unavailable", *p.unavailable}};
  return {{"dram_gbytes_per_s", p.dram_gbytes_per_s},
          {"dram_gbytes_per_s_median", p.dram_gbytes_per_s_median},
          {"dram_theoretical_gbytes_per_s", p.dram_theoretical_gbytes_per_s},
          {"fp32_gflops", p.fp32_gflops},
          {"fp32_gflops_median", p.fp32_gflops_median},
          {"copy_bytes", p.copy_bytes},
          {"fma_flops", p.fma_flops},
          {"tensor", tensor_json(p)},
          {"tensor_note", p.tensor_note},
          {"runs", p.runs},
          {"seconds", p.seconds},
          {"method", "best of runs: copy kernel (float4, 2 buffers of up to 512 MiB) for DRAM; "
                     "8 independent FFMA chains per thread at full occupancy for FP32; "
                     "tensor cores: wgmma m64n256 from shared memory (sm_90) or mma.sync in registers "
                     "(sm_80+), nonzero operands, one input type at a time"}};
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
    if (j.contains("tensor") && j["tensor"].is_object())
      for (const auto& [name, t] : j["tensor"].items())
        p.tensor.push_back({name, t.at("gflops").get<double>(), t.value("gflops_median", 0.0)});
    p.tensor_note = j.value("tensor_note", std::string());
  } catch (const std::exception& e) {
    p = DevicePeaks{};
    p.unavailable = std::string("device peaks unavailable: malformed device_peaks: ") + e.what();
  }
  return p;
}

}  // namespace harness
