#pragma once
// Host side of TMA: CUtensorMap encoding through the driver's cuTensorMapEncodeTiled,
// reached through the runtime (cudaGetDriverEntryPointByVersion), so nothing links libcuda.
#include <cstdint>

#include <cuda.h>
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled_v12000 (cuda.h does not declare it)

namespace kernels::arch {

// The driver's encoder, or nullptr where the driver has none (then TMA cannot be used).
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder();

// A tiled map of a dense tensor of `rank` (1..5) dimensions, innermost first: dims[i]
// elements, strides[i] bytes between consecutive indices of dimension i + 1 (rank - 1
// entries, multiples of 16), boxes of box[i] elements; out-of-bounds box elements read as
// zero. Returns false when the driver rejects it (alignment, box limits) or has no encoder.
bool encode_tensor_map(CUtensorMap* map, CUtensorMapDataType type, int rank, const void* base,
                       const std::uint64_t* dims, const std::uint64_t* strides, const std::uint32_t* box,
                       CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B);

// encode_tensor_map through a small host cache keyed by every argument (the launch paths
// of the wgmma GEMM and the Hopper attention kernels call it per launch: a hit costs a
// lookup instead of a driver call).
bool encode_tensor_map_cached(CUtensorMap* map, CUtensorMapDataType type, int rank, const void* base,
                              const std::uint64_t* dims, const std::uint64_t* strides, const std::uint32_t* box,
                              CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B);

}  // namespace kernels::arch
