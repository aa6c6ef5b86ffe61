#pragma once
// The kernels a variant launches, from the CUPTI Activity API (CONCURRENT_KERNEL records):
// name, grid, block, registers, static and dynamic shared memory and GPU duration of
// every launch, summed per kernel.
//
//   KernelBreakdown b = KernelTrace::trace([&] { v.launch(inst, ctx); }, stream, 3);
//   if (b.unavailable) note(*b.unavailable); else for (auto& k : b.kernels) ...
//
// Tracing is its own pass (after the timed samples): records are taken only while a run
// is being traced, so timing never sees CUPTI. Where CUPTI cannot be used (no device, an
// outside tool such as Nsight Systems or Nsight Compute holding it) the breakdown says
// why and the run goes on.
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include "profile/timeline.hpp"

namespace harness {

// A CUPTI call failed (the message names the call and the CUPTI error).
class CuptiError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One kernel launch.
struct KernelRecord {
  std::string mangled;            // as the driver reports it
  std::string name;               // demangled, without return type and parameter list
  std::array<int, 3> grid{};
  std::array<int, 3> block{};
  int registers = 0;              // per thread
  int static_smem = 0;            // bytes per block
  int dynamic_smem = 0;           // bytes per block
  std::uint64_t start_ns = 0, end_ns = 0;  // GPU timestamps
  std::uint32_t stream_id = 0;
  std::uint32_t correlation_id = 0;
  double duration_ns() const { return static_cast<double>(end_ns - start_ns); }
};

// The launches of one kernel (same mangled name), per traced run.
struct KernelSummary {
  std::string name;
  std::string mangled;
  double calls = 0;               // launches per run
  double total_ns = 0;            // GPU time per run (sum over its launches)
  double min_ns = 0, max_ns = 0;  // of one launch
  std::array<int, 3> grid{};      // of the first launch
  std::array<int, 3> block{};
  int registers = 0;
  int static_smem = 0;
  int dynamic_smem = 0;
  int configs = 1;                // distinct (grid, block, dynamic smem) seen
};

struct KernelBreakdown {
  std::vector<KernelSummary> kernels;  // by total_ns, largest first
  int runs = 0;                        // traced runs the figures are averaged over
  double kernel_time_s = 0;            // sum of kernel durations per run
  std::size_t dropped = 0;             // records CUPTI dropped (buffers full)
  // The kernels of the first traced run in launch order (the report keeps up to
  // kTimelineKernels of them as profile.kernels.timeline, to draw the run to scale).
  std::vector<KernelRecord> first_run;
  std::optional<std::string> unavailable;  // "kernel trace unavailable: <reason>"
  // Work the timing would not have seen (issue 33): kernels of the traced runs on a stream
  // other than the launch stream, or still running after the launch stream had finished
  // (the timing's end event, recorded on that stream after the launch, would have
  // completed before them). "2 kernels on another stream than the launch stream (stream
  // 7, not 13); 2 ended up to 180 us after the launch stream had finished"; nothing
  // when every kernel ran on the launch stream inside its work.
  std::optional<std::string> outside;
};

// The kernels of traced runs that a timing on the launch stream would not have covered
// (KernelBreakdown::outside): on another stream, or ending after the host saw the launch
// stream finish (both on CUPTI's clock). Pure; public for the tests.
struct TimedRegionTally {
  // CUPTI converts GPU timestamps to its host clock; a kernel ending this little after the
  // host saw the stream finish is conversion error, not work outside the timed region.
  static constexpr std::uint64_t kSlackNs = 5000;
  std::size_t other_stream = 0, late = 0;
  std::uint64_t late_by_ns = 0;
  std::set<std::uint32_t> streams;             // the other streams seen
  std::optional<std::uint32_t> launch_stream;  // unknown for the legacy default stream
  // One traced run: its kernels, the launch stream's id, and when the launch stream had
  // finished (0: unknown, no lateness check). Lateness is judged for kernels off the
  // launch stream (all of them when its id is unknown).
  void add(const std::vector<KernelRecord>& run, std::optional<std::uint32_t> launch, std::uint64_t stream_done);
  std::optional<std::string> text(int runs) const;  // nothing when every kernel was inside
};

// to_json writes profile.kernels.timeline = {"names": [...], "kernels": [[start_s,
// duration_s, name index], ...], "truncated": n}: start relative to the first kernel.
inline constexpr std::size_t kTimelineKernels = 256;
nlohmann::json to_json(const KernelBreakdown& b);
nlohmann::json timeline_json(const std::vector<KernelRecord>& run);

class KernelTrace {
 public:
  // Why tracing cannot work in this process, or nothing: "no CUDA device (...)", an
  // outside CUPTI tool, or a CUPTI error seen earlier (it is remembered).
  static std::optional<std::string> unavailable_reason();

  // Runs `launch` `runs` times on `stream`, each run traced alone (`before_run`, such as
  // an L2 flush, runs untraced before each), and summarizes per kernel. CUDA errors from
  // `launch` propagate (as harness::CudaError); CUPTI problems become `unavailable`.
  static KernelBreakdown trace(const std::function<void()>& launch, cudaStream_t stream, int runs = 3,
                               const std::function<void()>& before_run = {});

  // Lower level: records the kernels launched between start() and stop() (stop()
  // synchronizes the device). Throws CuptiError with the CUPTI reason.
  KernelTrace();
  ~KernelTrace();
  KernelTrace(const KernelTrace&) = delete;
  KernelTrace& operator=(const KernelTrace&) = delete;
  void start();
  std::vector<KernelRecord> stop();

  // Per-kernel sums of `records` collected over `runs` runs (pure; exposed for tests).
  static std::vector<KernelSummary> summarize(const std::vector<KernelRecord>& records, int runs);

 private:
  // Hands one traced run to Timeline::global() (harness run --trace), on its clock.
  static void add_to_timeline(const std::vector<KernelRecord>& kernels, std::vector<GpuActivity> others,
                              std::vector<ApiCall> calls, std::int64_t offset_ns);
  bool active_ = false;
  bool timeline_ = false;        // also recording copies, fills and API calls
  std::int64_t offset_ns_ = 0;   // cuptiGetTimestamp - Timeline::now_ns at start()
};

// Helpers shared with the metrics module.

// The outside profiler holding CUPTI in this process, when there is one:
// "Nsight Compute (NV_NSIGHT_INJECTION_TRANSPORT_TYPE is set)", "Nsight Systems
// (NSYS_PROFILING_SESSION_ID is set)", "a CUDA injection tool (CUDA_INJECTION64_PATH=...)".
std::optional<std::string> outside_profiler();

// "no CUDA device (...)" when the runtime sees none, else nothing.
std::optional<std::string> no_device_reason();

// "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: ..." for a CUptiResult value.
std::string cupti_error_string(int result);

// "kernels::gemm::(anonymous namespace)::tiled<32>" from "_ZN7kernels4gemm...": demangled,
// return type and parameter list removed. Names that do not demangle come back unchanged.
std::string kernel_display_name(const std::string& mangled);

}  // namespace harness
