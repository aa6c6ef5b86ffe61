#pragma once
// The one L2 flusher: before each sample in cold-cache mode (timing and the profiling
// pass alike), it reads a buffer twice the L2's size. Reading, unlike a memset, leaves
// no dirty lines whose write-back would land in the next kernel's time or in its
// dram__bytes_write counter.
#include <cstddef>

#include <cuda_runtime_api.h>

namespace harness {

class L2Flusher {
 public:
  L2Flusher();  // allocates on the current device; throws CudaError
  ~L2Flusher();
  L2Flusher(const L2Flusher&) = delete;
  L2Flusher& operator=(const L2Flusher&) = delete;
  void flush(cudaStream_t stream);  // enqueues the reads (does not synchronize)

 private:
  float* buffer_ = nullptr;
  float* sink_ = nullptr;
  std::size_t floats_ = 0;
};

}  // namespace harness
