#pragma once
// Hardware counters through the CUPTI Profiler Host API and Range Profiler of CUDA 13
// (cupti_profiler_host.h, cupti_range_profiler.h), and what follows from them: measured
// DRAM bytes and FLOPs against the problem's model, achieved bandwidth and FLOP rate, and
// the roofline position against the device peaks measured at run start.
//
// Collection is a separate pass after timing: one user range around one run of the
// variant, replayed by running the launch again once per pass the metrics need (user
// replay). Metric names are checked on the host, without a GPU, against the chip's
// metric tables (validate()), so a misspelt name is an input error before any work.
//
// Where counters cannot be read (no device, no permission, an unsupported or virtualized
// GPU, an outside tool such as Nsight Compute or Nsight Systems holding CUPTI) the result
// says "metrics unavailable: <reason>" and everything else proceeds.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include "profile/device_peaks.hpp"
#include "harness/problem.hpp"
#include "profile/kernel_trace.hpp"

namespace harness {

struct MetricValue {
  std::string name;
  double value = 0;
  std::string unit;  // "byte", "nanosecond", "percent", "instruction", ...
};

struct MetricsResult {
  std::vector<MetricValue> values;         // in the order asked for
  std::optional<std::string> unavailable;  // "metrics unavailable: <reason>"
  std::string chip;                        // "GH100"
  std::size_t passes = 0;                  // replays the collection took
  std::optional<double> get(std::string_view name) const;
};

nlohmann::json to_json(const MetricsResult& m);
// Back from to_json() (units and values; malformed input gives `unavailable`).
MetricsResult metrics_from_json(const nlohmann::json& j);

class MetricCollector {
 public:
  // Collects on CUDA device `device` (the runner's device; its primary context).
  explicit MetricCollector(int device = 0);
  ~MetricCollector();
  MetricCollector(const MetricCollector&) = delete;
  MetricCollector& operator=(const MetricCollector&) = delete;

  // gpu__time_duration.sum, dram__bytes_read.sum, dram__bytes_write.sum,
  // sm__throughput.avg.pct_of_peak_sustained_elapsed,
  // gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,
  // sm__warps_active.avg.pct_of_peak_sustained_active,
  // l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,
  // smsp__sass_thread_inst_executed_op_ffma_pred_on.sum
  static const std::vector<std::string>& default_metrics();

  // The chip metric names are checked against: device 0's ("GH100" on an H100 or H200)
  // where a device exists, else "GH100", the chip the project measures on. Overridden by
  // the environment variable HARNESS_METRICS_CHIP.
  static std::string default_chip();

  // Checks metric names on the host (no GPU needed): nothing when every name can be
  // collected on `chip` (empty: default_chip()), else a one-line message for the first
  // bad one: "unknown metric 'dram__bytes_reed.sum' (chip GH100); did you mean
  // 'dram__bytes_read.sum'?". validate_metric() checks one name (for file:line:column).
  static std::optional<std::string> validate(const std::vector<std::string>& names, const std::string& chip = {});
  static std::optional<std::string> validate_metric(const std::string& name, const std::string& chip = {});

  // Why counters cannot be collected in this process, or nothing. Cheap checks first
  // (no device, outside tool); then, once per process, the device's profiling support
  // and counter permissions (creates the CUDA context on `device`).
  static std::optional<std::string> unavailable_reason(int device = 0);

  // Collects `names` for one run of `launch_once` (which enqueues one run of the variant
  // on `stream` and does not synchronize). `launch_once` is called once per pass;
  // `before_pass` (an L2 flush, resetting outputs) runs before each pass, outside the
  // measured range. CUDA errors from the launch propagate; CUPTI problems come back as
  // `unavailable`.
  MetricsResult collect(const std::function<void()>& launch_once, cudaStream_t stream,
                        const std::vector<std::string>& names, const std::function<void()>& before_pass = {});

 private:
  int device_;
};

// ---------------------------------------------------------------------------------------
// Derived figures

struct Roofline {
  double time_s = 0;                          // the time the rates use (timed median)
  std::optional<double> dram_bytes_read;      // measured
  std::optional<double> dram_bytes_write;
  std::optional<double> dram_bytes;           // read + write
  std::optional<double> dram_bytes_vs_model;  // measured / Work::bytes
  std::optional<double> flops;                // from FP instruction counters
  std::vector<std::string> flops_from;        // the counters that went into `flops`
  std::optional<double> flops_vs_model;       // measured / Work::flops
  std::optional<double> achieved_dram_gbytes_per_s;  // measured DRAM bytes / time
  double achieved_gflops = 0;                 // Work::flops / time
  double intensity = 0;                       // Work::flops per DRAM byte (measured bytes when known)
  // Against DevicePeaks (absent without peaks):
  std::optional<double> ridge_intensity;      // peak FLOP/s / peak B/s
  std::string bound;                          // "memory" or "compute" (empty without peaks)
  std::optional<double> roof_gflops;          // min(peak FLOP/s, intensity * peak B/s)
  std::optional<double> pct_of_roof;          // achieved / roof, 0..100+
  std::optional<double> pct_of_dram_peak;
  std::optional<double> pct_of_fp32_peak;
  std::string compute_pipe;                   // the compute roof used: "fp32", "bf16 tensor", ...
  std::optional<double> compute_peak_gflops;  // its peak
  std::optional<double> pct_of_compute_peak;  // achieved / that peak
};

// `time_s`: the timed median; when <= 0, gpu__time_duration.sum from `m` is used.
// `dtype`: the result's dtype parameter (empty: none), which picks the compute roof
// (DevicePeaks::compute_peak: a bf16 result against the bf16 tensor-core peak).
Roofline derive_roofline(const MetricsResult& m, const Work& work, double time_s, const DevicePeaks* peaks,
                         std::string_view dtype = {});
nlohmann::json to_json(const Roofline& r);

// ---------------------------------------------------------------------------------------
// The whole profiling pass of one result

struct ProfileOptions {
  std::vector<std::string> metrics;  // empty: default_metrics()
  int trace_runs = 3;                // runs traced for the kernel breakdown
  bool kernels = true;
  bool counters = true;
  // Called between the kernel trace and the counter passes: the trace is the part whose
  // times stand next to the timed ones (the runner's clock reading stops there).
  std::function<void()> after_trace;
};

struct ProfileResult {
  KernelBreakdown kernels;
  MetricsResult metrics;
  std::optional<Roofline> roofline;
  double timed_median_s = 0;  // the event-timed figure the kernel sum stands next to
};

nlohmann::json to_json(const ProfileResult& p);

// Kernel breakdown (Activity API), then counters (Range Profiler), then the derived
// figures. `before_run` runs before each traced run and each counter pass (cold mode:
// the L2 flush). CUDA errors from `launch` propagate.
ProfileResult profile_pass(MetricCollector& collector, const std::function<void()>& launch, cudaStream_t stream,
                           const ProfileOptions& options, const Work& work, double timed_median_s,
                           const DevicePeaks* peaks, const std::function<void()>& before_run = {},
                           std::string_view dtype = {});

}  // namespace harness
