// cub::DeviceScan::InclusiveSum, the vendor reference (float and uint32 only).
#include <climits>

#include <cub/device/device_scan.cuh>

#include "scan/scan.hpp"

namespace kernels::scan {

cudaError_t launch_cub(Elem elem, const void* x, void* y, std::size_t n, void* scratch, std::size_t* scratch_bytes,
                       cudaStream_t stream) {
  if (n == 0 || n > static_cast<std::size_t>(INT_MAX)) return cudaErrorInvalidValue;
  const int items = static_cast<int>(n);
  if (elem == Elem::f32)
    return cub::DeviceScan::InclusiveSum(scratch, *scratch_bytes, static_cast<const float*>(x), static_cast<float*>(y),
                                         items, stream);
  return cub::DeviceScan::InclusiveSum(scratch, *scratch_bytes, static_cast<const unsigned*>(x),
                                       static_cast<unsigned*>(y), items, stream);
}

}  // namespace kernels::scan
