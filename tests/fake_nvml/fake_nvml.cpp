// A fake libnvidia-ml.so.1 for the CPU tests of measure/nvml_sensors.cpp (issue 33): the
// functions the harness resolves, with nvml.h's signatures, answering as a power-capped
// H200 (1470 of 1980 MHz, 698 W, 61 C, sw_power_cap; 700 W on the energy counter). One
// device, at PCI bus id 0000:01:00.0. Built only where nvml.h was found.
#include <nvml.h>

#include <chrono>
#include <cstring>

namespace {
bool initialised = false;
char device_tag;  // the one device's handle points here
std::chrono::steady_clock::time_point t0;

nvmlDevice_t the_device() { return reinterpret_cast<nvmlDevice_t>(&device_tag); }
}  // namespace

extern "C" {

nvmlReturn_t nvmlInit_v2() {
  initialised = true;
  t0 = std::chrono::steady_clock::now();
  return NVML_SUCCESS;
}

const char* nvmlErrorString(nvmlReturn_t rc) { return rc == NVML_ERROR_NOT_FOUND ? "Not Found" : "fake NVML error"; }

nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* bus, nvmlDevice_t* device) {
  if (!initialised) return NVML_ERROR_UNINITIALIZED;
  if (std::strcmp(bus, "0000:01:00.0") != 0) return NVML_ERROR_NOT_FOUND;
  *device = the_device();
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* mhz) {
  if (device != the_device() || type != NVML_CLOCK_SM) return NVML_ERROR_INVALID_ARGUMENT;
  *mhz = 1470;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* mhz) {
  if (device != the_device() || type != NVML_CLOCK_SM) return NVML_ERROR_INVALID_ARGUMENT;
  *mhz = 1980;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* milliwatts) {
  if (device != the_device()) return NVML_ERROR_INVALID_ARGUMENT;
  *milliwatts = 698000;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensor, unsigned int* celsius) {
  if (device != the_device() || sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  *celsius = 61;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long* reasons) {
  if (device != the_device()) return NVML_ERROR_INVALID_ARGUMENT;
  *reasons = nvmlClocksEventReasonSwPowerCap;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long* millijoules) {
  if (device != the_device()) return NVML_ERROR_INVALID_ARGUMENT;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  *millijoules = static_cast<unsigned long long>(700.0 * s * 1e3);  // 700 W since nvmlInit
  return NVML_SUCCESS;
}

}  // extern "C"
