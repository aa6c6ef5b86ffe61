#include "measure/clock_probe.hpp"

namespace harness::clocks {
namespace {

constexpr unsigned long long kSpinNs = 20000;

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void probe_kernel(unsigned long long* out) {
  const unsigned long long t0 = global_ns();
  const long long c0 = clock64();
  unsigned long long t1 = t0;
  while (t1 - t0 < kSpinNs) t1 = global_ns();
  const long long c1 = clock64();
  out[0] = static_cast<unsigned long long>(c1 - c0);
  out[1] = t1 - t0;
}

}  // namespace

cudaError_t probe(unsigned long long* out, cudaStream_t stream) {
  if (out == nullptr) return cudaErrorInvalidValue;
  probe_kernel<<<1, 1, 0, stream>>>(out);
  return cudaGetLastError();
}

}  // namespace harness::clocks
