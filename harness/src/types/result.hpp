#pragma once
// The outcome of one case x variant.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/check.hpp"
#include "harness/params.hpp"
#include "harness/problem.hpp"
#include "types/integrity.hpp"
#include "types/settings.hpp"
#include "types/timing.hpp"

namespace harness {

// crashed: the variant killed its (isolated) process or corrupted the CUDA context;
// timeout: it outlived the watchdog's limit.
enum class Status { passed, failed, skipped, error, crashed, timeout };
inline constexpr Status kAllStatuses[] = {Status::passed, Status::failed, Status::skipped,
                                          Status::error,  Status::crashed, Status::timeout};
std::string_view to_string(Status status);
std::optional<Status> status_from_string(std::string_view text);

struct Result {
  std::string name;        // "gemm/tiled/M:4096/N:4096/K:4096"
  std::string case_name;   // the suite's case name
  std::string problem;
  std::string variant;
  std::string backend;
  Params params;
  Status status = Status::error;
  std::string reason;      // why skipped / failed / errored
  std::string reference;   // the variant the check compared against
  std::string config;      // Variant::config at these parameters ("" when it has none)
  std::optional<CheckResult> check;
  std::optional<Timing> timing;
  Work work;
  // Derived from the median time and the problem's counts.
  double gflops = 0, gbytes_per_s = 0, intensity = 0;
  // Derived from the median time and the sensors (0: unknown). Energy per launch: the
  // timed region's mean power (NVML's energy counter over its wall time) x the median
  // time; FLOP/J from it; cycles per launch: the median time x the median SM clock (NVML's,
  // else the probe's).
  double energy_per_launch_j = 0, flop_per_j = 0, cycles_per_launch = 0;
  std::size_t io_device_bytes = 0;         // inputs + outputs on the device
  std::size_t workspace_peak_bytes = 0;    // extra device memory the variant used
  MeasureSettings settings;
  bool throttled = false;  // the GPU throttled while this result was measured
  // The profiling pass (kernel breakdown, counters, roofline), kept as JSON so that it
  // crosses --isolate unchanged; null when not profiled.
  nlohmann::json profile;
  // Instance::extra() after the timed runs (problem-specific figures); null when none.
  nlohmann::json extra;
  // The re-check on fresh inputs, the roof and the timed-region checks (types/integrity.hpp).
  Integrity integrity;
  // Where it ran under --devices ("cuda:1", "cpu:0"; a collective: "cuda:0,cuda:1");
  // empty for a single-device run.
  std::string device;
};

}  // namespace harness
