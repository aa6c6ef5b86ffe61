#pragma once
// The timeline of a run (`harness run --trace FILE.json`): the harness's own NVTX ranges
// on the host and what the GPU did while the kernel trace was on, written as Chrome Trace
// Event JSON (opens in Perfetto, chrome://tracing and reports/trace_viewer.html).
//
//   Timeline::global().enable();          // before the run
//   ... NvtxRange feeds begin/end, KernelTrace::stop feeds GPU activity ...
//   write_file_atomically(path, Timeline::global().to_chrome_trace().dump());
//
// Clocks: host events use std::chrono::steady_clock, in ns since enable(). CUPTI stamps
// GPU activity and API calls with cuptiGetTimestamp()'s clock (ns); KernelTrace measures
// offset = cuptiGetTimestamp() - host_now_ns() when a trace starts (the two read back to
// back) and the timeline stores host = cupti - offset. The offset of every traced run
// is kept (otherData.clock_offsets_ns) so drift between runs is visible.
//
// Tracks (pid/tid of the Chrome format): pid 1 "host": tid 1 the NVTX ranges (nested as
// suite > case > variant > phase), tid 2 the CUDA API calls that launched GPU work; pid
// 2 "GPU": one tid per CUDA stream with every kernel, memcpy and memset. A flow arrow
// (ph "s" -> "f", id = the correlation id) joins each launch call to its GPU activity.
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace harness {

enum class GpuActivityKind { kernel, memcpy, memset };
std::string_view to_string(GpuActivityKind kind);

// One kernel, copy or fill on the GPU, timestamps already on the host clock.
struct GpuActivity {
  GpuActivityKind kind = GpuActivityKind::kernel;
  std::string name;               // kernel name, "memcpy HtoD", "memset"
  std::int64_t start_ns = 0, end_ns = 0;
  std::uint32_t stream_id = 0;
  std::uint32_t correlation_id = 0;
  // kernel
  int grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  int registers = 0, static_smem = 0, dynamic_smem = 0;
  // memcpy / memset
  std::uint64_t bytes = 0;
  std::string variant_range;      // the innermost open "variant" range when it was recorded
};

// One CUDA runtime or driver API call that launched GPU work (host clock).
struct ApiCall {
  std::string name;               // "cudaLaunchKernel"
  std::int64_t start_ns = 0, end_ns = 0;
  std::uint32_t correlation_id = 0;
};

class Timeline {
 public:
  static Timeline& global();

  // Starts recording (clears what was recorded). Cheap to query: a relaxed atomic load.
  void enable();
  void disable();
  bool enabled() const;

  // Host clock of the timeline: ns since enable() (steady_clock).
  std::int64_t now_ns() const;

  // NVTX ranges (NvtxRange calls these; `phase` is its category name).
  void begin(const std::string& name, std::string_view phase);
  void end();

  // GPU activity and the API calls of one traced run; `offset_ns` = cupti - host clock.
  void add_gpu(std::vector<GpuActivity> activity, std::vector<ApiCall> calls, std::int64_t offset_ns);

  // The innermost open range of this phase ("" when none).
  std::string open_range(std::string_view phase) const;

  nlohmann::json to_chrome_trace() const;

 private:
  struct Range {
    std::string name, phase;
    std::int64_t start_ns = 0, end_ns = -1;
    int depth = 0;
  };
  mutable std::mutex mutex_;
  std::vector<Range> ranges_;
  std::vector<std::size_t> open_;   // indices into ranges_
  std::vector<GpuActivity> gpu_;
  std::vector<ApiCall> calls_;
  std::vector<std::int64_t> offsets_;
  std::int64_t epoch_ns_ = 0;       // steady_clock at enable()
};

}  // namespace harness
