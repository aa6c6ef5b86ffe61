#pragma once
// Deliberately broken kernels for the reliability tests. Each launcher returns the launch
// status; the faults surface at the next synchronization.
#include <cstddef>

#include <cuda_runtime_api.h>

namespace broken {

// out[i] = 2 * x[i], correct: the control.
cudaError_t launch_good(const float* x, float* out, std::size_t n, cudaStream_t s);
// Writes far past the end of `out`: an illegal address.
cudaError_t launch_out_of_bounds(float* out, std::size_t n, cudaStream_t s);
// Spins forever (until the process is killed).
cudaError_t launch_infinite_loop(float* out, std::size_t n, cudaStream_t s);
// Fails a device-side assert.
cudaError_t launch_device_assert(float* out, std::size_t n, cudaStream_t s);
// Writes NaN everywhere.
cudaError_t launch_nan(float* out, std::size_t n, cudaStream_t s);

}  // namespace broken
