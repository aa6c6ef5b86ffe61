#include "measure/nvml_sensors.hpp"

#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#ifdef HARNESS_HAVE_NVML
#include <dlfcn.h>
#include <nvml.h>
#endif

namespace harness {

#ifdef HARNESS_HAVE_NVML
namespace {

bool off_by_environment() {
  const char* v = std::getenv("HARNESS_NVML");
  return v && std::string_view(v) == "0";
}
constexpr const char* kNvmlOff = "NVML: off (HARNESS_NVML=0)";

// The handful of NVML functions the harness calls, resolved by name. The signatures are
// spelt here with nvml.h's types rather than taken with decltype: a function that a newer
// header marks deprecated (nvmlDeviceGetTemperature, 13.0) or an older one lacks
// (nvmlDeviceGetCurrentClocksEventReasons, 12.2) still resolves from the driver at hand.
struct NvmlApi {
  void* lib = nullptr;
  std::string error;  // why NVML cannot be used in this process ("" when it can)
  nvmlReturn_t (*init)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*by_pci_bus_id)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, nvmlClockType_t, unsigned int*) = nullptr;
  nvmlReturn_t (*max_clock)(nvmlDevice_t, nvmlClockType_t, unsigned int*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned int*) = nullptr;  // milliwatts
  nvmlReturn_t (*temperature)(nvmlDevice_t, nvmlTemperatureSensors_t, unsigned int*) = nullptr;
#ifdef nvmlTemperature_v1
  // NVML 13 deprecates the call above for this one; a driver may keep only the newer.
  nvmlReturn_t (*temperature_v)(nvmlDevice_t, nvmlTemperature_t*) = nullptr;
#endif
  nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long*) = nullptr;  // millijoules

  std::string say(nvmlReturn_t rc) const {
    return error_string ? std::string(error_string(rc)) : fmt::format("NVML error {}", static_cast<int>(rc));
  }
};

template <class F>
bool resolve(void* lib, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  return out != nullptr;
}

// Loaded and initialised once per process and never shut down: nvmlShutdown at exit could
// race with a sampler thread still ending, and the driver frees NVML's state with the
// process anyway.
const NvmlApi& api() {
  static const NvmlApi loaded = [] {
    NvmlApi a;
    // HARNESS_NVML_LIBRARY: another file (the tests' fake NVML, an unusual install).
    const char* path = std::getenv("HARNESS_NVML_LIBRARY");
    if (!path || !*path) path = "libnvidia-ml.so.1";
    a.lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!a.lib) {
      const char* why = dlerror();
      a.error = fmt::format("NVML: {} not loaded ({})", path, why ? why : "dlopen failed");
      return a;
    }
    resolve(a.lib, "nvmlErrorString", a.error_string);
    if (!resolve(a.lib, "nvmlInit_v2", a.init) || !resolve(a.lib, "nvmlDeviceGetHandleByPciBusId_v2", a.by_pci_bus_id) ||
        !resolve(a.lib, "nvmlDeviceGetClockInfo", a.clock)) {
      a.error = "NVML: libnvidia-ml.so.1 lacks nvmlInit_v2, nvmlDeviceGetHandleByPciBusId_v2 or nvmlDeviceGetClockInfo";
      return a;
    }
    // The rest are optional: a driver without one gives the other readings.
    resolve(a.lib, "nvmlDeviceGetMaxClockInfo", a.max_clock);
    resolve(a.lib, "nvmlDeviceGetPowerUsage", a.power);
    resolve(a.lib, "nvmlDeviceGetTemperature", a.temperature);
#ifdef nvmlTemperature_v1
    resolve(a.lib, "nvmlDeviceGetTemperatureV", a.temperature_v);
#endif
    if (!resolve(a.lib, "nvmlDeviceGetCurrentClocksEventReasons", a.reasons))
      resolve(a.lib, "nvmlDeviceGetCurrentClocksThrottleReasons", a.reasons);
    resolve(a.lib, "nvmlDeviceGetTotalEnergyConsumption", a.energy);
    if (const nvmlReturn_t rc = a.init(); rc != NVML_SUCCESS) a.error = fmt::format("NVML: nvmlInit failed ({})", a.say(rc));
    return a;
  }();
  return loaded;
}

class NvmlSource final : public SensorSource {
 public:
  NvmlSource(const NvmlApi& api, nvmlDevice_t device) : api_(api), device_(device) {}

  bool read(SensorSample& out) override {
    bool any = false;
    unsigned int v = 0;
    if (api_.clock(device_, NVML_CLOCK_SM, &v) == NVML_SUCCESS) {
      out.sm_mhz = v;
      any = true;
    }
    if (api_.power && api_.power(device_, &v) == NVML_SUCCESS) {
      out.power_w = v * 1e-3;
      any = true;
    }
    if (api_.temperature && api_.temperature(device_, NVML_TEMPERATURE_GPU, &v) == NVML_SUCCESS) {
      out.temp_c = v;
      any = true;
    }
#ifdef nvmlTemperature_v1
    else if (api_.temperature_v) {
      nvmlTemperature_t t{};
      t.version = nvmlTemperature_v1;
      t.sensorType = NVML_TEMPERATURE_GPU;
      if (api_.temperature_v(device_, &t) == NVML_SUCCESS) {
        out.temp_c = t.temperature;
        any = true;
      }
    }
#endif
    unsigned long long bits = 0;
    if (api_.reasons && api_.reasons(device_, &bits) == NVML_SUCCESS) {
      out.reasons = bits;
      out.has_reasons = true;
      any = true;
    }
    return any;
  }

  std::optional<double> energy_mj() override {
    unsigned long long mj = 0;
    if (!api_.energy || api_.energy(device_, &mj) != NVML_SUCCESS) return std::nullopt;
    return static_cast<double>(mj);
  }

  double max_sm_mhz() override {
    unsigned int v = 0;
    if (!api_.max_clock || api_.max_clock(device_, NVML_CLOCK_SM, &v) != NVML_SUCCESS) return 0;
    return v;
  }

 private:
  const NvmlApi& api_;
  nvmlDevice_t device_;
};

// Why NVML cannot be used at all (switched off, library missing or refusing), else nothing.
std::optional<std::string> not_usable() {
  if (off_by_environment()) return std::string(kNvmlOff);
  if (const NvmlApi& a = api(); !a.error.empty()) return a.error;
  return std::nullopt;
}

}  // namespace

NvmlOpen open_nvml(int cuda_device) {
  NvmlOpen out;
  if (auto why = not_usable()) {
    out.note = *why;
    return out;
  }
  char bus[64] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_device) != cudaSuccess) {
    (void)cudaGetLastError();  // not sticky; leave no error behind for the next check
    out.note = fmt::format("NVML: the PCI bus id of CUDA device {} is unknown", cuda_device);
    return out;
  }
  return open_nvml_at(bus);
}

NvmlOpen open_nvml_at(const std::string& bus) {
  NvmlOpen out;
  if (auto why = not_usable()) {
    out.note = *why;
    return out;
  }
  const NvmlApi& a = api();
  nvmlDevice_t device{};
  if (const nvmlReturn_t rc = a.by_pci_bus_id(bus.c_str(), &device); rc != NVML_SUCCESS) {
    out.note = fmt::format("NVML: no device at PCI bus id {} ({})", bus, a.say(rc));
    return out;
  }
  // One reading up front: a device whose every query NVML refuses (no permission) says so
  // here, once, instead of giving a result with empty sensors.
  auto source = std::make_unique<NvmlSource>(a, device);
  SensorSample probe;
  if (!source->read(probe)) {
    out.note = fmt::format("NVML: the device at PCI bus id {} gives no readings", bus);
    return out;
  }
  out.source = std::move(source);
  return out;
}

bool nvml_built() { return true; }

#else

NvmlOpen open_nvml(int) {
  NvmlOpen out;
  out.note = kNvmlNotBuilt;  // HARNESS_NVML=0 or not: "not built" says more
  return out;
}

NvmlOpen open_nvml_at(const std::string&) { return open_nvml(0); }

bool nvml_built() { return false; }

#endif

}  // namespace harness
