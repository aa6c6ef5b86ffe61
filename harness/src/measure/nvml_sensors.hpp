#pragma once
// NVML, the driver's management library, as a SensorSource. Optional twice over: at build
// time (nvml.h found by CMake: HARNESS_HAVE_NVML; without it a stub that says so) and at
// run time (libnvidia-ml.so.1 is opened with dlopen, so a machine whose driver lacks it,
// or whose NVML refuses, gets a note and the clock probe, never a failure, and the
// harness never links against the driver's library).
#include <memory>
#include <string>

#include "measure/sensors.hpp"

namespace harness {

struct NvmlOpen {
  std::unique_ptr<SensorSource> source;  // null when NVML cannot be used
  std::string note;                      // why not ("NVML: ..."); empty when used
};

// Opens NVML for CUDA device `cuda_device` (matched by PCI bus id, which is what both
// APIs agree on whatever CUDA_VISIBLE_DEVICES says). HARNESS_NVML=0 turns it off.
NvmlOpen open_nvml(int cuda_device);
// The same for the device at a PCI bus id ("0000:01:00.0"; exposed for the tests, which
// open a fake NVML through HARNESS_NVML_LIBRARY=path, read once per process).
NvmlOpen open_nvml_at(const std::string& pci_bus_id);
// Whether this build has the NVML code (nvml.h was found at build time).
bool nvml_built();

inline constexpr const char* kNvmlNotBuilt = "NVML: not built (nvml.h not found at build time)";

}  // namespace harness
