#include "hopper_support.hpp"

#include <array>
#include <atomic>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "arch/tma_map.hpp"

namespace kernels::attention::detail {

const char* hopper_device_unsupported(bool backward) {
  enum : int { kUnknown = 0, kOk, kNotSm90, kNoEncoder };
  static std::array<std::atomic<int>, 64> verdicts{};  // per device ordinal
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return "no CUDA device to query";
  }
  std::atomic<int>* cached = device >= 0 && device < static_cast<int>(verdicts.size()) ? &verdicts[device] : nullptr;
  int verdict = cached ? cached->load(std::memory_order_relaxed) : kUnknown;
  if (verdict == kUnknown) {
    int major = 0, minor = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
      (void)cudaGetLastError();
      return "no CUDA device to query";
    }
    verdict = major != 9 || minor != 0                          ? kNotSm90
              : kernels::arch::tensor_map_encoder() == nullptr ? kNoEncoder
                                                                : kOk;
    if (cached) cached->store(verdict, std::memory_order_relaxed);
  }
  switch (verdict) {
    case kNotSm90:
      return backward ? "the Hopper (wgmma) flash backward needs an sm_90 GPU (H100, H200)"
                      : "the Hopper (wgmma) flash forward needs an sm_90 GPU (H100, H200)";
    case kNoEncoder: return "the driver has no cuTensorMapEncodeTiled (TMA)";
    default: return nullptr;
  }
}

bool head_tensor_map(CUtensorMap* map, bool half_floats, const void* base, int d, int n, long long heads,
                     int box_rows) {
  return head_tensor_map(map, half_floats ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, base,
                         d, n, heads, box_rows);
}

bool head_tensor_map(CUtensorMap* map, CUtensorMapDataType type, int elem_bytes, const void* base, int d, int n,
                     long long heads, int box_rows) {
  const std::uint64_t e = static_cast<std::uint64_t>(elem_bytes);
  const std::uint64_t dims[3] = {static_cast<std::uint64_t>(d), static_cast<std::uint64_t>(n),
                                 static_cast<std::uint64_t>(heads)};
  const std::uint64_t strides[2] = {static_cast<std::uint64_t>(d) * e, static_cast<std::uint64_t>(n) * d * e};
  const std::uint32_t box[3] = {static_cast<std::uint32_t>(128 / elem_bytes), static_cast<std::uint32_t>(box_rows), 1};
  return kernels::arch::encode_tensor_map_cached(map, type, 3, base, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B);
}

}  // namespace kernels::attention::detail
