// cub::DeviceHistogram, the vendor reference.
#include <climits>

#include <cub/device/device_histogram.cuh>

#include "histogram/histogram.hpp"

namespace kernels::histogram {

cudaError_t launch_cub(Bins bins, const unsigned char* x, std::size_t n, unsigned* counts, void* scratch,
                       std::size_t* scratch_bytes, cudaStream_t stream) {
  if (n == 0 || n > static_cast<std::size_t>(INT_MAX)) return cudaErrorInvalidValue;
  const int items = static_cast<int>(n);
  if (bins == Bins::bytes)
    return cub::DeviceHistogram::HistogramEven(scratch, *scratch_bytes, x, counts, 257, 0, 256, items, stream);
  // HistogramRange reads its levels from device memory: scratch holds them in its first
  // 256 bytes (uploaded on every run, 32 bytes inside the timed region), then CUB's
  // temporary storage (256-byte aligned).
  static const int kLevels[8] = {'a', 'e', 'i', 'm', 'q', 'u', 'y', 'z' + 1};
  if (scratch == nullptr) {
    std::size_t bytes = 0;
    cudaError_t e = cub::DeviceHistogram::HistogramRange(nullptr, bytes, x, counts, 8, static_cast<const int*>(nullptr),
                                                         items, stream);
    *scratch_bytes = bytes + 256 + sizeof kLevels;
    return e;
  }
  int* levels = static_cast<int*>(scratch);
  if (cudaError_t e = cudaMemcpyAsync(levels, kLevels, sizeof kLevels, cudaMemcpyHostToDevice, stream);
      e != cudaSuccess)
    return e;
  void* temp = static_cast<char*>(scratch) + 256;
  std::size_t temp_bytes = *scratch_bytes - 256 - sizeof kLevels;
  return cub::DeviceHistogram::HistogramRange(temp, temp_bytes, x, counts, 8, levels, items, stream);
}

}  // namespace kernels::histogram
