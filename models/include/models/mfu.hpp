#pragma once
// Model FLOP utilization (issue 36, docs/models.md "Model FLOP utilization"): the model's
// FLOPs per training step (the train_transformer problem's `work`: GEMMs x3, attention
// cores x3.5) / the time of a step / the GPU's dense bf16 tensor-core peak. The same peak
// is used for FP32 and bf16 runs: MFU says how much of the machine's matrix throughput a
// step uses, whatever the precision it chose.
//
// The peak is computed, never guessed: on compute capability 9.0 (H100, H200, H800,
// GH200: 4th-generation tensor cores) dense bf16 = SMs x 4096 FLOP/clk x the maximum SM
// clock (cudaDevAttrClockRate; cudaDeviceProp::clockRate is gone in CUDA 13). Any other
// architecture, and the H20 (cc 9.0 with cut-down tensor cores), gives "peak unknown"
// with the reason, and no MFU. reports/harness_report.py (dense_bf16_peak) is the same
// formula for the PyTorch references; keep the two in step.
#include <optional>
#include <string>

namespace models {

struct TensorPeak {
  double tflops = 0;   // dense bf16 tensor-core peak, TFLOP/s; 0 when unknown
  std::string source;  // the formula with its figures, or why the peak is unknown
  bool known() const { return tflops > 0; }
};

// Dense bf16 FLOP per clock per SM of a compute capability (sm_90: 4096), 0 if not known.
int dense_bf16_flop_per_clock_per_sm(int cc_major, int cc_minor);

// The peak from the device's figures: compute capability, SM count, maximum SM clock in
// kHz (as cudaDevAttrClockRate reports it) and name (to refuse the H20).
TensorPeak dense_bf16_peak(int cc_major, int cc_minor, int sm_count, int clock_khz, const std::string& name = "");

// The peak of CUDA device `device` (cudaDeviceGetAttribute, cudaGetDeviceProperties for
// the name); unknown with the failing call as the reason. Does not throw.
TensorPeak dense_bf16_peak_of_device(int device);

// flops_per_step / step_seconds / the peak (a fraction, 0.25 = 25%); nullopt when the peak
// is unknown or step_seconds <= 0.
std::optional<double> model_flops_utilization(double flops_per_step, double step_seconds, const TensorPeak& peak);

}  // namespace models
