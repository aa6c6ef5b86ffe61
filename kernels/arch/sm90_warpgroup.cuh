#pragma once
// Hopper warp specialization and clusters (sm_90; setmaxnreg needs sm_90a): register
// hand-over between warpgroups, named barriers, cluster rank and synchronisation.
#include <cstdint>

namespace kernels::arch {

// setmaxnreg: the executing warpgroup's per-thread register budget becomes kRegs (a
// multiple of 8 in [24, 256]). Takes effect only when the kernel starts with a register
// cap (__launch_bounds__(threads, 1)) and each role is one branch of an if/else.
template <int kRegs>
__device__ __forceinline__ void warpgroup_reg_alloc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void warpgroup_reg_dealloc() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

// Named barrier `id` over `n` threads (id 0 is __syncthreads'; n a multiple of 32).
__device__ __forceinline__ void named_bar_sync(int id, int n) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}
// Arrive at named barrier `id` without waiting (a producer signalling a consumer).
__device__ __forceinline__ void named_bar_arrive(int id, int n) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}

__device__ __forceinline__ std::uint32_t cluster_ctarank() {
  std::uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ std::uint32_t cluster_nctarank() {
  std::uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(r));
  return r;
}
// All threads of all CTAs of the cluster (a plain launch is a cluster of one).
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}

}  // namespace kernels::arch
