#pragma once
// The device's roofs, measured once per run: DRAM bandwidth from a copy kernel and FP32
// throughput from an FMA kernel (kernels/peaks). The roofline position of every result is
// judged against these, and they go into the report's environment.
//
//   DevicePeaks peaks = measure_device_peaks(device.index);
//   env["device_peaks"] = to_json(peaks);
#include <cstddef>
#include <optional>
#include <string>

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

namespace harness {

struct DevicePeaks {
  std::optional<std::string> unavailable;  // "device peaks unavailable: no CUDA device"
  double dram_gbytes_per_s = 0;            // best copy run: (bytes read + written) / time
  double dram_gbytes_per_s_median = 0;
  double fp32_gflops = 0;                  // best FMA run: 2 * FFMA / time
  double fp32_gflops_median = 0;
  double dram_theoretical_gbytes_per_s = 0;  // 2 * memory clock * bus width (0: unknown)
  double copy_bytes = 0;                   // moved by one copy run
  double fma_flops = 0;                    // done by one FMA run
  int runs = 0;                            // timed runs of each kernel
  double seconds = 0;                      // wall time the measurement took
  bool measured() const { return !unavailable && dram_gbytes_per_s > 0 && fp32_gflops > 0; }
};

// Measures on `device` (made current) on a private stream: about a second of work.
// CUDA errors are reported in `unavailable`, never thrown.
DevicePeaks measure_device_peaks(int device);

nlohmann::json to_json(const DevicePeaks& p);
// Back from to_json() (a report's environment, or a parent handing peaks to --isolate
// children); malformed input gives peaks with `unavailable` set.
DevicePeaks device_peaks_from_json(const nlohmann::json& j);


}  // namespace harness
