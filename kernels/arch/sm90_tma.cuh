#pragma once
// Hopper bulk tensor copies (TMA, cp.async.bulk.tensor, sm_90): tiles between global and
// shared memory described by a CUtensorMap (made on the host: tma_map.hpp), loads completing
// on an mbarrier (sm90_mbarrier.cuh), stores tracked in bulk groups. The map is passed to
// the kernel by value as a `const __grid_constant__ CUtensorMap` parameter.
// Coordinates are element indices, innermost dimension first; parts of a box outside the
// tensor are zero-filled on load (and still count their bytes on the barrier) and not
// written on store.
#include <cstdint>

#include <cuda.h>  // CUtensorMap (header only: nothing links libcuda)

namespace kernels::arch {

__device__ __forceinline__ std::uint64_t map_ptr(const CUtensorMap* map) {
  return reinterpret_cast<std::uint64_t>(map);
}

// 2-D box at (c0, c1) -> shared `dst`, completion on mbarrier `bar`.
__device__ __forceinline__ void tma_load_2d(std::uint32_t dst, const CUtensorMap* map, int c0, int c1,
                                            std::uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
      "l"(map_ptr(map)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}
// 3-D box at (c0, c1, c2).
__device__ __forceinline__ void tma_load_3d(std::uint32_t dst, const CUtensorMap* map, int c0, int c1, int c2,
                                            std::uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(dst),
      "l"(map_ptr(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
      : "memory");
}
// 2-D load multicast: the box lands at the same shared offset in every CTA of the cluster
// named in `mask`, completing its bytes on the mbarrier at offset `bar` there.
__device__ __forceinline__ void tma_load_2d_multicast(std::uint32_t dst, const CUtensorMap* map, int c0, int c1,
                                                      std::uint32_t bar, std::uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
      "l"(map_ptr(map)), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
      : "memory");
}

// 3-D load multicast: the box at (c0, c1, c2) lands at shared offset `dst` of every CTA of
// the cluster named in `mask`, completing its bytes on the mbarrier at offset `bar` there.
__device__ __forceinline__ void tma_load_3d_multicast(std::uint32_t dst, const CUtensorMap* map, int c0, int c1,
                                                      int c2, std::uint32_t bar, std::uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3, %4}], [%5], %6;\n" ::"r"(dst),
      "l"(map_ptr(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar), "h"(mask)
      : "memory");
}

// 2-D / 3-D store shared `src` -> box at (c0, c1[, c2]), in the issuing thread's bulk group.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, std::uint32_t src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(map_ptr(map)),
               "r"(src), "r"(c0), "r"(c1)
               : "memory");
}
__device__ __forceinline__ void tma_store_3d(const CUtensorMap* map, std::uint32_t src, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(
                   map_ptr(map)),
               "r"(src), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}
// 3-D reduce-add shared `src` into the box at (c0, c1, c2) of global memory (element type
// and swizzle from the map; f32 adds are performed in L2, element-wise atomic), in the
// issuing thread's bulk group; rows outside the tensor are not written.
__device__ __forceinline__ void tma_reduce_add_3d(const CUtensorMap* map, std::uint32_t src, int c0, int c1, int c2) {
  asm volatile("cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(
                   map_ptr(map)),
               "r"(src), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// The issued bulk stores have finished reading shared memory (the buffer may be reused).
__device__ __forceinline__ void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }
// The issued bulk stores are complete (written to global memory).
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
// Generic-proxy shared-memory writes (st.shared, stmatrix) become visible to the async
// proxy (TMA, wgmma): each writing thread, before the barrier that hands the data over.
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// The same for global memory: generic-proxy writes (and reads) of global memory ordered
// before the async proxy's later accesses (TMA reduce-adds into data that plain stores
// initialised).
__device__ __forceinline__ void fence_proxy_async_global() { asm volatile("fence.proxy.async.global;\n" ::: "memory"); }

}  // namespace kernels::arch
