#pragma once
// The SM clock, measured without NVML: one thread spins on one SM for ~20 us of
// %globaltimer (nanoseconds) and counts clock64() cycles meanwhile; cycles / ns is the
// clock in GHz. %globaltimer ticks coarsely (1 us on some parts), hence the 20 us.
#include <cuda_runtime_api.h>

namespace harness::clocks {

// Enqueues one probe on `stream`; it writes {cycles, nanoseconds} to out[0], out[1].
cudaError_t probe(unsigned long long* out, cudaStream_t stream);

}  // namespace harness::clocks
