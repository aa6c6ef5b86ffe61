#pragma once
// The device's roofs, measured once per run: DRAM bandwidth from a copy kernel, FP32
// throughput from an FMA kernel (profile/peaks) and the tensor-core throughput of each
// input type the device has a peak kernel for (kernels/peaks/tensor_peak.hpp: tf32, bf16,
// f16, fp8_e4m3). The roofline position of every result is judged against the roof of its
// own dtype (compute_peak), and they go into the report's environment.
//
//   DevicePeaks peaks = measure_device_peaks(device.index);
//   env["device_peaks"] = to_json(peaks);
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

namespace harness {

// One tensor-core roof: best and median of the timed runs of its peak kernel.
struct TensorPeak {
  std::string dtype;        // "tf32", "bf16", "f16", "fp8_e4m3"
  double gflops = 0;
  double gflops_median = 0;
};

// The compute roof a result of `dtype` is judged against: the tensor-core peak of its
// input type where one was measured, else FP32's. fp8_e5m2 runs at e4m3's rate.
struct ComputePeak {
  double gflops = 0;
  std::string pipe;  // "fp32", "bf16 tensor", ...
};

// The tensor-core peak a dtype runs at: its own, except fp8_e5m2 at e4m3's rate.
std::string_view peak_dtype(std::string_view dtype);

struct DevicePeaks {
  std::optional<std::string> unavailable;  // "device peaks unavailable: no CUDA device"
  double dram_gbytes_per_s = 0;            // best copy run: (bytes read + written) / time
  double dram_gbytes_per_s_median = 0;
  double fp32_gflops = 0;                  // best FMA run: 2 * FFMA / time
  double fp32_gflops_median = 0;
  double dram_theoretical_gbytes_per_s = 0;  // 2 * memory clock * bus width (0: unknown)
  double copy_bytes = 0;                   // moved by one copy run
  double fma_flops = 0;                    // done by one FMA run
  std::vector<TensorPeak> tensor;          // measured tensor-core roofs (none before sm_80)
  std::string tensor_note;                 // why some or all were not measured
  int runs = 0;                            // timed runs of each kernel
  double seconds = 0;                      // wall time the measurement took
  bool measured() const { return !unavailable && dram_gbytes_per_s > 0 && fp32_gflops > 0; }
  ComputePeak compute_peak(std::string_view dtype) const;
};

// Measures on `device` (made current) on a private stream: about a second of work.
// CUDA errors are reported in `unavailable`, never thrown.
DevicePeaks measure_device_peaks(int device);

nlohmann::json to_json(const DevicePeaks& p);
// Back from to_json() (a report's environment, or a parent handing peaks to --isolate
// children); malformed input gives peaks with `unavailable` set.
DevicePeaks device_peaks_from_json(const nlohmann::json& j);


}  // namespace harness
