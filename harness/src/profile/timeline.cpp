#include "profile/timeline.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>

#include <fmt/format.h>

namespace harness {

namespace {
std::atomic<bool> g_on{false};

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Chrome Trace Event timestamps are microseconds (fractions allowed): ns / 1000 keeps
// the nanoseconds exactly for any run shorter than ~100 days.
double us(std::int64_t ns) { return static_cast<double>(ns) / 1000.0; }

constexpr int kHostPid = 1, kGpuPid = 2, kRangeTid = 1, kApiTid = 2;

nlohmann::json meta(const char* what, int pid, int tid, const std::string& name) {
  nlohmann::json m = {{"ph", "M"}, {"name", what}, {"pid", pid}, {"args", {{"name", name}}}};
  if (tid >= 0) m["tid"] = tid;
  return m;
}
}  // namespace

std::string_view to_string(GpuActivityKind kind) {
  switch (kind) {
    case GpuActivityKind::kernel: return "kernel";
    case GpuActivityKind::memcpy: return "memcpy";
    case GpuActivityKind::memset: return "memset";
  }
  return "?";
}

Timeline& Timeline::global() {
  static Timeline t;
  return t;
}

void Timeline::enable() {
  std::lock_guard lock(mutex_);
  ranges_.clear();
  open_.clear();
  gpu_.clear();
  calls_.clear();
  offsets_.clear();
  epoch_ns_ = steady_ns();
  g_on.store(true, std::memory_order_relaxed);
}

void Timeline::disable() { g_on.store(false, std::memory_order_relaxed); }
bool Timeline::enabled() const { return g_on.load(std::memory_order_relaxed); }

std::int64_t Timeline::now_ns() const { return steady_ns() - epoch_ns_; }

void Timeline::begin(const std::string& name, std::string_view phase) {
  const std::int64_t t = now_ns();
  std::lock_guard lock(mutex_);
  ranges_.push_back({name, std::string(phase), t, -1, static_cast<int>(open_.size())});
  open_.push_back(ranges_.size() - 1);
}

void Timeline::end() {
  const std::int64_t t = now_ns();
  std::lock_guard lock(mutex_);
  if (open_.empty()) return;  // a range begun before enable()
  ranges_[open_.back()].end_ns = t;
  open_.pop_back();
}

std::string Timeline::open_range(std::string_view phase) const {
  std::lock_guard lock(mutex_);
  for (auto it = open_.rbegin(); it != open_.rend(); ++it)
    if (ranges_[*it].phase == phase) return ranges_[*it].name;
  return "";
}

void Timeline::add_gpu(std::vector<GpuActivity> activity, std::vector<ApiCall> calls, std::int64_t offset_ns) {
  std::lock_guard lock(mutex_);
  offsets_.push_back(offset_ns);
  for (auto& a : activity) gpu_.push_back(std::move(a));
  for (auto& c : calls) calls_.push_back(std::move(c));
}

nlohmann::json Timeline::to_chrome_trace() const {
  std::lock_guard lock(mutex_);
  nlohmann::json events = nlohmann::json::array();
  events.push_back(meta("process_name", kHostPid, -1, "host"));
  events.push_back(meta("process_sort_index", kHostPid, -1, "0"));
  events.push_back(meta("thread_name", kHostPid, kRangeTid, "harness NVTX ranges"));
  events.push_back(meta("thread_name", kHostPid, kApiTid, "CUDA API (launches)"));
  events.push_back(meta("process_name", kGpuPid, -1, "GPU"));
  const std::int64_t close = now_ns();
  for (const Range& r : ranges_) {
    const std::int64_t end = r.end_ns >= 0 ? r.end_ns : close;  // still open: up to now
    events.push_back({{"ph", "X"}, {"pid", kHostPid}, {"tid", kRangeTid}, {"name", r.name}, {"cat", r.phase},
                      {"ts", us(r.start_ns)}, {"dur", us(end - r.start_ns)}, {"args", {{"depth", r.depth}}}});
  }
  std::map<std::uint32_t, bool> streams;
  std::map<std::uint32_t, const GpuActivity*> by_corr;
  for (const GpuActivity& a : gpu_) {
    streams[a.stream_id] = true;
    nlohmann::json args = {{"correlation_id", a.correlation_id}, {"stream", a.stream_id}};
    if (!a.variant_range.empty()) args["variant"] = a.variant_range;
    if (a.kind == GpuActivityKind::kernel) {
      args["grid"] = {a.grid[0], a.grid[1], a.grid[2]};
      args["block"] = {a.block[0], a.block[1], a.block[2]};
      args["registers_per_thread"] = a.registers;
      args["static_smem_bytes"] = a.static_smem;
      args["dynamic_smem_bytes"] = a.dynamic_smem;
    } else {
      args["bytes"] = a.bytes;
    }
    events.push_back({{"ph", "X"}, {"pid", kGpuPid}, {"tid", a.stream_id}, {"name", a.name},
                      {"cat", std::string(to_string(a.kind))}, {"ts", us(a.start_ns)},
                      {"dur", us(a.end_ns - a.start_ns)}, {"args", std::move(args)}});
    by_corr.emplace(a.correlation_id, &a);
  }
  for (const auto& [id, on] : streams) events.push_back(meta("thread_name", kGpuPid, static_cast<int>(id), fmt::format("stream {}", id)));
  std::size_t flows = 0;
  for (const ApiCall& c : calls_) {
    events.push_back({{"ph", "X"}, {"pid", kHostPid}, {"tid", kApiTid}, {"name", c.name}, {"cat", "api"},
                      {"ts", us(c.start_ns)}, {"dur", us(c.end_ns - c.start_ns)},
                      {"args", {{"correlation_id", c.correlation_id}}}});
    auto it = by_corr.find(c.correlation_id);
    if (it == by_corr.end()) continue;
    // The arrow leaves the launch call and ends at the start of its GPU work ("bp": "e":
    // bind to the enclosing slice).
    const GpuActivity& a = *it->second;
    events.push_back({{"ph", "s"}, {"pid", kHostPid}, {"tid", kApiTid}, {"name", "launch"}, {"cat", "flow"},
                      {"id", c.correlation_id}, {"ts", us(c.start_ns)}});
    events.push_back({{"ph", "f"}, {"bp", "e"}, {"pid", kGpuPid}, {"tid", a.stream_id}, {"name", "launch"},
                      {"cat", "flow"}, {"id", c.correlation_id}, {"ts", us(a.start_ns)}});
    ++flows;
  }
  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ns"},
          {"otherData",
           {{"generator", "harness run --trace"},
            {"clock", "host steady_clock, ns since the trace began; GPU stamps = cuptiGetTimestamp - offset"},
            {"clock_offsets_ns", offsets_},
            {"flows", flows}}}};
}

}  // namespace harness
