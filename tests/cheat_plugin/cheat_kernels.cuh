#pragma once
// Kernels of the cheating variants (tests only). Each launcher returns the launch status.
#include <cstddef>

#include <cuda_runtime_api.h>

namespace cheat {

// out[i] = 2 * x[i]: the honest work every cheater also does (or pretends to).
cudaError_t launch_double(const float* x, float* out, std::size_t n, cudaStream_t s);
// The same, each block first spinning `spin_ns` nanoseconds: long enough to still be
// running when the launch stream (and so the timing's end event) has finished.
cudaError_t launch_double_slow(const float* x, float* out, std::size_t n, long long spin_ns, cudaStream_t s);

}  // namespace cheat
