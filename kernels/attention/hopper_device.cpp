#include "hopper_device.hpp"

#include <cuda_runtime_api.h>

#include "arch/tma_map.hpp"

namespace kernels::attention::detail {

const char* hopper_device_unsupported(bool backward) {
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return "no CUDA device to query";
  }
  if (major != 9 || minor != 0)
    return backward ? "the Hopper (wgmma) flash backward needs an sm_90 GPU (H100, H200)"
                    : "the Hopper (wgmma) flash forward needs an sm_90 GPU (H100, H200)";
  if (kernels::arch::tensor_map_encoder() == nullptr) return "the driver has no cuTensorMapEncodeTiled (TMA)";
  return nullptr;
}

}  // namespace kernels::attention::detail
