#pragma once
// Where a report was measured: GPU, driver, host, harness build, time, command line.
#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace harness {

struct DeviceInfo {
  bool available = false;
  std::string unavailable_reason;  // "no CUDA device (cudaGetDeviceCount: ...)"
  int index = 0;
  std::string name;
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  double memory_gib = 0;
  int l2_bytes = 0;
  int sm_clock_mhz = 0;      // maximum SM clock
  int memory_clock_mhz = 0;
  int memory_bus_bits = 0;
  int driver_version = 0;    // 13000 = 13.0
  int runtime_version = 0;
};

// Probes device `index` (no context is created when there is none).
DeviceInfo probe_device(int index);

std::string harness_version();   // "0.1.0"
std::string harness_commit();    // git commit of the build, "-dirty" when modified
std::string utc_timestamp();     // 2026-11-22T03:04:05Z
std::string host_name();
std::string cpu_model();
// Host memory a new allocation can take without swapping (/proc/meminfo MemAvailable),
// or nothing where that cannot be read.
std::optional<std::size_t> host_memory_available();

nlohmann::json environment_json(const DeviceInfo& device, const std::string& command_line);

}  // namespace harness
