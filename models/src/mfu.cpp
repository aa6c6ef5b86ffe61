// Model FLOP utilization: the dense bf16 tensor-core peak of a device (mfu.hpp).
#include "models/mfu.hpp"

#include <cuda_runtime.h>

#include <cstdio>
#include <regex>
#include <string>
#include <utility>

namespace models {

int dense_bf16_flop_per_clock_per_sm(int cc_major, int cc_minor) {
  // sm_90: 4 tensor cores per SM, each 512 dense bf16 FMA per clock (1024 FLOP): 4096.
  // (Datasheet check: H100 SXM 989.4 TFLOP/s = 132 x 4096 x 1830 MHz.)
  if (cc_major == 9 && cc_minor == 0) return 4096;
  return 0;
}

namespace {

std::string mhz(int clock_khz) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", clock_khz / 1000.0);
  return buf;
}

}  // namespace

TensorPeak dense_bf16_peak(int cc_major, int cc_minor, int sm_count, int clock_khz, const std::string& name) {
  TensorPeak p;
  const std::string arch = "sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
  // The H20 is cc 9.0 with a fraction of the H100's tensor-core rate: not this formula.
  if (std::regex_search(name, std::regex(R"(\bH20\b)"))) {
    p.source = "peak unknown: " + name + " (" + arch + ") has cut-down tensor cores, not 4096 FLOP/clk/SM";
    return p;
  }
  const int per_clock = dense_bf16_flop_per_clock_per_sm(cc_major, cc_minor);
  if (per_clock == 0) {
    p.source = "peak unknown: dense bf16 FLOP/clk/SM of " + arch + " is not in the table (sm_90 only)";
    return p;
  }
  if (sm_count <= 0 || clock_khz <= 0) {
    p.source = "peak unknown: the SM count or the maximum SM clock of the " + arch + " device is not known";
    return p;
  }
  p.tflops = static_cast<double>(sm_count) * per_clock * (clock_khz * 1e3) * 1e-12;
  p.source = arch + " dense bf16 tensor cores: " + std::to_string(sm_count) + " SMs x " + std::to_string(per_clock) +
             " FLOP/clk x " + mhz(clock_khz) + " MHz (cudaDevAttrClockRate, the maximum SM clock)";
  return p;
}

TensorPeak dense_bf16_peak_of_device(int device) {
  int major = 0, minor = 0, sms = 0, khz = 0;
  const std::pair<cudaDeviceAttr, int*> attrs[] = {{cudaDevAttrComputeCapabilityMajor, &major},
                                                   {cudaDevAttrComputeCapabilityMinor, &minor},
                                                   {cudaDevAttrMultiProcessorCount, &sms},
                                                   {cudaDevAttrClockRate, &khz}};
  for (const auto& [attr, out] : attrs) {
    if (const cudaError_t e = cudaDeviceGetAttribute(out, attr, device); e != cudaSuccess) {
      TensorPeak p;
      p.source = std::string("peak unknown: cudaDeviceGetAttribute failed: ") + cudaGetErrorString(e);
      return p;
    }
  }
  cudaDeviceProp prop{};
  const std::string name = cudaGetDeviceProperties(&prop, device) == cudaSuccess ? prop.name : "";
  return dense_bf16_peak(major, minor, sms, khz, name);
}

std::optional<double> model_flops_utilization(double flops_per_step, double step_seconds, const TensorPeak& peak) {
  if (!peak.known() || !(step_seconds > 0)) return std::nullopt;
  return flops_per_step / step_seconds / (peak.tflops * 1e12);
}

}  // namespace models
