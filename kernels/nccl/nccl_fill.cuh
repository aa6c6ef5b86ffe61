#pragma once
// Device-side fill of a rank's input with collectives.hpp's fill_value (f32 or bf16).
#include <cstddef>

#include <cuda_runtime_api.h>

namespace kernels::nccl {

enum class Dtype { f32, bf16 };
inline std::size_t elem_bytes(Dtype t) { return t == Dtype::f32 ? 4 : 2; }

// dst[j] = fill_value(rank, index0 + j), j < n. One thread per element (grid-stride).
cudaError_t fill_pattern(Dtype t, void* dst, std::size_t n, int rank, std::size_t index0, cudaStream_t stream);

}  // namespace kernels::nccl
