#pragma once
// The STREAM benchmark's four kernels (McCalpin): memory-bound vector operations.
//   copy:  c[i] = a[i]                 2 arrays touched, 0 FLOP
//   scale: b[i] = q * c[i]             2 arrays touched, 1 FLOP
//   add:   c[i] = a[i] + b[i]          3 arrays touched, 1 FLOP
//   triad: a[i] = b[i] + q * c[i]      3 arrays touched, 2 FLOP
// Here every operation reads its inputs from `x` (and `y`) and writes `out`, so that one
// output buffer serves all four and no input is modified:
//   copy: out = x; scale: out = q*x; add: out = x + y; triad: out = x + q*y.
#include <cstddef>

#include <cuda_runtime_api.h>

namespace kernels::stream {

enum class Op { copy, scale, add, triad };

// Launches on `stream`; returns the launch status (cudaGetLastError after the launch).
cudaError_t launch(Op op, std::size_t n, float q, const float* x, const float* y, float* out,
                   cudaStream_t stream);

// The same operation on the host, multithreaded over `threads` threads.
void run_cpu(Op op, std::size_t n, float q, const float* x, const float* y, float* out,
             unsigned threads);

}  // namespace kernels::stream
