#include "profile/metrics.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>

#include <cuda.h>  // CUcontext, CUdevice (types only: the driver is reached through the runtime)
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <fmt/format.h>

#include "harness/cuda_check.hpp"
#include "harness/error.hpp"
#include "core/suggest.hpp"

namespace harness {

namespace {

// ---------------------------------------------------------------------------------------
// Errors

struct CuptiFailure : std::runtime_error {
  CuptiFailure(const std::string& what, bool sticky_) : std::runtime_error(what), sticky(sticky_) {}
  bool sticky;  // the same call will fail again in this process (permissions, support)
};

bool is_sticky(CUptiResult r) {
  switch (r) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_NOT_COMPATIBLE:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
      return true;
    default:
      return false;
  }
}

void check(CUptiResult r, const char* call) {
  if (r != CUPTI_SUCCESS) throw CuptiFailure(fmt::format("{}: {}", call, cupti_error_string(r)), is_sticky(r));
}

// A CUPTI parameter struct, zeroed, with its size set.
template <class T>
T cupti_params(std::size_t size) {
  T p{};
  p.structSize = size;
  return p;
}
#define CUPTI_PARAMS(Type) cupti_params<Type>(Type##_STRUCT_SIZE)

// ---------------------------------------------------------------------------------------
// Host objects (metric tables of one chip; no GPU needed)

class HostObject {
 public:
  explicit HostObject(const std::string& chip, const std::vector<std::uint8_t>* availability = nullptr) {
    auto p = CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params);
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = chip.c_str();
    p.pCounterAvailabilityImage = availability && !availability->empty() ? availability->data() : nullptr;
    check(cuptiProfilerHostInitialize(&p), "cuptiProfilerHostInitialize");
    object_ = p.pHostObject;
  }
  ~HostObject() {
    if (!object_) return;
    auto p = CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
    p.pHostObject = object_;
    (void)cuptiProfilerHostDeinitialize(&p);
  }
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;
  CUpti_Profiler_Host_Object* get() const { return object_; }

  struct Properties {
    CUpti_MetricType type = CUPTI_METRIC_TYPE_COUNTER;
    std::string unit;
  };
  std::optional<Properties> properties(const std::string& name) const {
    auto p = CUPTI_PARAMS(CUpti_Profiler_Host_GetMetricProperties_Params);
    p.pHostObject = object_;
    p.pMetricName = name.c_str();
    if (cuptiProfilerHostGetMetricProperties(&p) != CUPTI_SUCCESS) return std::nullopt;
    return Properties{p.metricType, p.pDimUnit ? p.pDimUnit : ""};
  }
  CUptiResult add_metrics(const std::vector<const char*>& names) {
    auto p = CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
    p.pHostObject = object_;
    p.ppMetricNames = const_cast<const char**>(names.data());
    p.numMetrics = names.size();
    return cuptiProfilerHostConfigAddMetrics(&p);
  }
  std::vector<std::uint8_t> config_image() const {
    auto s = CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
    s.pHostObject = object_;
    check(cuptiProfilerHostGetConfigImageSize(&s), "cuptiProfilerHostGetConfigImageSize");
    std::vector<std::uint8_t> image(s.configImageSize);
    auto g = CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
    g.pHostObject = object_;
    g.configImageSize = image.size();
    g.pConfigImage = image.data();
    check(cuptiProfilerHostGetConfigImage(&g), "cuptiProfilerHostGetConfigImage");
    return image;
  }
  std::vector<std::string> base_metrics() const {
    std::vector<std::string> out;
    for (CUpti_MetricType t : {CUPTI_METRIC_TYPE_COUNTER, CUPTI_METRIC_TYPE_RATIO, CUPTI_METRIC_TYPE_THROUGHPUT}) {
      auto p = CUPTI_PARAMS(CUpti_Profiler_Host_GetBaseMetrics_Params);
      p.pHostObject = object_;
      p.metricType = t;
      if (cuptiProfilerHostGetBaseMetrics(&p) != CUPTI_SUCCESS || !p.ppMetricNames) continue;
      for (std::size_t i = 0; i < p.numMetrics; ++i)
        if (p.ppMetricNames[i]) out.emplace_back(p.ppMetricNames[i]);
    }
    return out;
  }
  std::vector<std::string> sub_metrics(const std::string& base, CUpti_MetricType type) const {
    auto p = CUPTI_PARAMS(CUpti_Profiler_Host_GetSubMetrics_Params);
    p.pHostObject = object_;
    p.metricType = type;
    p.pMetricName = base.c_str();
    std::vector<std::string> out;
    if (cuptiProfilerHostGetSubMetrics(&p) != CUPTI_SUCCESS || !p.ppSubMetrics) return out;
    for (std::size_t i = 0; i < p.numOfSubmetrics; ++i)
      if (p.ppSubMetrics[i]) out.emplace_back(p.ppSubMetrics[i]);
    return out;
  }

 private:
  CUpti_Profiler_Host_Object* object_ = nullptr;
};

std::size_t passes_of(std::vector<std::uint8_t>& config) {
  auto p = CUPTI_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
  p.configImageSize = config.size();
  p.pConfigImage = config.data();
  check(cuptiProfilerHostGetNumOfPasses(&p), "cuptiProfilerHostGetNumOfPasses");
  return p.numOfPasses;
}

std::vector<std::string> unique(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& n : names)
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  return out;
}

// ---------------------------------------------------------------------------------------
// Validation (host only), memoized per chip and name

std::mutex g_validate_mutex;
std::map<std::string, std::optional<std::string>> g_validated;      // chip + '\n' + name
std::map<std::string, std::vector<std::string>> g_base_metrics;     // chip -> base names

std::optional<std::string> check_one(const std::string& name, const std::string& chip) {
  if (name.empty()) return std::string("empty metric name");
  if (std::any_of(name.begin(), name.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }))
    return fmt::format("metric name '{}' contains blanks", name);

  std::unique_ptr<HostObject> host;
  try {
    host = std::make_unique<HostObject>(chip);
  } catch (const CuptiFailure& e) {
    return fmt::format("cannot check metric names for chip '{}': {}", chip, e.what());
  }
  const auto dot = name.find('.');
  const std::string base = name.substr(0, dot);
  const std::string suffix = dot == std::string::npos ? "" : name.substr(dot);

  if (!host->properties(name)) {
    if (auto bp = host->properties(base)) {
      // A known metric with an unknown rollup or submetric.
      std::vector<std::string> candidates;
      for (const auto& s : host->sub_metrics(base, bp->type)) candidates.push_back(base + s);
      std::string hint = did_you_mean(name, candidates);
      if (hint.empty()) {
        // A prefix of a real submetric ("sm__throughput.avg"): its shortest completion.
        const std::string* best = nullptr;
        for (const auto& c : candidates)
          if (c.rfind(name, 0) == 0 && (!best || c.size() < best->size())) best = &c;
        if (best) hint = "; did you mean '" + *best + "'?";
      }
      return fmt::format("unknown metric '{}' (chip {}): '{}' has no submetric '{}'{}", name, chip, base, suffix, hint);
    }
    auto& bases = g_base_metrics[chip];
    if (bases.empty()) bases = host->base_metrics();
    std::string hint;
    if (auto m = closest_match(base, bases)) hint = fmt::format("; did you mean '{}{}'?", *m, suffix);
    return fmt::format("unknown metric '{}' (chip {}){}", name, chip, hint);
  }
  if (const CUptiResult r = host->add_metrics({name.c_str()}); r != CUPTI_SUCCESS) {
    if (suffix.empty())
      return fmt::format("metric '{}' (chip {}) needs a rollup: '{}.sum', '.avg', '.min' or '.max'", name, chip, name);
    return fmt::format("metric '{}' cannot be collected on chip {}: {}", name, chip, cupti_error_string(r));
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------
// Driver entry points (through the runtime: no link-time dependency on libcuda, which a
// machine without a GPU does not have)

template <class Fn>
Fn driver_function(const char* symbol) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  if (cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  return reinterpret_cast<Fn>(fn);
}

CUcontext current_context(int device) {
  HARNESS_CUDA(cudaSetDevice(device));
  HARNESS_CUDA(cudaFree(nullptr));  // makes the primary context current
  using CtxGetCurrent = CUresult (*)(CUcontext*);
  static const auto get = driver_function<CtxGetCurrent>("cuCtxGetCurrent");
  CUcontext ctx = nullptr;
  if (!get || get(&ctx) != CUDA_SUCCESS || !ctx)
    throw CuptiFailure("cannot get the current CUDA context (cuCtxGetCurrent)", true);
  return ctx;
}

CUdevice cu_device(int device) {
  using DeviceGet = CUresult (*)(CUdevice*, int);
  static const auto get = driver_function<DeviceGet>("cuDeviceGet");
  CUdevice d = 0;
  if (!get || get(&d, device) != CUDA_SUCCESS) throw CuptiFailure("cannot get the CUDA device (cuDeviceGet)", true);
  return d;
}

// ---------------------------------------------------------------------------------------
// Per-process, per-device profiler state

struct DeviceState {
  std::optional<std::string> error;  // sticky reason
  std::string chip;
  std::vector<std::uint8_t> availability;
};

std::mutex g_state_mutex;
std::map<int, DeviceState> g_devices;
std::optional<std::string> g_init_error;
bool g_initialized = false;

const char* support_word(CUpti_Profiler_Support_Level l) {
  switch (l) {
    case CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED: return "unsupported";
    case CUPTI_PROFILER_CONFIGURATION_DISABLED: return "disabled";
    case CUPTI_PROFILER_CONFIGURATION_SUPPORTED: return "supported";
    default: return "unknown";
  }
}

// Initializes the profiler and checks `device` once; the caller holds g_state_mutex.
DeviceState& probe_device_locked(int device) {
  auto [it, fresh] = g_devices.try_emplace(device);
  DeviceState& s = it->second;
  if (!fresh) return s;
  try {
    if (!g_initialized) {
      auto p = CUPTI_PARAMS(CUpti_Profiler_Initialize_Params);
      const CUptiResult r = cuptiProfilerInitialize(&p);
      if (r != CUPTI_SUCCESS) g_init_error = fmt::format("cuptiProfilerInitialize: {}", cupti_error_string(r));
      g_initialized = true;
    }
    if (g_init_error) throw CuptiFailure(*g_init_error, true);

    CUcontext ctx = current_context(device);
    {
      auto p = CUPTI_PARAMS(CUpti_Profiler_DeviceSupported_Params);
      p.cuDevice = cu_device(device);
      p.api = CUPTI_PROFILER_RANGE_PROFILING;
      check(cuptiProfilerDeviceSupported(&p), "cuptiProfilerDeviceSupported");
      if (p.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
        std::vector<std::string> why;
        auto add = [&](const char* what, CUpti_Profiler_Support_Level l) {
          if (l != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why.push_back(fmt::format("{} {}", what, support_word(l)));
        };
        add("architecture", p.architecture);
        add("SLI", p.sli);
        add("vGPU", p.vGpu);
        add("confidential compute", p.confidentialCompute);
        add("CMP", p.cmp);
        add("WSL", p.wsl);
        throw CuptiFailure(fmt::format("the device does not support counter collection ({})",
                                       why.empty() ? std::string("no reason given") : fmt::format("{}", fmt::join(why, ", "))),
                           true);
      }
    }
    {
      auto p = CUPTI_PARAMS(CUpti_Device_GetChipName_Params);
      p.deviceIndex = static_cast<std::size_t>(device);
      check(cuptiDeviceGetChipName(&p), "cuptiDeviceGetChipName");
      s.chip = p.pChipName ? p.pChipName : "";
    }
    {
      auto p = CUPTI_PARAMS(CUpti_Profiler_GetCounterAvailability_Params);
      p.ctx = ctx;
      check(cuptiProfilerGetCounterAvailability(&p), "cuptiProfilerGetCounterAvailability");
      s.availability.assign(p.counterAvailabilityImageSize, 0);
      p.pCounterAvailabilityImage = s.availability.data();
      check(cuptiProfilerGetCounterAvailability(&p), "cuptiProfilerGetCounterAvailability");
    }
  } catch (const CuptiFailure& e) {
    s.error = e.what();
  } catch (const std::exception& e) {
    s.error = e.what();
  }
  return s;
}

// ---------------------------------------------------------------------------------------
// Range profiler session (RAII: whatever happens, the profiler ends disabled)

class RangeSession {
 public:
  explicit RangeSession(CUcontext ctx) {
    auto p = CUPTI_PARAMS(CUpti_RangeProfiler_Enable_Params);
    p.ctx = ctx;
    check(cuptiRangeProfilerEnable(&p), "cuptiRangeProfilerEnable");
    object_ = p.pRangeProfilerObject;
  }
  ~RangeSession() {
    if (pushed_) {
      auto p = CUPTI_PARAMS(CUpti_RangeProfiler_PopRange_Params);
      p.pRangeProfilerObject = object_;
      (void)cuptiRangeProfilerPopRange(&p);
    }
    if (started_) {
      auto p = CUPTI_PARAMS(CUpti_RangeProfiler_Stop_Params);
      p.pRangeProfilerObject = object_;
      (void)cuptiRangeProfilerStop(&p);
    }
    if (object_) {
      auto p = CUPTI_PARAMS(CUpti_RangeProfiler_Disable_Params);
      p.pRangeProfilerObject = object_;
      (void)cuptiRangeProfilerDisable(&p);
    }
  }
  RangeSession(const RangeSession&) = delete;
  RangeSession& operator=(const RangeSession&) = delete;

  std::vector<std::uint8_t> counter_data(const std::vector<const char*>& names) {
    auto s = CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params);
    s.pRangeProfilerObject = object_;
    s.pMetricNames = const_cast<const char**>(names.data());
    s.numMetrics = names.size();
    s.maxNumOfRanges = 1;
    s.maxNumRangeTreeNodes = 1;
    check(cuptiRangeProfilerGetCounterDataSize(&s), "cuptiRangeProfilerGetCounterDataSize");
    std::vector<std::uint8_t> image(s.counterDataSize, 0);
    auto i = CUPTI_PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
    i.pRangeProfilerObject = object_;
    i.counterDataSize = image.size();
    i.pCounterData = image.data();
    check(cuptiRangeProfilerCounterDataImageInitialize(&i), "cuptiRangeProfilerCounterDataImageInitialize");
    return image;
  }
  void set_config(const std::vector<std::uint8_t>& config, std::vector<std::uint8_t>& counter_data) {
    auto p = CUPTI_PARAMS(CUpti_RangeProfiler_SetConfig_Params);
    p.pRangeProfilerObject = object_;
    p.configSize = config.size();
    p.pConfig = config.data();
    p.counterDataImageSize = counter_data.size();
    p.pCounterDataImage = counter_data.data();
    p.range = CUPTI_UserRange;
    p.replayMode = CUPTI_UserReplay;
    p.maxRangesPerPass = 1;
    p.numNestingLevels = 1;
    p.minNestingLevel = 1;
    p.passIndex = 0;
    p.targetNestingLevel = 1;
    check(cuptiRangeProfilerSetConfig(&p), "cuptiRangeProfilerSetConfig");
  }
  void start_and_push(const char* range) {
    auto s = CUPTI_PARAMS(CUpti_RangeProfiler_Start_Params);
    s.pRangeProfilerObject = object_;
    check(cuptiRangeProfilerStart(&s), "cuptiRangeProfilerStart");
    started_ = true;
    auto p = CUPTI_PARAMS(CUpti_RangeProfiler_PushRange_Params);
    p.pRangeProfilerObject = object_;
    p.pRangeName = range;
    check(cuptiRangeProfilerPushRange(&p), "cuptiRangeProfilerPushRange");
    pushed_ = true;
  }
  // Returns true when every pass has been submitted.
  bool pop_and_stop() {
    auto p = CUPTI_PARAMS(CUpti_RangeProfiler_PopRange_Params);
    p.pRangeProfilerObject = object_;
    pushed_ = false;
    check(cuptiRangeProfilerPopRange(&p), "cuptiRangeProfilerPopRange");
    auto s = CUPTI_PARAMS(CUpti_RangeProfiler_Stop_Params);
    s.pRangeProfilerObject = object_;
    started_ = false;
    check(cuptiRangeProfilerStop(&s), "cuptiRangeProfilerStop");
    return s.isAllPassSubmitted != 0;
  }
  void decode() {
    auto p = CUPTI_PARAMS(CUpti_RangeProfiler_DecodeData_Params);
    p.pRangeProfilerObject = object_;
    check(cuptiRangeProfilerDecodeData(&p), "cuptiRangeProfilerDecodeData");
    if (p.numOfRangeDropped > 0)
      throw CuptiFailure(fmt::format("the range profiler dropped {} range(s)", p.numOfRangeDropped), false);
  }

 private:
  CUpti_RangeProfiler_Object* object_ = nullptr;
  bool started_ = false;
  bool pushed_ = false;
};

// Metrics from FP instruction counters: name -> FLOPs per thread instruction.
struct FlopCounter {
  const char* metric;
  double flops;
  const char* label;
};
constexpr FlopCounter kFlopCounters[] = {
    {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 2, "ffma"},
    {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 1, "fadd"},
    {"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", 1, "fmul"},
    {"smsp__sass_thread_inst_executed_op_dfma_pred_on.sum", 2, "dfma"},
    {"smsp__sass_thread_inst_executed_op_dadd_pred_on.sum", 1, "dadd"},
    {"smsp__sass_thread_inst_executed_op_dmul_pred_on.sum", 1, "dmul"},
};

}  // namespace

// ---------------------------------------------------------------------------------------
// MetricsResult

std::optional<double> MetricsResult::get(std::string_view name) const {
  for (const auto& v : values)
    if (v.name == name) return v.value;
  return std::nullopt;
}

nlohmann::json to_json(const MetricsResult& m) {
  if (m.unavailable) return {{"unavailable", *m.unavailable}};
  nlohmann::json values = nlohmann::json::object();
  nlohmann::json units = nlohmann::json::object();
  for (const auto& v : m.values) {
    values[v.name] = v.value;
    units[v.name] = v.unit;
  }
  return {{"chip", m.chip}, {"passes", m.passes}, {"values", std::move(values)}, {"units", std::move(units)}};
}

MetricsResult metrics_from_json(const nlohmann::json& j) {
  MetricsResult m;
  try {
    if (!j.is_object()) throw std::runtime_error("not an object");
    if (j.contains("unavailable")) {
      m.unavailable = j["unavailable"].get<std::string>();
      return m;
    }
    m.chip = j.value("chip", "");
    m.passes = j.value("passes", std::size_t{0});
    const auto& units = j.contains("units") ? j["units"] : nlohmann::json::object();
    for (const auto& [name, value] : j.at("values").items())
      m.values.push_back({name, value.get<double>(), units.value(name, "")});
  } catch (const std::exception& e) {
    m = MetricsResult{};
    m.unavailable = std::string("metrics unavailable: malformed metrics: ") + e.what();
  }
  return m;
}

// ---------------------------------------------------------------------------------------
// MetricCollector

MetricCollector::MetricCollector(int device) : device_(device) {}
MetricCollector::~MetricCollector() = default;

const std::vector<std::string>& MetricCollector::default_metrics() {
  static const std::vector<std::string> names = {
      "gpu__time_duration.sum",
      "dram__bytes_read.sum",
      "dram__bytes_write.sum",
      "sm__throughput.avg.pct_of_peak_sustained_elapsed",
      "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
      "sm__warps_active.avg.pct_of_peak_sustained_active",
      "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
      "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
  };
  return names;
}

std::string MetricCollector::default_chip() {
  if (const char* env = std::getenv("HARNESS_METRICS_CHIP"); env && *env) return env;
  static const std::string chip = [] {
    // From the compute capability (no context, no CUPTI target call): metric tables are
    // per architecture, so the architecture's reference chip names the same metrics.
    if (no_device_reason()) return std::string("GH100");
    int major = 0, minor = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0) != cudaSuccess) {
      (void)cudaGetLastError();
      return std::string("GH100");
    }
    switch (major * 10 + minor) {
      case 70: return std::string("GV100");
      case 75: return std::string("TU102");
      case 80: return std::string("GA100");
      case 86: return std::string("GA102");
      case 87: return std::string("GA10B");
      case 89: return std::string("AD102");
      case 90: return std::string("GH100");
      case 100: return std::string("GB100");
      case 120: return std::string("GB202");
      default: return std::string("GH100");
    }
  }();
  return chip;
}

std::optional<std::string> MetricCollector::validate_metric(const std::string& name, const std::string& chip_in) {
  const std::string chip = chip_in.empty() ? default_chip() : chip_in;
  std::lock_guard<std::mutex> lock(g_validate_mutex);
  const std::string key = chip + '\n' + name;
  if (auto it = g_validated.find(key); it != g_validated.end()) return it->second;
  auto result = check_one(name, chip);
  g_validated.emplace(key, result);
  return result;
}

std::optional<std::string> MetricCollector::validate(const std::vector<std::string>& names, const std::string& chip) {
  for (const auto& n : names)
    if (auto why = validate_metric(n, chip)) return why;
  return std::nullopt;
}

std::optional<std::string> MetricCollector::unavailable_reason(int device) {
  if (auto why = no_device_reason()) return why;
  if (auto tool = outside_profiler())
    return fmt::format("CUPTI is held by {}; the harness skips its own CUPTI collection", *tool);
  std::lock_guard<std::mutex> lock(g_state_mutex);
  return probe_device_locked(device).error;
}

namespace {

// User replay: the same run once per pass, until CUPTI has every pass it needs. Returns
// the passes taken.
std::size_t replay(RangeSession& session, const std::function<void()>& launch_once, cudaStream_t stream,
                   const std::function<void()>& before_pass, std::size_t expected) {
  const std::size_t max_passes = std::max<std::size_t>(expected, 1) * 2 + 2;
  std::size_t passes = 0;
  bool done = false;
  while (!done) {
    if (passes >= max_passes)
      throw CuptiFailure(fmt::format("the range profiler still wanted passes after {} (expected {})", passes, expected), false);
    if (before_pass) before_pass();
    HARNESS_CUDA(cudaStreamSynchronize(stream));
    session.start_and_push("harness");
    launch_once();
    HARNESS_CUDA(cudaGetLastError());
    HARNESS_CUDA(cudaStreamSynchronize(stream));
    done = session.pop_and_stop();
    ++passes;
  }
  return passes;
}

// The metrics' values from the decoded counter data of the one range.
std::vector<double> evaluate(HostObject& host, std::vector<std::uint8_t>& data, std::vector<const char*>& ptrs) {
  auto info = CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params);
  info.pCounterDataImage = data.data();
  info.counterDataImageSize = data.size();
  check(cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo");
  if (info.numTotalRanges < 1) throw CuptiFailure("the range profiler recorded no range", false);
  std::vector<double> values(ptrs.size(), 0.0);
  auto ev = CUPTI_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
  ev.pHostObject = host.get();
  ev.pCounterDataImage = data.data();
  ev.counterDataImageSize = data.size();
  ev.rangeIndex = 0;
  ev.ppMetricNames = ptrs.data();
  ev.numMetrics = ptrs.size();
  ev.pMetricValues = values.data();
  check(cuptiProfilerHostEvaluateToGpuValues(&ev), "cuptiProfilerHostEvaluateToGpuValues");
  return values;
}

}  // namespace

MetricsResult MetricCollector::collect(const std::function<void()>& launch_once, cudaStream_t stream,
                                       const std::vector<std::string>& names_in,
                                       const std::function<void()>& before_pass) {
  MetricsResult res;
  const std::vector<std::string> names = unique(names_in);
  if (names.empty()) return res;
  if (auto why = unavailable_reason(device_)) {
    res.unavailable = "metrics unavailable: " + *why;
    return res;
  }
  std::vector<std::uint8_t> availability;
  {
    std::lock_guard<std::mutex> lock(g_state_mutex);
    const DeviceState& s = probe_device_locked(device_);
    res.chip = s.chip;
    availability = s.availability;
  }
  if (auto bad = validate(names, res.chip)) {
    res.unavailable = "metrics unavailable: " + *bad;
    return res;
  }

  std::vector<const char*> ptrs;
  for (const auto& n : names) ptrs.push_back(n.c_str());
  try {
    CUcontext ctx = current_context(device_);
    HostObject host(res.chip, &availability);
    std::vector<std::string> units;
    for (const auto& n : names) {
      auto p = host.properties(n);
      units.push_back(p ? p->unit : "");
    }
    check(host.add_metrics(ptrs), "cuptiProfilerHostConfigAddMetrics");
    std::vector<std::uint8_t> config = host.config_image();
    const std::size_t expected = passes_of(config);

    std::vector<std::uint8_t> data;  // declared first: CUPTI may write it until the session ends
    RangeSession session(ctx);
    data = session.counter_data(ptrs);
    session.set_config(config, data);

    res.passes = replay(session, launch_once, stream, before_pass, expected);
    session.decode();
    const std::vector<double> values = evaluate(host, data, ptrs);
    for (std::size_t i = 0; i < names.size(); ++i) res.values.push_back({names[i], values[i], units[i]});
  } catch (const CuptiFailure& e) {
    res.values.clear();
    res.unavailable = std::string("metrics unavailable: ") + e.what();
    if (e.sticky) {
      std::lock_guard<std::mutex> lock(g_state_mutex);
      DeviceState& s = g_devices[device_];
      if (!s.error) s.error = e.what();
    }
  }
  return res;
}

// ---------------------------------------------------------------------------------------
// Derived figures

Roofline derive_roofline(const MetricsResult& m, const Work& work, double time_s, const DevicePeaks* peaks,
                         std::string_view dtype) {
  Roofline r;
  r.time_s = time_s;
  if (r.time_s <= 0)
    if (auto ns = m.get("gpu__time_duration.sum")) r.time_s = *ns * 1e-9;

  r.dram_bytes_read = m.get("dram__bytes_read.sum");
  r.dram_bytes_write = m.get("dram__bytes_write.sum");
  if (r.dram_bytes_read && r.dram_bytes_write) r.dram_bytes = *r.dram_bytes_read + *r.dram_bytes_write;
  if (r.dram_bytes && work.bytes > 0) r.dram_bytes_vs_model = *r.dram_bytes / work.bytes;

  double flops = 0;
  for (const auto& c : kFlopCounters)
    if (auto v = m.get(c.metric)) {
      flops += c.flops * *v;
      r.flops_from.emplace_back(c.label);
    }
  if (!r.flops_from.empty()) {
    r.flops = flops;
    if (work.flops > 0) r.flops_vs_model = flops / work.flops;
  }

  if (r.time_s > 0) {
    r.achieved_gflops = work.flops / r.time_s * 1e-9;
    if (r.dram_bytes) r.achieved_dram_gbytes_per_s = *r.dram_bytes / r.time_s * 1e-9;
  }
  const double bytes = r.dram_bytes && *r.dram_bytes > 0 ? *r.dram_bytes : work.bytes;
  r.intensity = bytes > 0 ? work.flops / bytes : 0;

  if (peaks && peaks->measured() && r.time_s > 0) {
    const ComputePeak cp = peaks->compute_peak(dtype);
    const double bw = peaks->dram_gbytes_per_s, fl = cp.gflops;
    const double achieved_bw = bytes / r.time_s * 1e-9;
    r.ridge_intensity = fl / bw;
    r.bound = r.intensity < *r.ridge_intensity ? "memory" : "compute";
    r.roof_gflops = std::min(fl, r.intensity * bw);
    r.pct_of_dram_peak = 100.0 * achieved_bw / bw;
    r.pct_of_fp32_peak = 100.0 * r.achieved_gflops / peaks->fp32_gflops;
    r.compute_pipe = cp.pipe;
    r.compute_peak_gflops = fl;
    r.pct_of_compute_peak = 100.0 * r.achieved_gflops / fl;
    r.pct_of_roof = r.bound == "memory" ? *r.pct_of_dram_peak : *r.pct_of_compute_peak;
  }
  return r;
}

nlohmann::json to_json(const Roofline& r) {
  auto opt = [](const std::optional<double>& v) -> nlohmann::json { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return {{"time_s", r.time_s},
          {"dram_bytes_read", opt(r.dram_bytes_read)},
          {"dram_bytes_write", opt(r.dram_bytes_write)},
          {"dram_bytes", opt(r.dram_bytes)},
          {"dram_bytes_vs_model", opt(r.dram_bytes_vs_model)},
          {"flops", opt(r.flops)},
          {"flops_from", r.flops_from},
          {"flops_vs_model", opt(r.flops_vs_model)},
          {"achieved_dram_gbytes_per_s", opt(r.achieved_dram_gbytes_per_s)},
          {"achieved_gflops", r.achieved_gflops},
          {"intensity_flops_per_byte", r.intensity},
          {"ridge_intensity", opt(r.ridge_intensity)},
          {"bound", r.bound.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.bound)},
          {"roof_gflops", opt(r.roof_gflops)},
          {"pct_of_roof", opt(r.pct_of_roof)},
          {"pct_of_dram_peak", opt(r.pct_of_dram_peak)},
          {"pct_of_fp32_peak", opt(r.pct_of_fp32_peak)},
          {"compute_pipe", r.compute_pipe.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.compute_pipe)},
          {"compute_peak_gflops", opt(r.compute_peak_gflops)},
          {"pct_of_compute_peak", opt(r.pct_of_compute_peak)}};
}

// ---------------------------------------------------------------------------------------
// The profiling pass

nlohmann::json to_json(const ProfileResult& p) {
  nlohmann::json j;
  j["kernels"] = to_json(p.kernels);
  if (!p.kernels.unavailable) j["kernels"]["event_time_s"] = p.timed_median_s;
  j["metrics"] = to_json(p.metrics);
  j["roofline"] = p.roofline ? to_json(*p.roofline) : nlohmann::json(nullptr);
  return j;
}

ProfileResult profile_pass(MetricCollector& collector, const std::function<void()>& launch, cudaStream_t stream,
                           const ProfileOptions& options, const Work& work, double timed_median_s,
                           const DevicePeaks* peaks, const std::function<void()>& before_run,
                           std::string_view dtype) {
  ProfileResult p;
  p.timed_median_s = timed_median_s;
  if (options.kernels) {
    p.kernels = KernelTrace::trace(launch, stream, options.trace_runs, before_run);
  } else {
    p.kernels.unavailable = "kernel trace not requested";
  }
  if (options.after_trace) options.after_trace();
  if (options.counters) {
    const auto& names = options.metrics.empty() ? MetricCollector::default_metrics() : options.metrics;
    p.metrics = collector.collect(launch, stream, names, before_run);
  } else {
    p.metrics.unavailable = "metrics not requested";
  }
  if (!p.metrics.unavailable || peaks) p.roofline = derive_roofline(p.metrics, work, timed_median_s, peaks, dtype);
  return p;
}

}  // namespace harness
