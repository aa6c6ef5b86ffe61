#include "types/environment.hpp"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <thread>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

namespace harness {

std::optional<std::size_t> host_memory_available() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::size_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * std::size_t{1024};
  return std::nullopt;
}

DeviceInfo probe_device(int index) {
  DeviceInfo d;
  d.index = index;
  (void)cudaDriverGetVersion(&d.driver_version);
  (void)cudaRuntimeGetVersion(&d.runtime_version);
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    d.unavailable_reason = fmt::format("no CUDA device (cudaGetDeviceCount: {})", cudaGetErrorString(e));
    return d;
  }
  if (count == 0) {
    d.unavailable_reason = "no CUDA device";
    return d;
  }
  if (index < 0 || index >= count) {
    d.unavailable_reason = fmt::format("no CUDA device {} (this machine has {})", index, count);
    return d;
  }
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, index) != cudaSuccess) {
    d.unavailable_reason = "cudaGetDeviceProperties failed";
    return d;
  }
  d.available = true;
  d.name = p.name;
  d.sm_count = p.multiProcessorCount;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.memory_gib = static_cast<double>(p.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0);
  d.l2_bytes = p.l2CacheSize;
  d.memory_bus_bits = p.memoryBusWidth;
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, index) == cudaSuccess) d.sm_clock_mhz = khz / 1000;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, index) == cudaSuccess) d.memory_clock_mhz = khz / 1000;
  return d;
}

std::string harness_version() { return HARNESS_VERSION; }
std::string harness_commit() { return HARNESS_GIT_COMMIT; }

std::string utc_timestamp() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  return "unknown";
}

nlohmann::json environment_json(const DeviceInfo& d, const std::string& command_line) {
  nlohmann::json gpu;
  if (d.available) {
    gpu = {{"index", d.index},
           {"name", d.name},
           {"sm_count", d.sm_count},
           {"compute_capability", fmt::format("{}.{}", d.cc_major, d.cc_minor)},
           {"memory_gib", d.memory_gib},
           {"l2_bytes", d.l2_bytes},
           {"sm_clock_max_mhz", d.sm_clock_mhz},
           {"memory_clock_mhz", d.memory_clock_mhz},
           {"memory_bus_bits", d.memory_bus_bits}};
  } else {
    gpu = nullptr;
  }
  auto version = [](int v) { return v ? fmt::format("{}.{}", v / 1000, (v % 1000) / 10) : std::string("none"); };
  return {{"gpu", gpu},
          {"gpu_unavailable_reason", d.available ? "" : d.unavailable_reason},
          {"cuda_driver", version(d.driver_version)},
          {"cuda_runtime", version(d.runtime_version)},
          {"host", host_name()},
          {"cpu", cpu_model()},
          {"cpu_threads", std::thread::hardware_concurrency()},
          {"harness_version", harness_version()},
          {"git_commit", harness_commit()},
          {"date", utc_timestamp()},
          {"command_line", command_line}};
}

}  // namespace harness
