#pragma once
// Hopper shared-memory barriers with transaction counts (mbarrier, sm_90): the completion
// mechanism of TMA loads and the hand-over between producer and consumer warps.
// `bar` is a shared-memory address (smem_u32) of an 8-byte aligned uint64_t.
#include <cstdint>

#include "arch/smem.cuh"

namespace kernels::arch {

__device__ __forceinline__ void mbar_init(std::uint32_t bar, std::uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// Makes the initialised barriers visible to the other threads and to the async proxy
// (TMA), cluster-wide; follow with a block or cluster barrier.
__device__ __forceinline__ void mbar_fence_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// Arrives once and adds `bytes` to the transaction count of the current phase (the TMA
// copies completing on this barrier count them down).
__device__ __forceinline__ void mbar_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(std::uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// The shared::cluster address of shared offset `addr` in CTA `rank` of the cluster (mapa).
__device__ __forceinline__ std::uint32_t cluster_smem_addr(std::uint32_t addr, std::uint32_t rank) {
  std::uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(addr), "r"(rank));
  return remote;
}
// Arrive on the mbarrier at shared offset `bar` of CTA `rank` of the cluster, with the default
// semantics (release at CTA scope), as CUTLASS's ClusterBarrier::arrive(cta_id): for releasing
// a buffer that only the async proxy (wgmma) read, after the thread waited for that read to
// complete. Not .release.cluster: its cluster-scope fence showed in ncu as a membar stall of
// ~4.5 cycles per issued instruction and made the attention forward's cluster kernel 2.04x
// slower (session 14), and was the GEMM cluster path's 1.7x (session 15); that wrapper is gone.
__device__ __forceinline__ void mbar_arrive_cluster_cta_scope(std::uint32_t bar, std::uint32_t rank) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_smem_addr(bar, rank)) : "memory");
}
// Spins until the phase of parity `parity` of the barrier has completed (a freshly
// initialised barrier counts as having completed the phase of parity 1).
__device__ __forceinline__ void mbar_wait(std::uint32_t bar, std::uint32_t parity) {
  std::uint32_t done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}

}  // namespace kernels::arch
