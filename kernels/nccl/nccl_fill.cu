#include <cuda_bf16.h>

#include "nccl/collectives.hpp"
#include "nccl/nccl_fill.cuh"

namespace kernels::nccl {
namespace {

// Grid-stride: 256 threads per block, at most 4096 blocks; any n (no tile).
template <class T>
__global__ void fill_kernel(T* dst, std::size_t n, int rank, std::size_t index0) {
  for (std::size_t j = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; j < n;
       j += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float v = fill_value(rank, index0 + j);
    if constexpr (sizeof(T) == 4) dst[j] = v;
    else dst[j] = __float2bfloat16(v);  // small integers: exact
  }
}

}  // namespace

cudaError_t fill_pattern(Dtype t, void* dst, std::size_t n, int rank, std::size_t index0, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  if (dst == nullptr || rank < 0) return cudaErrorInvalidValue;
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((n + 255) / 256, 4096));
  if (t == Dtype::f32) fill_kernel<<<blocks, 256, 0, stream>>>(static_cast<float*>(dst), n, rank, index0);
  else fill_kernel<<<blocks, 256, 0, stream>>>(static_cast<__nv_bfloat16*>(dst), n, rank, index0);
  return cudaGetLastError();
}

}  // namespace kernels::nccl
