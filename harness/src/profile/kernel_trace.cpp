#include "profile/kernel_trace.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>

#include <cupti.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/cuda_check.hpp"
#include "harness/error.hpp"
#include "profile/timeline.hpp"

namespace harness {

// ---------------------------------------------------------------------------------------
// Shared helpers

std::string cupti_error_string(int result) {
  const char* text = nullptr;
  if (cuptiGetResultString(static_cast<CUptiResult>(result), &text) != CUPTI_SUCCESS || !text)
    return fmt::format("CUPTI error {}", result);
  std::string s = text;
  switch (static_cast<CUptiResult>(result)) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
      s += " (reading GPU performance counters needs admin rights: run as root, or load the driver with "
           "NVreg_RestrictProfilingToAdminUsers=0)";
      break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      s += " (another CUPTI client, such as Nsight Systems or Nsight Compute, holds CUPTI)";
      break;
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
      s += " (virtualized GPU: profiling is not enabled for this vGPU)";
      break;
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
      s += " (CMP devices are not supported)";
      break;
    default:
      break;
  }
  return s;
}

std::optional<std::string> outside_profiler() {
  auto env = [](const char* name) -> const char* {
    const char* v = std::getenv(name);
    return v && *v ? v : nullptr;
  };
  if (env("HARNESS_CUPTI_IGNORE_OUTSIDE_TOOL")) return std::nullopt;
  if (env("NV_NSIGHT_INJECTION_TRANSPORT_TYPE"))
    return std::string("Nsight Compute (NV_NSIGHT_INJECTION_TRANSPORT_TYPE is set)");
  if (env("NSYS_PROFILING_SESSION_ID"))
    return std::string("Nsight Systems (NSYS_PROFILING_SESSION_ID is set)");
  if (const char* p = env("CUDA_INJECTION64_PATH"))
    return fmt::format("a CUDA injection tool (CUDA_INJECTION64_PATH={})", p);
  return std::nullopt;
}

std::optional<std::string> no_device_reason() {
  static const std::optional<std::string> reason = []() -> std::optional<std::string> {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      return fmt::format("no CUDA device (cudaGetDeviceCount: {})", cudaGetErrorString(e));
    }
    if (count == 0) return std::string("no CUDA device");
    return std::nullopt;
  }();
  return reason;
}

std::string kernel_display_name(const std::string& mangled) {
  int status = 0;
  char* raw = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !raw) {
    std::free(raw);
    return mangled;  // extern "C" kernels are not mangled
  }
  std::string s = raw;
  std::free(raw);
  // Drop the parameter list: the last balanced "(...)" at the end.
  if (!s.empty() && s.back() == ')') {
    int depth = 0;
    for (std::size_t i = s.size(); i-- > 0;) {
      if (s[i] == ')') ++depth;
      else if (s[i] == '(' && --depth == 0) {
        s.erase(i);
        break;
      }
    }
  }
  // Drop a return type ("void "), which comes before the name at template depth 0.
  int angle = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') ++angle;
    else if (s[i] == '>') --angle;
    else if (s[i] == '(') break;  // "(anonymous namespace)" starts the name
    else if (s[i] == ' ' && angle == 0) {
      s.erase(0, i + 1);
      break;
    }
  }
  return s;
}

// ---------------------------------------------------------------------------------------
// Activity buffers

namespace {

struct TraceState {
  std::mutex mutex;
  std::vector<KernelRecord> records;
  // Only while a --trace timeline records: copies, fills and the API calls (CUPTI clock).
  std::vector<GpuActivity> others;
  std::vector<ApiCall> calls;
  std::size_t dropped = 0;
  std::once_flag registered;
  std::optional<std::string> error;  // sticky: CUPTI refused once, it will refuse again
};

TraceState& state() {
  static TraceState s;
  return s;
}

constexpr std::size_t kBufferBytes = 4u << 20;

const char* memcpy_kind_name(std::uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "other";
  }
}

// The activity kinds a --trace timeline adds to the kernel records.
constexpr CUpti_ActivityKind kTimelineKinds[] = {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
                                                 CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER};

// Host (timeline) clock of a CUPTI timestamp: offset = cupti - host, read back to back.
std::int64_t cupti_host_offset() {
  std::uint64_t cupti_before = 0, cupti_after = 0;
  const std::int64_t host_before = Timeline::global().now_ns();
  if (cuptiGetTimestamp(&cupti_before) != CUPTI_SUCCESS) return 0;
  const std::int64_t host_after = Timeline::global().now_ns();
  if (cuptiGetTimestamp(&cupti_after) != CUPTI_SUCCESS) cupti_after = cupti_before;
  // The midpoints of both clocks' readings.
  const std::int64_t cupti_mid = static_cast<std::int64_t>(cupti_before / 2 + cupti_after / 2);
  return cupti_mid - (host_before + host_after) / 2;
}

// A memcpy or memset record (CUPTI's structs share these fields) as a timeline activity.
template <class Record>
GpuActivity copy_activity(const Record& m, GpuActivityKind kind, std::string name) {
  GpuActivity a;
  a.kind = kind;
  a.name = std::move(name);
  a.start_ns = static_cast<std::int64_t>(m.start);
  a.end_ns = static_cast<std::int64_t>(std::max(m.end, m.start));
  a.stream_id = m.streamId;
  a.correlation_id = m.correlationId;
  a.bytes = m.bytes;
  return a;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t /*size*/,
                               size_t valid) {
  std::vector<KernelRecord> got;
  CUpti_Activity* record = nullptr;
  std::vector<GpuActivity> others;
  std::vector<ApiCall> calls;
  while (buffer && cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      others.push_back(copy_activity(*m, GpuActivityKind::memcpy, fmt::format("memcpy {}", memcpy_kind_name(m->copyKind))));
      continue;
    }
    if (record->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      others.push_back(copy_activity(*m, GpuActivityKind::memset, "memset"));
      continue;
    }
    if (record->kind == CUPTI_ACTIVITY_KIND_RUNTIME || record->kind == CUPTI_ACTIVITY_KIND_DRIVER) {
      const auto* api = reinterpret_cast<const CUpti_ActivityAPI*>(record);
      const char* name = nullptr;
      const CUpti_CallbackDomain domain =
          record->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
      if (cuptiGetCallbackName(domain, api->cbid, &name) != CUPTI_SUCCESS || !name) name = "?";
      calls.push_back({name, static_cast<std::int64_t>(api->start),
                       static_cast<std::int64_t>(std::max(api->end, api->start)), api->correlationId});
      continue;
    }
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && record->kind != CUPTI_ACTIVITY_KIND_KERNEL)
      continue;
    const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    KernelRecord r;
    r.mangled = k->name ? k->name : "?";
    r.grid = {k->gridX, k->gridY, k->gridZ};
    r.block = {k->blockX, k->blockY, k->blockZ};
    r.registers = k->registersPerThread;
    r.static_smem = k->staticSharedMemory;
    r.dynamic_smem = k->dynamicSharedMemory;
    r.start_ns = k->start;
    r.end_ns = k->end >= k->start ? k->end : k->start;
    r.stream_id = k->streamId;
    r.correlation_id = k->correlationId;
    got.push_back(std::move(r));
  }
  std::size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) != CUPTI_SUCCESS) dropped = 0;
  std::free(buffer);
  TraceState& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.dropped += dropped;
  for (auto& r : got) s.records.push_back(std::move(r));
  for (auto& a : others) s.others.push_back(std::move(a));
  for (auto& c : calls) s.calls.push_back(std::move(c));
}

[[noreturn]] void cupti_fail(const char* call, CUptiResult r) {
  throw CuptiError(fmt::format("{}: {}", call, cupti_error_string(r)));
}

void remember_error(const std::string& what) {
  TraceState& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.error) s.error = what;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// KernelTrace

std::optional<std::string> KernelTrace::unavailable_reason() {
  if (auto why = no_device_reason()) return why;
  if (auto tool = outside_profiler())
    return fmt::format("CUPTI is held by {}; the harness skips its own CUPTI collection", *tool);
  TraceState& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.error;
}

KernelTrace::KernelTrace() = default;

KernelTrace::~KernelTrace() {
  if (active_) {
    (void)cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (timeline_)
      for (CUpti_ActivityKind k : kTimelineKinds) (void)cuptiActivityDisable(k);
    (void)cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    TraceState& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.records.clear();
    s.others.clear();
    s.calls.clear();
  }
}

void KernelTrace::start() {
  if (auto why = unavailable_reason()) throw CuptiError(*why);
  TraceState& s = state();
  CUptiResult reg = CUPTI_SUCCESS;
  std::call_once(s.registered, [&] { reg = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed); });
  if (reg != CUPTI_SUCCESS) {
    const std::string what = fmt::format("cuptiActivityRegisterCallbacks: {}", cupti_error_string(reg));
    remember_error(what);
    throw CuptiError(what);
  }
  {
    // Leftovers of an aborted trace must not leak into this one.
    (void)cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    std::lock_guard<std::mutex> lock(s.mutex);
    s.records.clear();
    s.others.clear();
    s.calls.clear();
    s.dropped = 0;
  }
  const CUptiResult r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (r != CUPTI_SUCCESS) {
    const std::string what = fmt::format("cuptiActivityEnable(CONCURRENT_KERNEL): {}", cupti_error_string(r));
    remember_error(what);
    throw CuptiError(what);
  }
  active_ = true;
  timeline_ = false;
  if (Timeline::global().enabled()) {
    // Best effort: a kind CUPTI refuses leaves the timeline without it, not the trace.
    bool all = true;
    for (CUpti_ActivityKind k : kTimelineKinds) all = cuptiActivityEnable(k) == CUPTI_SUCCESS && all;
    timeline_ = true;
    (void)all;
    offset_ns_ = cupti_host_offset();
  }
}

std::vector<KernelRecord> KernelTrace::stop() {
  if (!active_) return {};
  active_ = false;
  const cudaError_t sync = cudaDeviceSynchronize();
  const CUptiResult d = cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (timeline_)
    for (CUpti_ActivityKind k : kTimelineKinds) (void)cuptiActivityDisable(k);
  const CUptiResult f = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  TraceState& s = state();
  std::vector<KernelRecord> out;
  std::vector<GpuActivity> others;
  std::vector<ApiCall> calls;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    out.swap(s.records);
    others.swap(s.others);
    calls.swap(s.calls);
  }
  HARNESS_CUDA(sync);
  if (d != CUPTI_SUCCESS) cupti_fail("cuptiActivityDisable", d);
  if (f != CUPTI_SUCCESS) cupti_fail("cuptiActivityFlushAll", f);
  for (auto& r : out) r.name = kernel_display_name(r.mangled);
  std::sort(out.begin(), out.end(), [](const KernelRecord& a, const KernelRecord& b) { return a.start_ns < b.start_ns; });
  if (timeline_) {
    timeline_ = false;
    add_to_timeline(out, std::move(others), std::move(calls), offset_ns_);
  }
  return out;
}

void KernelTrace::add_to_timeline(const std::vector<KernelRecord>& kernels, std::vector<GpuActivity> others,
                                  std::vector<ApiCall> calls, std::int64_t offset_ns) {
  Timeline& t = Timeline::global();
  const std::string variant = t.open_range("variant");
  std::vector<GpuActivity> gpu;
  std::map<std::uint32_t, bool> launched;  // correlation ids of GPU work
  for (const auto& r : kernels) {
    GpuActivity a;
    a.kind = GpuActivityKind::kernel;
    a.name = r.name;
    a.start_ns = static_cast<std::int64_t>(r.start_ns) - offset_ns;
    a.end_ns = static_cast<std::int64_t>(r.end_ns) - offset_ns;
    a.stream_id = r.stream_id;
    a.correlation_id = r.correlation_id;
    for (int i = 0; i < 3; ++i) a.grid[i] = r.grid[i], a.block[i] = r.block[i];
    a.registers = r.registers;
    a.static_smem = r.static_smem;
    a.dynamic_smem = r.dynamic_smem;
    a.variant_range = variant;
    launched[a.correlation_id] = true;
    gpu.push_back(std::move(a));
  }
  for (auto& a : others) {
    a.start_ns -= offset_ns;
    a.end_ns -= offset_ns;
    a.variant_range = variant;
    launched[a.correlation_id] = true;
    gpu.push_back(std::move(a));
  }
  // Only the calls that put work on the GPU (launches, copies, fills): the rest
  // (synchronizations, queries) would bury them.
  std::vector<ApiCall> kept;
  for (auto& c : calls) {
    if (!launched.count(c.correlation_id)) continue;
    c.start_ns -= offset_ns;
    c.end_ns -= offset_ns;
    kept.push_back(std::move(c));
  }
  t.add_gpu(std::move(gpu), std::move(kept), offset_ns);
}

std::vector<KernelSummary> KernelTrace::summarize(const std::vector<KernelRecord>& records, int runs) {
  const double n = runs > 0 ? runs : 1;
  std::map<std::string, std::size_t> index;  // mangled -> position in out
  std::vector<KernelSummary> out;
  std::vector<std::vector<std::array<int, 7>>> configs;
  for (const auto& r : records) {
    auto [it, fresh] = index.try_emplace(r.mangled, out.size());
    if (fresh) {
      KernelSummary k;
      k.name = r.name.empty() ? kernel_display_name(r.mangled) : r.name;
      k.mangled = r.mangled;
      k.grid = r.grid;
      k.block = r.block;
      k.registers = r.registers;
      k.static_smem = r.static_smem;
      k.dynamic_smem = r.dynamic_smem;
      k.min_ns = k.max_ns = r.duration_ns();
      out.push_back(std::move(k));
      configs.emplace_back();
    }
    KernelSummary& k = out[it->second];
    k.calls += 1;
    k.total_ns += r.duration_ns();
    k.min_ns = std::min(k.min_ns, r.duration_ns());
    k.max_ns = std::max(k.max_ns, r.duration_ns());
    const std::array<int, 7> cfg{r.grid[0], r.grid[1], r.grid[2], r.block[0], r.block[1], r.block[2], r.dynamic_smem};
    auto& seen = configs[it->second];
    if (std::find(seen.begin(), seen.end(), cfg) == seen.end()) seen.push_back(cfg);
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].calls /= n;
    out[i].total_ns /= n;
    out[i].configs = static_cast<int>(std::max<std::size_t>(1, configs[i].size()));
  }
  std::stable_sort(out.begin(), out.end(), [](const KernelSummary& a, const KernelSummary& b) { return a.total_ns > b.total_ns; });
  return out;
}

void TimedRegionTally::add(const std::vector<KernelRecord>& run, std::optional<std::uint32_t> launch,
                           std::uint64_t stream_done) {
  launch_stream = launch;
  for (const auto& k : run) {
    const bool other = launch && k.stream_id != *launch;
    if (other) {
      ++other_stream;
      streams.insert(k.stream_id);
    }
    // A kernel of the launch stream cannot end after that stream finished: only the
    // clocks' conversion could say so, and it must not mark an honest variant.
    if ((other || !launch) && stream_done > 0 && k.end_ns > stream_done + kSlackNs) {
      ++late;
      late_by_ns = std::max(late_by_ns, k.end_ns - stream_done);
    }
  }
}

std::optional<std::string> TimedRegionTally::text(int runs) const {
  std::vector<std::string> parts;
  if (other_stream)
    parts.push_back(fmt::format("{} kernel(s) in {} traced run(s) on another stream than the launch stream (stream {}, "
                                "not {})", other_stream, runs, fmt::join(streams, ", "), launch_stream.value_or(0)));
  if (late)
    parts.push_back(fmt::format("{} kernel(s) still running after the launch stream had finished (up to {:.1f} us later)",
                                late, static_cast<double>(late_by_ns) * 1e-3));
  if (parts.empty()) return std::nullopt;
  return fmt::format("{}", fmt::join(parts, "; "));
}

KernelBreakdown KernelTrace::trace(const std::function<void()>& launch, cudaStream_t stream, int runs,
                                   const std::function<void()>& before_run) {
  KernelBreakdown b;
  b.runs = std::max(1, runs);
  if (auto why = unavailable_reason()) {
    b.unavailable = "kernel trace unavailable: " + *why;
    return b;
  }
  std::vector<KernelRecord> all;
  TimedRegionTally outside;
  try {
    std::optional<std::uint32_t> launch_stream;
    for (int i = 0; i < b.runs; ++i) {
      if (before_run) before_run();
      HARNESS_CUDA(cudaStreamSynchronize(stream));
      KernelTrace t;
      t.start();
      // The launch stream's CUPTI id, asked once CUPTI is set up (the legacy default
      // stream has none to compare with: lateness alone is judged then).
      if (std::uint32_t id = 0; i == 0 && stream && cuptiGetStreamIdEx(nullptr, stream, 0, &id) == CUPTI_SUCCESS)
        launch_stream = id;
      launch();
      HARNESS_CUDA(cudaGetLastError());
      HARNESS_CUDA(cudaStreamSynchronize(stream));
      // On CUPTI's clock (the one its kernel records use): the launch stream is done here.
      std::uint64_t stream_done = 0;
      if (cuptiGetTimestamp(&stream_done) != CUPTI_SUCCESS) stream_done = 0;
      auto got = t.stop();
      outside.add(got, launch_stream, stream_done);
      if (i == 0) b.first_run = got;
      all.insert(all.end(), std::make_move_iterator(got.begin()), std::make_move_iterator(got.end()));
    }
  } catch (const CuptiError& e) {
    // Only CUPTI's refusals end here; CUDA errors and the launch's own exceptions
    // belong to the caller.
    b.unavailable = std::string("kernel trace unavailable: ") + e.what();
    return b;
  }
  {
    TraceState& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    b.dropped = s.dropped;
  }
  b.outside = outside.text(b.runs);
  b.kernels = summarize(all, b.runs);
  for (const auto& k : b.kernels) b.kernel_time_s += k.total_ns * 1e-9;
  return b;
}

nlohmann::json to_json(const KernelBreakdown& b) {
  nlohmann::json j;
  if (b.unavailable) {
    j["unavailable"] = *b.unavailable;
    return j;
  }
  nlohmann::json ks = nlohmann::json::array();
  for (const auto& k : b.kernels)
    ks.push_back({{"name", k.name},
                  {"mangled", k.mangled},
                  {"calls", k.calls},
                  {"time_s", k.total_ns * 1e-9},
                  {"min_s", k.min_ns * 1e-9},
                  {"max_s", k.max_ns * 1e-9},
                  {"grid", k.grid},
                  {"block", k.block},
                  {"registers", k.registers},
                  {"static_smem_bytes", k.static_smem},
                  {"dynamic_smem_bytes", k.dynamic_smem},
                  {"configs", k.configs}});
  j["runs"] = b.runs;
  j["kernel_time_s"] = b.kernel_time_s;
  j["dropped_records"] = b.dropped;
  j["kernels"] = std::move(ks);
  if (b.outside) j["outside_timed_region"] = *b.outside;
  if (!b.first_run.empty()) j["timeline"] = timeline_json(b.first_run);
  return j;
}

nlohmann::json timeline_json(const std::vector<KernelRecord>& run) {
  nlohmann::json names = nlohmann::json::array(), kernels = nlohmann::json::array();
  std::map<std::string, std::size_t> index;
  const std::uint64_t t0 = run.empty() ? 0 : run.front().start_ns;
  const std::size_t n = std::min(run.size(), kTimelineKernels);
  for (std::size_t i = 0; i < n; ++i) {
    const KernelRecord& r = run[i];
    auto [it, fresh] = index.try_emplace(r.name, names.size());
    if (fresh) names.push_back(r.name);
    const double start = r.start_ns >= t0 ? static_cast<double>(r.start_ns - t0) * 1e-9 : 0.0;
    kernels.push_back({start, r.duration_ns() * 1e-9, it->second});
  }
  nlohmann::json j = {{"names", std::move(names)}, {"kernels", std::move(kernels)}};
  if (run.size() > n) j["truncated"] = run.size() - n;
  return j;
}

}  // namespace harness
