#pragma once
// Runs a suite: per case, inputs from the seed and the reference once; per variant,
// poisoned outputs, one checked run, and only if it passes the timed samples.
#include <cstdint>
#include <functional>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "measure/measure.hpp"
#include "measure/nvml_sensors.hpp"
#include "profile/device_peaks.hpp"
#include "types/environment.hpp"
#include "profile/metrics.hpp"
#include "types/result.hpp"
#include "suite/suite.hpp"

namespace harness {

struct RunOptions {
  std::string suite_name;                    // the outermost NVTX range
  std::uint64_t seed = 42;
  int device = 0;
  std::optional<std::regex> filter;          // on result names
  std::vector<std::string> variants;         // only these variant names (empty: as the suite says)
  bool profile = true;                       // --no-profile turns the profiling pass off
  std::vector<std::string> metrics;          // --metrics (empty: the case's, else the defaults)
  bool counters = true;                      // --metrics none: the kernel breakdown only
  bool check_only = false;                   // check every variant, time none (gbench)
};

// Called when a result is about to run (to show progress) and when it completes.
struct RunObserver {
  std::function<void(const std::string& name, std::size_t index, std::size_t total)> on_start;
  std::function<void(const Result& result, std::size_t index, std::size_t total)> on_result;
};

struct PlannedResult {
  const Case* c;
  const Variant* variant;
  std::string name;
};

// A result name that more than one case plans (a suite holding one shape in two cases,
// as gemm-tensor-cores.yaml's 4096^3 in `square` and `layouts`). Results are identified by
// name everywhere (journal, --resume, --devices, compare, the report), so such a result
// runs once, in its first case.
struct DuplicateResult {
  std::string name, first_case, other_case;
};

// The results a suite will produce under these options, in run order; each name once
// (`duplicates`, when given, gets the ones left out).
std::vector<PlannedResult> plan(const Suite& suite, const RunOptions& options,
                                std::vector<DuplicateResult>* duplicates = nullptr);
// A result with the identity of a planned one and no outcome yet (status error).
Result unfinished_result(const PlannedResult& p);

class Runner {
 public:
  Runner(RunOptions options, DeviceInfo device);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Runs the planned results in order (consecutive results of one case share its inputs
  // and reference). Stops after a sticky CUDA error: nothing more can run in-process.
  std::vector<Result> run(const std::vector<PlannedResult>& planned, const RunObserver& observer);
  // The device's measured copy bandwidth and FMA rate (once per process, at the first
  // profiling pass).
  const std::optional<DevicePeaks>& device_peaks() const { return peaks_; }
  // Why NVML gives no sensors here ("NVML: ..."); empty when it does or before any GPU work.
  const std::string& sensor_note() const { return sensor_note_; }
  // Set when a sticky CUDA error ended GPU work early.
  const std::optional<std::string>& fatal_cuda_error() const { return fatal_; }

 private:
  struct CaseState;
  void run_case(const Case& c, const std::vector<const Variant*>& variants, std::vector<Result>& out,
                const RunObserver& observer, std::size_t& index, std::size_t total);
  Result run_variant(CaseState& state, const Variant& v);
  // Why the variant cannot run here (no device, a lost context, its constraint, too
  // little free memory for its workspace), or nothing.
  std::optional<std::string> skip_reason(const Case& c, const Variant& v);
  // interleave: true and several variants (not a collective): run_case_interleaved.
  bool interleaves(const CaseState& state, const std::vector<const Variant*>& variants) const;
  // Every variant checked, then timed in rounds (measure/interleave.hpp), then each
  // re-checked and profiled as run_variant does (run/runner_interleave.cpp).
  void run_case_interleaved(CaseState& state, const std::vector<const Variant*>& variants, std::vector<Result>& out,
                            const RunObserver& observer, std::size_t& index, std::size_t total);
  // Runs `work`, recording what it throws in `r` (skipped for out of memory, error, or
  // crashed after a sticky CUDA error).
  void guarded(Result& r, const std::function<void()>& work);
  // The checked run, then (if it passed) the timed runs and the profiling pass.
  void check_time_profile(CaseState& state, const Variant& v, Workspace& ws, Result& r);
  // Its parts: prepare and check (true: time it; `ctx` is its launch context), and what
  // follows the timing (status, re-check on fresh inputs, rates, profiling, roof).
  bool prepare_and_check(CaseState& state, const Variant& v, Workspace& ws, std::optional<LaunchContext>& ctx,
                         Result& r);
  void after_timing(CaseState& state, const Variant& v, Workspace& ws, LaunchContext& ctx, Result& r);
  // The timing of a variant that is not a collective, one batch at a time.
  std::unique_ptr<BatchedTiming> start_timing(const Case& c, const Variant& v, LaunchContext& ctx);
  void time_variant(const Case& c, const Variant& v, LaunchContext& ctx, Result& r);
  void profile_variant(const Case& c, const Variant& v, LaunchContext& ctx, Result& r);
  // What untimed launches of a case do before each launch: the L2 flush in cold mode (as
  // the timed samples), nothing when hot.
  std::function<void()> flush_before_each(const Case& c);
  void ensure_stream();

  RunOptions options_;
  DeviceInfo device_;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<L2Flusher> flusher_;
  std::optional<std::string> fatal_;
  std::unique_ptr<MetricCollector> collector_;
  std::optional<DevicePeaks> peaks_;
  std::unique_ptr<SensorSource> sensors_;  // NVML for this device; null without it
  std::string sensor_note_;
};

// The rates of a timed result: FLOP/s, bytes/s, intensity, cycles and energy per launch,
// FLOP/J (exposed for tests).
void derive_rates(Result& r);

}  // namespace harness
