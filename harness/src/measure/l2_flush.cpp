#include "measure/l2_flush.hpp"

#include <algorithm>

#include "harness/cuda_check.hpp"
#include "profile/peaks.hpp"

namespace harness {

L2Flusher::L2Flusher() {
  int device = 0, l2 = 0;
  HARNESS_CUDA(cudaGetDevice(&device));
  HARNESS_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  const std::size_t bytes = std::max<std::size_t>(2 * static_cast<std::size_t>(l2), std::size_t{1} << 20) / 16 * 16;
  floats_ = bytes / sizeof(float);
  HARNESS_CUDA(cudaMalloc(reinterpret_cast<void**>(&buffer_), bytes));
  HARNESS_CUDA(cudaMalloc(reinterpret_cast<void**>(&sink_), sizeof(float)));
  HARNESS_CUDA(cudaMemset(buffer_, 0, bytes));
}

L2Flusher::~L2Flusher() {
  if (buffer_) HARNESS_CUDA_NOTHROW(cudaFree(buffer_));
  if (sink_) HARNESS_CUDA_NOTHROW(cudaFree(sink_));
}

void L2Flusher::flush(cudaStream_t stream) {
  // The buffer holds zeros: the sum is never 1, so the kernel writes nothing.
  HARNESS_CUDA(peaks::read(buffer_, floats_, 1.0f, sink_, stream));
}

}  // namespace harness
