// FlashAttention backward on Hopper (sm_90a): TMA loads into 128B-swizzled shared memory
// behind an mbarrier ring, a producer warp and two consumer warpgroups (setmaxnreg), all
// five products on wgmma. bf16 or f16 tensors, f32 accumulation; dQ summed in f32.
//
// Three launches (the first and last shared with the FlashAttention-2 backward,
// flash_tc_passes.hpp):
//  1. preprocess: D = rowsum(dO * O) (f32) and dQacc = 0.
//  2. main, one CTA per (key block of kBN = 128 keys, query head, b); 384 threads:
//     warpgroup 0, the producer (setmaxnreg.dec 24): one thread loads K, V of the block once
//       (boxes {64 d, 128 keys}), then for every query tile i (kBM = 64 queries; causal:
//       from the tile holding the block's first key on) Q_i, dO_i (boxes {64 d, 64 rows})
//       into a ring of kStages stages (full / empty mbarriers); the producer's whole first
//       warp copies LSE_i (times log2 e) and D_i (64 floats each) into the stage with plain
//       loads and stores (rows of N floats have no 16-byte pitch for TMA at odd N) and each
//       lane arrives on the stage's full barrier (count 1 + 32: the TMA's expect_tx arrive
//       and the 32 lanes).
//     the producer's second warp, the dQ warp (one lane): per tile, once the consumers have
//       stored their dQ parts in shared memory (dq_full), adds them into dQacc with TMA
//       reduce-adds (cp.reduce.async.bulk.tensor .add, f32, performed in L2; rows >= N are
//       clipped) and frees the buffers once read (dq_empty).
//     warpgroups 1, 2, the consumers (setmaxnreg.inc 240): consumer c owns keys
//       [64 c, 64 c + 64) of the block; per query tile:
//         S^T  = K_c Q_i^T        wgmma m64n64k16 SS (both K-major)        32 f32 a thread
//         dP^T = V_c dO_i^T       wgmma m64n64k16 SS                       32 f32
//                                 (d = 64: RS, K_c and V_c held in registers; see below)
//         P^T  = exp2(c S^T - log2(e) LSE_q)  (causal: 0 where key > query), rounded to T
//         dS^T = P^T (dP^T - D_q), rounded to T; both stay in registers as RS A fragments
//         dV  += P^T dO_i         wgmma m64n{d}k16 RS, B = dO_i MN-major   d/2 f32 (whole block)
//         dK  += dS^T Q_i         wgmma m64n{d}k16 RS, B = Q_i MN-major    d/2 f32
//         dQ   = dS K             dS^T goes to shared memory (rows = keys, 128 bytes of 64
//                                 queries each, 128B-swizzled), A = dS (M-major, transposed
//                                 descriptor), B = K (MN-major); consumer c computes dQ
//                                 columns [d/2 c, d/2 c + d/2) over all 128 keys (the two
//                                 consumers meet at a named barrier once their dS^T halves
//                                 are written, dS double-buffered); d/4 f32 a thread, stored
//                                 to d/64 swizzled f32 boxes {32 columns, 64 queries} for the
//                                 dQ warp.
//       Ping-pong (kPP, off by default): named barriers make the consumers take turns issuing
//       S/dP and dV/dK/dQ, the dQ of tile i - 1 issued after tile i's dV/dK (kDelayDq). It
//       measured 2-4% slower at d = 128 (H200) and 10-12% slower at d = 64 (H100, with K, V
//       in registers), so it is kept for experiments only (HARNESS_BWD_PINGPONG=1).
//     dQ in an f32 workspace rather than a second pass: a pass per query block would
//     recompute S and dP (2 of the 5 products). The TMA reduce-adds replaced float2 atomics
//     from the consumers (B=4 H=16 N=4096 d=128 on H200: 4.18 -> 2.66 ms).
//     End: dK = scale dK, dV rounded to T and stored (keys < N); GQA: added into f32 sums
//     by float2 atomics (the heads of a group run in their own CTAs), rounded by pass 3.
//  3. round: dQ = scale dQacc (and the GQA sums) to T.
// Deterministic mode (counters in the workspace): the key blocks of a (b, h) add their dQ of
// a query tile into one of two partial sums (flash_hopper_backward_dq_chains), kb % 2, in the
// order kb = c, c + 2, ... (the dQ warp waits until the tile's counter of its chain reads
// kb / 2, reduce-adds, waits for completion, bumps it), and the round pass adds the sums in
// order; causal runs the tiles backwards so that
// all key blocks reach a tile at about the same step; GQA dK/dV are added in the order h % group (a
// counter per (b, kv head, key block)). Lower blocks are launched first, so no deadlock.
// Shared memory (d = 128, 2 stages): K 32 KB + V 32 KB + 2 x (Q 16 KB + dO 16 KB + 512 B)
// + dS 2 x 16 KB + dQ 2 x 16 KB = 194 KB; d = 64: 130 KB.
// Tails: TMA zero-fills rows past N (3-D maps (d, N, heads) for Q, K, V, dO); LSE and D of a
// query >= N are stored as 0. Such a query has Q = dO = 0 and LSE = D = 0: P = 1 there but dP = 0, so
// dS = 0 and P dO = 0: it adds nothing, and its dQ row is not written (the reduce clips it); keys >= N have K = V = 0 and
// are not stored. Causal needs the only mask.
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "arch/memory_order.cuh"
#include "arch/numeric.cuh"
#include "arch/sm80_ldmatrix.cuh"
#include "arch/sm90_mbarrier.cuh"
#include "arch/sm90_stmatrix.cuh"
#include "arch/sm90_tma.cuh"
#include "arch/sm90_warpgroup.cuh"
#include "arch/sm90_wgmma.cuh"
#include "arch/smem.cuh"
#include "arch/tma_map.hpp"
#include "attention.hpp"
#include "hopper_support.hpp"
#include "flash_tc_passes.hpp"

namespace kernels::attention {
namespace {

namespace arch = kernels::arch;

constexpr int kBN = 128;  // keys per CTA: 2 consumer warpgroups x 64
constexpr int kBM = 64;   // queries per step
constexpr int kConsumers = 2;
constexpr int kThreads = 128 * (1 + kConsumers);
constexpr int kBoxCols = 64;  // 16-bit elements per 128-byte swizzled row
constexpr float kLog2e = 1.4426950408889634f;
// Named barriers: 1 dS^T written by both consumers; 3 GQA deterministic; 4, 5 ping-pong
// turns; kLseFree + s: LSE/D of stage s read by the consumers.
constexpr int kLseFree = 7;

constexpr int kStages = 2;  // Q/dO ring stages

template <int kD, int kStages>
struct Layout {
  static constexpr int kBoxes = kD / kBoxCols;
  static constexpr int kKBox = kBN * 128;  // one {64 d, 128 keys} box of K or V
  static constexpr int kQBox = kBM * 128;  // one {64 d, 64 queries} box of Q or dO
  static constexpr int kKV = kBoxes * kKBox;
  static constexpr int kQT = kBoxes * kQBox;
  static constexpr int kDsBuf = kBN * 128;  // dS^T: 128 key rows of 64 queries
  static constexpr int kDsBufs = 2;
  static constexpr int kK = 0;
  static constexpr int kV = kK + kKV;
  static constexpr int kQ = kV + kKV;                    // kStages x Q tile
  static constexpr int kDO = kQ + kStages * kQT;         // kStages x dO tile
  static constexpr int kDs = kDO + kStages * kQT;        // dS^T buffers
  // dQ of a tile, f32, room for 2 boxes {32 columns, 64 queries} (128B-swizzled) of 8 KB per
  // consumer: its columns [d/2 c, d/2 c + d/2), kDqBoxes = d / 64 of them (d = 64 uses one;
  // the second is left as it was when the d = 64 partials took both, the layout measured).
  static constexpr int kDqBox = kBM * 128;
  static constexpr int kDqPer = 2 * kDqBox;
  static constexpr int kDq = kDs + kDsBufs * kDsBuf;
  static constexpr int kLse = kDq + kConsumers * kDqPer;  // kStages x 64 floats (LSE log2 e)
  static constexpr int kDelta = kLse + kStages * kBM * 4;  // kStages x 64 floats (D)
  static constexpr int kBars = kDelta + kStages * kBM * 4;  // kv_full, full[s], empty[s], dq_full[c], dq_empty[c]
  static constexpr int kSmem = kBars + 8 * (1 + 2 * kStages + 2 * kConsumers + 4) + 1024;
  static constexpr int kStageBytes = 2 * kQT;  // TMA bytes per stage: Q and dO
};

template <int kStages>
struct Bars {
  std::uint32_t base;
  __device__ std::uint32_t kv_full() const { return base; }
  __device__ std::uint32_t full(int s) const { return base + 8 * (1 + s); }
  __device__ std::uint32_t empty(int s) const { return base + 8 * (1 + kStages + s); }
  __device__ std::uint32_t dq_full(int c) const { return base + 8 * (1 + 2 * kStages + c); }
  __device__ std::uint32_t dq_empty(int c) const { return base + 8 * (1 + 2 * kStages + kConsumers + c); }
  // d = 128 ping-pong: dS^T buffer b written by both consumers / read by both dQ products.
  __device__ std::uint32_t ds_ready(int b) const { return base + 8 * (1 + 2 * kStages + 2 * kConsumers + b); }
  __device__ std::uint32_t ds_free(int b) const { return base + 8 * (3 + 2 * kStages + 2 * kConsumers + b); }
};


// d = 64 is bound by shared-memory bandwidth: an SS wgmma of n64 reads 4 KB in its 32 tensor
// cycles, all of the SM's 128 B/cycle. So there K_c and V_c are loaded once into registers
// (ldmatrix, 16 + 16 registers) as the A operands of S^T and dP^T (RS: 2 KB per k16 instead
// of 4). Shared-memory traffic per 64-query step and CTA, for 1280 tensor cycles (at 128 B a
// cycle: 1750 -> 1500 -> 1375 cycles): wgmma operand reads 128 KB, dS^T stores 16, dQ stores
// 32 and the TMA reduce's reads of them 32, Q and dO landing 16 = 224 KB; with K, V in
// registers 192 KB (measured H100: 5-6% faster); with dQ split by columns (issue_dq) 176 KB.
// (K_c^T in registers for dQ^T = K_c^T dS^T too, with dQ^T stored a float at a time, measured
// 10-15% slower and spilled.)
// kLean: the same products and arithmetic with fewer instructions around them, after ncu's
// source counters (H100, 2026-11-28, d = 64 B = 2 H = 16 N = 8192, per warp and 64-query
// tile): the session-15 kernel (kLean 0) executed 24 wgmmas with ~158 uniform-datapath
// instructions (ULOP3, USHF, UIADD3, UMOV: a descriptor built by make_smem_desc's masks and
// shifts for each wgmma) where cuDNN's bprop kernel executed ~77 around 20; 37 ISETP + 48 FSEL
// against 14 + 32 (the causal mask tests, if-converted, ran on every tile, causal or not); 24
// STS + 32 LOP3 against 4.5 STS + 4 STSM + 3 LOP3 (dS^T stored 4 bytes at a time). All three
// bits (7) are the default since session 17: 1,335 M -> 928 M warp instructions at that shape
// (cuDNN 1,255 M), 3.33 -> 3.04 ms under ncu at 1.83-1.84 GHz, and 4.4% / 5.0% faster over
// the nine N = 8192 backward shapes (6-8% at d = 64; H100, two old/new pairs, one process
// each). Bit 8 too at d = 64 since session 19 (below). HARNESS_BWD_LEAN=0, 1, 2, 4 or 7 takes
// another set (7 at d = 128: the default itself), for experiments
// (flash_hopper_backward_kernel_choice). Bits:
//   1: each operand's descriptor built once per tile and stepped by arch::smem_desc_advance;
//   2: the mask tests only on the tiles that need them (a branch on the warp-uniform `mask`);
//   4: dS^T stored by stmatrix, one 16 x 16 k slice (4 registers) a store;
//   8 (d = 64 only; with the other three, 15, the default there since session 19): the next
//     step's S^T and dP^T issued right after this step's dQ, before the wait for dV,
//     dK, dQ (wait_group 1 instead of 0); 32 + 32 more accumulators in flight, no spills.
//     Why: per 64-query step a CTA has 1280 tensor cycles of work (5 products of 64 x 128 x 64)
//     and took ~2800 (H100, d = 64 N = 8192: 3.04 ms at 1.84 GHz; ncu: tensor pipe ~40%
//     active): each warpgroup waits for all of dV, dK, dQ (768 tensor cycles for both), then
//     stores dQ, waits at the ring, issues S, dP (512) and waits again, so the tensor cores
//     idle at every step boundary. Early, they run S, dP of step i + 1 while the warpgroups
//     store dQ of step i. Measured (H200, 2026-11-28, B = 2 H = 16 N = 8192 d = 64, MHA and
//     GQA 16:2, causal and not, two lean-7 / lean-15 pairs, one process each): 14.4% faster
//     in both pairs (13.8-15.0% at each shape); beside cuDNN's SDPA in one process, non-causal,
//     1.078x and 1.081x (lean 7 in the same call: 0.931x, 0.917x). Static instructions
//     1544 -> 1600, no local memory.
template <class T, int kD, bool kPP, int kStages, int kLean = 0>
__global__ void __launch_bounds__(kThreads, 1)
    flash_hopper_backward_kernel(const __grid_constant__ CUtensorMap map_q, const __grid_constant__ CUtensorMap map_k,
                                 const __grid_constant__ CUtensorMap map_v, const __grid_constant__ CUtensorMap map_do,
                                 const __grid_constant__ CUtensorMap map_dq,
                                 const float* __restrict__ lse, const float* __restrict__ delta,
                                 T* __restrict__ dk, T* __restrict__ dv, float* __restrict__ dkv_acc, int heads,
                                 int group, int n, float c, float scale, int causal, int* __restrict__ dq_count,
                                 int* __restrict__ dkv_count, int dq_chains) {
  using L = Layout<kD, kStages>;
  constexpr bool kKVRegs = kD == 64;
  // dQ accumulators a consumer holds (its kD / 2 columns of the tile over all 128 keys), in
  // kDqBoxes f32 boxes {32 columns, 64 queries}.
  constexpr int kDqRegs = kD / 4;
  constexpr int kDqBoxes = kDqRegs / 16;
  // kLean bit 8 (part of the default) exists at d = 64 only: at d = 128, S and dP in
  // flight beside dV, dK (128 accumulators) and dQ (32) spill (ptxas: 264 bytes).
  constexpr bool kEarly = (kLean & 8) != 0 && !kPP && kD == 64;
  // kEarly's next S^T, dP^T read the other stage while this one is released: two stages at least.
  static_assert(!kEarly || kStages >= 2);
  // The descriptor of the operand at tile + off: kLean steps the tile's own descriptor (the
  // same for every k slice of a loop, so built once), else builds it whole.
  auto sdesc = [](std::uint32_t tile, std::uint32_t off, std::uint32_t lbo) {
    if constexpr ((kLean & 1) != 0) return arch::smem_desc_advance(arch::make_smem_desc(tile, lbo, 1024), off);
    else return arch::make_smem_desc(tile + off, lbo, 1024);
  };
  extern __shared__ unsigned char smem_raw[];
  const std::uint32_t base = (arch::smem_u32(smem_raw) + 1023u) & ~1023u;
  const Bars<kStages> bars{base + L::kBars};
  float* const lse_smem = reinterpret_cast<float*>(smem_raw + (base - arch::smem_u32(smem_raw)) + L::kLse);
  float* const delta_smem = reinterpret_cast<float*>(smem_raw + (base - arch::smem_u32(smem_raw)) + L::kDelta);

  const int tid = static_cast<int>(threadIdx.x);
  const int wg = tid / 128;
  const int k0 = static_cast<int>(blockIdx.x) * kBN;
  const int h = static_cast<int>(blockIdx.y), b = static_cast<int>(blockIdx.z);
  const int bh = b * heads + h;
  const int bkv = b * (heads / group) + h / group;
  const int n_qtiles = (n + kBM - 1) / kBM;
  const int first_tile = causal ? k0 / kBM : 0;  // causal: queries >= k0 see the block
  const int n_steps = n_qtiles - first_tile;
  // Deterministic (dq_count != nullptr): the key blocks of a (b, h) add their dQ of query tile
  // i in the order kb = c, c + dq_chains, ... into partial sum c = kb % dq_chains (a counter per
  // chain and tile; block kb waits until it reads kb / dq_chains; see the dQ warp). So
  // that all of them reach a tile at about the same step, causal runs the tiles backwards
  // (non-causal: every block starts at tile 0); lower kb are launched first, so no deadlock.
  // (A staggered schedule, each block adding a tile in the order the schedule reaches it,
  // measured 1.4-7.9x slower on an H100: the blocks of a head that straddles a wave wait a
  // whole CTA lifetime for the blocks launched in the next.)
  const bool det = dq_count != nullptr;
  const bool reverse = det && causal;
  auto tile_of = [&](int it) { return reverse ? n_qtiles - 1 - it : first_tile + it; };

  if (tid == 0) {
    arch::mbar_init(bars.kv_full(), 1);
    for (int s = 0; s < kStages; ++s) {
      arch::mbar_init(bars.full(s), 1 + 32);  // the expect_tx arrive and the LSE/D lanes
      arch::mbar_init(bars.empty(s), kConsumers * 4);  // one arrive per consumer warp
    }
    for (int cc = 0; cc < kConsumers; ++cc) {
      arch::mbar_init(bars.dq_full(cc), 4);  // one arrive per warp of consumer cc
      arch::mbar_init(bars.dq_empty(cc), 1);  // the dQ warp, once the reduce has read the buffer
    }
    for (int bf = 0; bf < 2; ++bf) {
      arch::mbar_init(bars.ds_ready(bf), 8);  // one arrive per consumer warp
      arch::mbar_init(bars.ds_free(bf), 8);
    }
    arch::mbar_fence_init();
  }
  __syncthreads();

  if (wg == 0) {
    // ---- producer ----
    arch::warpgroup_reg_dealloc<24>();
    if (tid < 32) {  // the first warp: lane 0 issues the TMA copies, all lanes copy LSE and D
      if (tid == 0) {
        arch::mbar_expect_tx(bars.kv_full(), 2 * L::kKV);
#pragma unroll
        for (int bx = 0; bx < L::kBoxes; ++bx) {
          arch::tma_load_3d(base + L::kK + bx * L::kKBox, &map_k, kBoxCols * bx, k0, bkv, bars.kv_full());
          arch::tma_load_3d(base + L::kV + bx * L::kKBox, &map_v, kBoxCols * bx, k0, bkv, bars.kv_full());
        }
      }
      for (int it = 0; it < n_steps; ++it) {
        const int i = tile_of(it);
        const int s = it % kStages;
        arch::mbar_wait(bars.empty(s), ((it / kStages) & 1) ^ 1u);
        // LSE/D of step it - kStages read by every consumer thread (named barrier kLseFree + s:
        // each consumer thread arrives after its reads, so the hand-over is per thread).
        if (it >= kStages) arch::named_bar_sync(kLseFree + s, 32 + 256);
        const int q0 = i * kBM;
        if (tid == 0) {
          arch::mbar_expect_tx(bars.full(s), L::kStageBytes);
#pragma unroll
          for (int bx = 0; bx < L::kBoxes; ++bx) {
            arch::tma_load_3d(base + L::kQ + s * L::kQT + bx * L::kQBox, &map_q, kBoxCols * bx, q0, bh,
                              bars.full(s));
            arch::tma_load_3d(base + L::kDO + s * L::kQT + bx * L::kQBox, &map_do, kBoxCols * bx, q0, bh,
                              bars.full(s));
          }
        }
#pragma unroll
        for (int e = 0; e < kBM / 32; ++e) {
          const int q = q0 + tid + 32 * e;
          const std::int64_t at = static_cast<std::int64_t>(bh) * n + q;
          lse_smem[s * kBM + tid + 32 * e] = q < n ? __ldg(lse + at) * kLog2e : 0.0f;
          delta_smem[s * kBM + tid + 32 * e] = q < n ? __ldg(delta + at) : 0.0f;
        }
        arch::mbar_arrive(bars.full(s));
      }
      for (int m = n_steps > kStages ? n_steps - kStages : 0; m < n_steps; ++m)  // the last steps' arrivals
        arch::named_bar_sync(kLseFree + m % kStages, 32 + 256);
    } else if (tid == 32) {
      // The dQ warp: per tile, once both consumers have written their dQ boxes, adds them into
      // dQacc with TMA reduce-adds (f32 in L2) and frees the buffers when they are read.
      // Deterministic with dq_chains > 1: block kb adds into partial sum kb % dq_chains (slice
      // z / (B H) of the (d, N, B H dq_chains) map), after block kb - dq_chains: chains of
      // n_kb / dq_chains blocks in a fixed order, summed in order by the round pass.
      const int kb = static_cast<int>(blockIdx.x);
      const int chain = det ? kb % dq_chains : 0, place = det ? kb / dq_chains : 0;
      const int dq_z = bh + chain * static_cast<int>(gridDim.y * gridDim.z);
      for (int it = 0; it < n_steps; ++it) {
        const int i = tile_of(it), q0 = i * kBM;
        int* const turn = det ? dq_count + static_cast<std::int64_t>(dq_z) * n_qtiles + i : nullptr;
        for (int cc = 0; cc < kConsumers; ++cc) arch::mbar_wait(bars.dq_full(cc), it & 1);
        if (det) {
          while (arch::ld_acquire_gpu(turn) != place) __nanosleep(64);
          arch::fence_proxy_async_global();
        }
        for (int cc = 0; cc < kConsumers; ++cc) {
#pragma unroll
          for (int bx = 0; bx < kDqBoxes; ++bx)
            arch::tma_reduce_add_3d(&map_dq, base + L::kDq + cc * L::kDqPer + bx * L::kDqBox, kD / 2 * cc + 32 * bx,
                                    q0, dq_z);
        }
        arch::bulk_commit();
        arch::bulk_wait_read();
        for (int cc = 0; cc < kConsumers; ++cc) arch::mbar_arrive(bars.dq_empty(cc));
        if (det) {
          arch::bulk_wait_all();
          arch::fence_proxy_async_global();
          __threadfence();
          arch::st_release_gpu(turn, place + 1);
        }
      }
      arch::bulk_wait_all();
    }
    return;
  }

  // ---- consumers ----
  arch::warpgroup_reg_alloc<240>();
  const int cw = wg - 1;  // keys [64 cw, 64 cw + 64) of the block
  const int lane = tid % 32, warp = (tid % 128) / 32, t = lane % 4;
  const int key_row = 16 * warp + lane / 4;  // this thread's key rows key_row, key_row + 8 (in the slab)
  const std::uint32_t k_slab = base + L::kK + static_cast<std::uint32_t>(cw) * 64 * 128;
  const std::uint32_t v_slab = base + L::kV + static_cast<std::uint32_t>(cw) * 64 * 128;

  float dv_acc[kD / 2], dk_acc[kD / 2];
#pragma unroll
  for (int i = 0; i < kD / 2; ++i) dv_acc[i] = dk_acc[i] = 0.0f;
  // d = 64: A fragments of K_c, V_c (rows = this warp's 16 keys, k16 slice kk of d), loaded once.
  std::uint32_t kf[4][4], vf[4][4];

  // dQ of step e (query tile tile_of(e)) -> this consumer's kDqBoxes swizzled f32 boxes for
  // the dQ warp (accumulator j: query row 16 warp + g + 8 ((j / 2) % 2), column
  // 8 (j / 4) + 2t + j % 2 of the consumer's kD / 2: box j / 16, 16-byte chunk
  // 2 ((j / 4) % 4) + t / 2 at chunk ^ g, 8 (t % 2) bytes in). Lanes with t / 2 = 1 store pair
  // j ^ 8 when the others store j, so that a half-warp's 8 16-byte chunks are distinct (no bank
  // conflict).
  auto emit_dq = [&](int e, float (&dq)[kDqRegs]) {
    arch::mbar_wait(bars.dq_empty(cw), (e & 1) ^ 1);
    const int g = lane / 4;
    const bool swap = (t & 2) != 0;
    const std::uint32_t dq_buf = base + L::kDq + cw * L::kDqPer;
#pragma unroll
    for (int j0 = 0; j0 < kDqRegs; j0 += 2) {
      const int j = swap ? j0 ^ 8 : j0;
      const int row = 16 * warp + g + 8 * ((j / 2) % 2);
      const int chunk = 2 * ((j / 4) % 4) + t / 2;
      const std::uint32_t addr = dq_buf + (j / 16) * L::kDqBox + row * 128 + ((chunk ^ g) * 16) + 8 * (t % 2);
      arch::st_shared_v2_f32(addr, swap ? dq[j0 ^ 8] : dq[j0], swap ? dq[(j0 ^ 8) + 1] : dq[j0 + 1]);
    }
    arch::fence_proxy_async();
    __syncwarp();
    if (lane == 0) arch::mbar_arrive(bars.dq_full(cw));
  };
  // dQ of the tile, columns [kD / 2 cw, +kD / 2) over all 128 keys (both halves of dS^T in
  // ds_buf; B = K's columns: d = 128 the consumer's box, d = 64 64 bytes into the 128-byte
  // swizzled rows). (d = 64 once had each consumer's full-width partial over its own 64 keys:
  // with K, V in registers that measured 3-6% slower on an H100, twice the f32 dQ stores and
  // reduce-adds for a narrower dS read.)
  auto issue_dq = [&](float (&dq)[kDqRegs], std::uint32_t ds_buf) {
    arch::wgmma_fence();
    const std::uint32_t k_cols = base + L::kK + (kD == 128 ? cw * L::kKBox : cw * 64);
#pragma unroll
    for (int kk = 0; kk < kBN / 16; ++kk)
      arch::wgmma_ss<T, kD / 2, 1, 1>(dq, sdesc(ds_buf, kk * 2048, 8192), sdesc(k_cols, kk * 2048, L::kKBox),
                                      kk > 0 ? 1 : 0);
    arch::wgmma_commit();
  };
  // Ping-pong (kPP): the consumers take turns issuing their products (named barriers
  // kTurn + c: S/dP of tile i by 0 then 1, dV/dK/dQ by 0 then 1), so that one's element-wise
  // work overlaps the other's products. It then adds the dQ of tile i - 1 (both dS^T halves
  // ready, mbarrier ds_ready) after tile i's dV/dK rather than waiting for the other
  // consumer's half of tile i.
  constexpr int kTurn = 4;
  constexpr bool kDelayDq = kPP;
  if (kPP && cw == 1) arch::named_bar_arrive(kTurn, 256);

  arch::mbar_wait(bars.kv_full(), 0);
  if constexpr (kKVRegs) {
    // ldmatrix rows: the slab's rows are keys of 128 bytes, 16-byte chunk c at c ^ (row % 8);
    // matrix l / 8 = keys 16 warp + 8 ((l / 8) % 2), d chunk 2 kk + l / 16.
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      const int row = 16 * warp + lane % 8 + 8 * ((lane / 8) % 2), chunk = 2 * kk + lane / 16;
      const std::uint32_t off = row * 128 + ((chunk ^ (row % 8)) * 16);
      arch::ldsm_x4(kf[kk], k_slab + off);
      arch::ldsm_x4(vf[kk], v_slab + off);
    }
  }
  // S^T = K_c Q^T and dP^T = V_c dO^T over d into (s_out, dp_out), from a stage's Q and dO
  // tiles (d = 64: K_c, V_c in registers, RS; d = 128: both operands in shared memory, SS).
  auto issue_s_dp = [&](auto& s_out, auto& dp_out, std::uint32_t q_tile, std::uint32_t do_tile) {
    if constexpr (kKVRegs) {
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
        arch::wgmma_rs<T, 64, 0>(s_out, kf[kk], sdesc(q_tile, kk * 32, 16), kk > 0 ? 1 : 0);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
        arch::wgmma_rs<T, 64, 0>(dp_out, vf[kk], sdesc(do_tile, kk * 32, 16), kk > 0 ? 1 : 0);
    } else {
#pragma unroll
      for (int kk = 0; kk < kD / 16; ++kk) {
        const std::uint32_t off = (kk / 4) * L::kKBox + (kk % 4) * 32, qoff = (kk / 4) * L::kQBox + (kk % 4) * 32;
        arch::wgmma_ss<T, 64, 0, 0>(s_out, sdesc(k_slab, off, 16), sdesc(q_tile, qoff, 16), kk > 0 ? 1 : 0);
      }
#pragma unroll
      for (int kk = 0; kk < kD / 16; ++kk) {
        const std::uint32_t off = (kk / 4) * L::kKBox + (kk % 4) * 32, qoff = (kk / 4) * L::kQBox + (kk % 4) * 32;
        arch::wgmma_ss<T, 64, 0, 0>(dp_out, sdesc(v_slab, off, 16), sdesc(do_tile, qoff, 16), kk > 0 ? 1 : 0);
      }
    }
  };
  // kEarly (bit 8): S^T and dP^T of step it + 1, issued at the end of step it into s_next,
  // dp_next (step 0's before the loop); d = 64 only (K_c, V_c in registers).
  float s_next[kEarly ? 32 : 1], dp_next[kEarly ? 32 : 1];
  auto issue_next = [&](int st) {
    if constexpr (kEarly) {
      arch::wgmma_fence();
      issue_s_dp(s_next, dp_next, base + L::kQ + st * L::kQT, base + L::kDO + st * L::kQT);
      arch::wgmma_commit();
    }
  };
  if constexpr (kEarly) {
    arch::mbar_wait(bars.full(0), 0);
    issue_next(0);
  }
  for (int it = 0; it < n_steps; ++it) {
    const int i = tile_of(it);
    const int st = it % kStages;
    const int q0 = i * kBM;
    if constexpr (!kEarly) arch::mbar_wait(bars.full(st), (it / kStages) & 1);
    const std::uint32_t q_tile = base + L::kQ + st * L::kQT, do_tile = base + L::kDO + st * L::kQT;

    // S^T = K_c Q^T and dP^T = V_c dO^T over d (kEarly: issued by the step before).
    float s[32], dp[32];
    if constexpr (!kEarly) {
    if (kPP) arch::named_bar_sync(kTurn + cw, 256);
    arch::wgmma_fence();
    issue_s_dp(s, dp, q_tile, do_tile);
    arch::wgmma_commit();
    if (kPP) arch::named_bar_arrive(kTurn + 1 - cw, 256);
    }
    arch::wgmma_wait<0>();
    if constexpr (kEarly) {
      arch::fence_regs(s_next);  // read only after the wait (the wgmma wrote them asynchronously)
      arch::fence_regs(dp_next);
#pragma unroll
      for (int j = 0; j < 32; ++j) s[j] = s_next[j], dp[j] = dp_next[j];
    }
    arch::fence_regs(s);
    arch::fence_regs(dp);

    // P^T and dS^T (accumulator j: key row key_row + 8 ((j / 2) % 2), query column
    // 8 (j / 4) + 2t + j % 2), packed as RS A fragments over the 64 queries (4 k16 slices).
    const float* lse2 = lse_smem + st * kBM;  // LSE log2(e) of the tile's queries
    const float* dl = delta_smem + st * kBM;
    const bool mask = causal && q0 < k0 + kBN;  // the tile can hold queries before some key
    std::uint32_t p[4][4], ds[4][4];
    // kMasked: the mask tests are compiled in (taken where `mask` holds); kLean bit 2 compiles
    // a second copy without them for the tiles that need none.
    auto p_and_ds = [&](auto masked) {
      constexpr bool kMasked = decltype(masked)::value;
#pragma unroll
      for (int jj = 0; jj < 8; ++jj) {  // 8-query column groups
        const float2 l2 = *reinterpret_cast<const float2*>(lse2 + 8 * jj + 2 * t);
        const float2 d2 = *reinterpret_cast<const float2*>(dl + 8 * jj + 2 * t);
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          const int j = 4 * jj + 2 * r;
          float p0 = arch::fast_exp2(fmaf(s[j], c, -l2.x));
          float p1 = arch::fast_exp2(fmaf(s[j + 1], c, -l2.y));
          if (kMasked && mask) {
            const int key = k0 + 64 * cw + key_row + 8 * r, q = q0 + 8 * jj + 2 * t;
            if (key > q) p0 = 0.0f;
            if (key > q + 1) p1 = 0.0f;
          }
          const float ds0 = p0 * (dp[j] - d2.x), ds1 = p1 * (dp[j + 1] - d2.y);
          // k16 slice jj / 2; a0/a1 (h = 0: queries 16 kk + 2t) or a2/a3 (h = 1: + 8), row r.
          p[jj / 2][r + 2 * (jj % 2)] = arch::pack2<T>(p0, p1);
          ds[jj / 2][r + 2 * (jj % 2)] = arch::pack2<T>(ds0, ds1);
        }
      }
    };
    if ((kLean & 2) != 0 && !mask) p_and_ds(std::false_type{});
    else p_and_ds(std::true_type{});
    arch::named_bar_arrive(kLseFree + st, 32 + 256);  // this thread is done with LSE/D of the stage

    // dV += P^T dO, dK += dS^T Q (B operands MN-major: k16 slice kk = queries 16 kk.. at
    // +2048 kk bytes, the next 64 d at the next box).
    if (kPP) arch::named_bar_sync(kTurn + cw, 256);
    arch::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
      arch::wgmma_rs<T, kD, 1>(dv_acc, p[kk], sdesc(do_tile, kk * 2048, L::kQBox));
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
      arch::wgmma_rs<T, kD, 1>(dk_acc, ds[kk], sdesc(q_tile, kk * 2048, L::kQBox));
    arch::wgmma_commit();

    // dS^T -> shared memory: row = key (64 cw + key_row + 8 r) of 64 queries (128 bytes),
    // 16-byte chunk jj at chunk jj ^ (row % 8) (the 128B swizzle the descriptor expects).
    const int buf = it & 1;  // dS^T double-buffered
    const std::uint32_t ds_buf = base + L::kDs + buf * L::kDsBuf;
    if (kDelayDq) arch::mbar_wait(bars.ds_free(buf), ((it >> 1) & 1) ^ 1);  // dQ of step it - 2 read it
    if constexpr ((kLean & 4) != 0) {
      // stmatrix: lane l gives row (l % 8) + 8 ((l / 8) % 2) of the warp's 16 keys, 16-byte
      // chunk 2 kk + l / 16 (matrices a0..a3 of k slice kk, as stsm_x4 reads them).
      const int row = 64 * cw + 16 * warp + lane % 8 + 8 * ((lane / 8) % 2);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
        arch::stsm_x4(ds_buf + row * 128 + (((2 * kk + lane / 16) ^ (row % 8)) * 16), ds[kk]);
    } else {
#pragma unroll
      for (int jj = 0; jj < 8; ++jj)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          const int row = 64 * cw + key_row + 8 * r;
          const std::uint32_t addr = ds_buf + row * 128 + ((jj ^ (row % 8)) * 16) + 4 * t;
          arch::st_shared_b32(addr, ds[jj / 2][r + 2 * (jj % 2)]);
        }
    }
    arch::fence_proxy_async();
    float dq[kDqRegs];
    if constexpr (kDelayDq) {
      __syncwarp();
      if (lane == 0) arch::mbar_arrive(bars.ds_ready(buf));
      // dQ of step it - 1 from the other buffer (issued at it = 0 too, on whatever the buffer
      // holds, and dropped: a wgmma under a branch would be serialized).
      if (it > 0) arch::mbar_wait(bars.ds_ready(buf ^ 1), ((it - 1) >> 1) & 1);
      issue_dq(dq, base + L::kDs + (buf ^ 1) * L::kDsBuf);
    } else {
      arch::named_bar_sync(1, 256);  // both dS^T halves written
      issue_dq(dq, ds_buf);
    }
    if (kPP && !(cw == 1 && it == n_steps - 1)) arch::named_bar_arrive(kTurn + 1 - cw, 256);
    if constexpr (kEarly) {
      // The next step's S^T and dP^T go in behind this step's dV, dK, dQ, so that the tensor
      // cores run them while this warpgroup stores dQ and crosses the step boundary;
      // wait_group 1: all but that last group done. The last step issues one too, on the other
      // stage's stale tile, and drops it (a wgmma under a branch would be serialized).
      if (it + 1 < n_steps) arch::mbar_wait(bars.full((it + 1) % kStages), ((it + 1) / kStages) & 1);
      issue_next((it + 1) % kStages);
      arch::wgmma_wait<1>();
    } else {
    arch::wgmma_wait<0>();  // dV, dK (and dQ) products done: the stage is free
    }
    arch::fence_regs(dq);
    arch::fence_regs(dv_acc);
    arch::fence_regs(dk_acc);
    __syncwarp();
    if (lane == 0) {
      arch::mbar_arrive(bars.empty(st));
      if (kDelayDq && it > 0) arch::mbar_arrive(bars.ds_free(buf ^ 1));
    }
    if (!kDelayDq) {
      emit_dq(it, dq);
    } else if (it > 0) {
      emit_dq(it - 1, dq);
    }
  }
  if constexpr (kEarly) arch::wgmma_wait<0>();  // the dropped S^T, dP^T of the last step
  if constexpr (kDelayDq) {  // the last step's dQ
    const int e = n_steps - 1, buf = e & 1;
    float dq[kDqRegs];
    arch::mbar_wait(bars.ds_ready(buf), (e >> 1) & 1);
    issue_dq(dq, base + L::kDs + buf * L::kDsBuf);
    arch::wgmma_wait<0>();
    arch::fence_regs(dq);
    emit_dq(e, dq);
  }

  // dK = scale dK, dV: this thread's key rows, pairs of columns (accumulator j as above).
  // GQA deterministic: the group's heads add into the sums in the order h % group (a counter
  // per (b, kv head, key block); lower heads are launched first).
  int* const dkv_turn = dkv_acc != nullptr && dkv_count != nullptr
                            ? dkv_count + static_cast<std::int64_t>(bkv) * gridDim.x + blockIdx.x
                            : nullptr;
  if (dkv_turn != nullptr) {
    if (tid == 128)
      while (arch::ld_acquire_gpu(dkv_turn) != h % group) __nanosleep(64);
    arch::named_bar_sync(3, 256);
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int key = k0 + 64 * cw + key_row + 8 * r;
    if (key >= n) continue;
    const std::int64_t off = (static_cast<std::int64_t>(bkv) * n + key) * kD + 2 * t;
#pragma unroll
    for (int j = 2 * r; j < kD / 2; j += 4) {
      const int col = 8 * (j / 4);
      if (dkv_acc == nullptr) {
        *reinterpret_cast<std::uint32_t*>(dk + off + col) = arch::pack2<T>(scale * dk_acc[j], scale * dk_acc[j + 1]);
        *reinterpret_cast<std::uint32_t*>(dv + off + col) = arch::pack2<T>(dv_acc[j], dv_acc[j + 1]);
      } else {  // GQA: f32 sums over the group's query heads, (B, kv heads, N, d) x 2
        const std::int64_t kv_elems = static_cast<std::int64_t>(gridDim.z) * (heads / group) * n * kD;
        atomicAdd(reinterpret_cast<float2*>(dkv_acc + off + col), make_float2(scale * dk_acc[j], scale * dk_acc[j + 1]));
        atomicAdd(reinterpret_cast<float2*>(dkv_acc + kv_elems + off + col), make_float2(dv_acc[j], dv_acc[j + 1]));
      }
    }
  }
  if (dkv_turn != nullptr) {
    __threadfence();
    arch::named_bar_sync(3, 256);
    if (tid == 128) arch::st_release_gpu(dkv_turn, h % group + 1);
  }
}

// The kernel's dynamic shared-memory limit, set once per kernel.
template <auto kKernel, int kSmem>
cudaError_t smem_attr() {
  static const cudaError_t e = cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
  return e;
}

// The kLean bits of the kernel flash_hopper_backward_kernel_choice names (read once per
// process): 15 by default, -1 for the ping-pong kernel.
int lean_bits() {
  static const int bits = [] {
    const std::string choice = flash_hopper_backward_kernel_choice();
    if (choice == "ping-pong") return -1;
    if (choice == "default") return 15;  // bit 8 at d = 64 only (launch's k0_lean15)
    return std::atoi(choice.c_str() + 5);  // "lean N"
  }();
  return bits;
}

template <class T, int kD>
cudaError_t launch(const Shape& s, Precision precision, const void* q, const void* k, const void* v, const void* o,
                   const float* lse, const void* d_o, void* dq, void* dk, void* dv, void* workspace,
                   bool deterministic, cudaStream_t stream) {
  // Workspace (flash_hopper_backward_workspace_bytes): dQacc (chains, B, H, N, d), with GQA
  // the dK and dV sums (B, kv heads, N, d) x 2, then D (B, H, N), then the counters.
  const bool gqa = s.group() > 1;
  const int chains = deterministic ? flash_hopper_backward_dq_chains() : 1;
  float* dq_acc = static_cast<float*>(workspace);
  float* dkv_acc = gqa ? dq_acc + chains * s.q_elements() : nullptr;
  float* delta = dq_acc + chains * s.q_elements() + (gqa ? 2 * s.kv_elements() : 0);
  // Deterministic: turn counters, one per (chain, b, h, query tile) and per (b, kv head, key block).
  const std::int64_t q_tiles = (s.seq_len + kBM - 1) / kBM, k_blocks = (s.seq_len + kBN - 1) / kBN;
  int* dq_count = deterministic ? reinterpret_cast<int*>(delta + s.lse_elements()) : nullptr;
  int* dkv_count =
      deterministic && gqa ? dq_count + static_cast<std::int64_t>(chains) * s.batch * s.heads * q_tiles : nullptr;
  if (deterministic) {
    const std::int64_t counters =
        static_cast<std::int64_t>(s.batch) * (chains * s.heads * q_tiles + s.kv_heads * k_blocks);
    if (cudaError_t e = cudaMemsetAsync(dq_count, 0, counters * sizeof(int), stream); e != cudaSuccess) return e;
  }
  if (chains > 1) {  // the preprocess zeroes the first partial sum
    if (cudaError_t e = cudaMemsetAsync(dq_acc + s.q_elements(), 0, (chains - 1) * s.q_elements() * sizeof(float), stream);
        e != cudaSuccess)
      return e;
  }
  if (gqa) {
    if (cudaError_t e = cudaMemsetAsync(dkv_acc, 0, 2 * s.kv_elements() * sizeof(float), stream); e != cudaSuccess)
      return e;
  }
  if (cudaError_t e = detail::tc_backward_preprocess(precision, d_o, o, delta, dq_acc, s.lse_elements(), kD, stream);
      e != cudaSuccess)
    return e;

  constexpr bool kHalf = std::is_same_v<T, __half>;
  const long long bh = static_cast<long long>(s.batch) * s.heads, bkv = static_cast<long long>(s.batch) * s.kv_heads;
  CUtensorMap mq, mk, mv, mdo, mdq;
  auto map = [&](CUtensorMap* m, const void* p, long long heads, int rows) {
    return detail::head_tensor_map(m, kHalf, p, kD, s.seq_len, heads, rows);
  };
  if (!map(&mq, q, bh, kBM) || !map(&mdo, d_o, bh, kBM) ||
      !map(&mk, k, bkv, kBN) || !map(&mv, v, bkv, kBN))
    return cudaErrorInvalidValue;
  {  // dQacc (d, N, chains*B*H) f32, boxes {32 floats = 128 bytes, 64 queries}, 128B swizzle
    const std::uint64_t dims[3] = {static_cast<std::uint64_t>(kD), static_cast<std::uint64_t>(s.seq_len),
                                   static_cast<std::uint64_t>(bh * chains)};
    const std::uint64_t strides[2] = {static_cast<std::uint64_t>(kD) * 4,
                                      static_cast<std::uint64_t>(s.seq_len) * kD * 4};
    const std::uint32_t box[3] = {32, static_cast<std::uint32_t>(kBM), 1};
    if (!arch::encode_tensor_map_cached(&mdq, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, dq_acc, dims, strides, box))
      return cudaErrorInvalidValue;
  }
  // Ping-pong off (measured slower at both head sizes, see the top); HARNESS_BWD_PINGPONG=1
  // turns it on for experiments (read once per process). (3 ring stages at d = 64 measured
  // 1-2% slower than 2.)
  const int lean = lean_bits();  // -1: ping-pong (HARNESS_BWD_PINGPONG, see there)
  const bool pp = lean < 0;
  const float scale = s.effective_scale();
  const dim3 grid(static_cast<unsigned>((s.seq_len + kBN - 1) / kBN), static_cast<unsigned>(s.heads),
                  static_cast<unsigned>(s.batch));
  auto run = [&](auto* kernel, int smem, cudaError_t attr) {
    if (attr != cudaSuccess) return attr;
    kernel<<<grid, kThreads, smem, stream>>>(mq, mk, mv, mdo, mdq, lse, delta, static_cast<T*>(dk),
                                             static_cast<T*>(dv), dkv_acc, s.heads, s.group(), s.seq_len,
                                             scale * kLog2e, scale, s.causal ? 1 : 0, dq_count, dkv_count, chains);
    return cudaSuccess;
  };
  constexpr auto k1 = flash_hopper_backward_kernel<T, kD, true, kStages>;
  constexpr auto k0 = flash_hopper_backward_kernel<T, kD, false, kStages>;
  constexpr auto k0_lean1 = flash_hopper_backward_kernel<T, kD, false, kStages, 1>;
  constexpr auto k0_lean2 = flash_hopper_backward_kernel<T, kD, false, kStages, 2>;
  constexpr auto k0_lean4 = flash_hopper_backward_kernel<T, kD, false, kStages, 4>;
  constexpr auto k0_lean7 = flash_hopper_backward_kernel<T, kD, false, kStages, 7>;
  // The default. Bit 8 exists at d = 64 only (the kernel says why): at d = 128 the default is the
  // lean-7 kernel (flash_hopper_backward_kernel_at, which the result's config reads, says the same).
  constexpr auto k0_lean15 = flash_hopper_backward_kernel<T, kD, false, kStages, kD == 64 ? 15 : 7>;
  constexpr int smem = Layout<kD, kStages>::kSmem;
  cudaError_t launched;
  if (pp) launched = run(k1, smem, smem_attr<k1, smem>());
  else if (lean == 0) launched = run(k0, smem, smem_attr<k0, smem>());
  else if (lean == 1) launched = run(k0_lean1, smem, smem_attr<k0_lean1, smem>());
  else if (lean == 2) launched = run(k0_lean2, smem, smem_attr<k0_lean2, smem>());
  else if (lean == 4) launched = run(k0_lean4, smem, smem_attr<k0_lean4, smem>());
  else if (lean == 7) launched = run(k0_lean7, smem, smem_attr<k0_lean7, smem>());
  else launched = run(k0_lean15, smem, smem_attr<k0_lean15, smem>());
  if (launched != cudaSuccess) return launched;
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  if (cudaError_t e = detail::tc_round(precision, dq_acc, dq, s.q_elements(), scale, stream, chains); e != cudaSuccess)
    return e;
  if (!gqa) return cudaSuccess;
  if (cudaError_t e = detail::tc_round(precision, dkv_acc, dk, s.kv_elements(), 1.0f, stream); e != cudaSuccess)
    return e;
  return detail::tc_round(precision, dkv_acc + s.kv_elements(), dv, s.kv_elements(), 1.0f, stream);
}

template <class T>
cudaError_t dispatch(const Shape& s, Precision precision, const void* q, const void* k, const void* v, const void* o,
                     const float* lse, const void* d_o, void* dq, void* dk, void* dv, void* ws, bool det,
                     cudaStream_t stream) {
  switch (s.head_dim) {
    case 64: return launch<T, 64>(s, precision, q, k, v, o, lse, d_o, dq, dk, dv, ws, det, stream);
    case 128: return launch<T, 128>(s, precision, q, k, v, o, lse, d_o, dq, dk, dv, ws, det, stream);
    default:
      throw std::invalid_argument("attention: the Hopper flash backward supports head_dim 64, 128, not " +
                                  std::to_string(s.head_dim));
  }
}

}  // namespace

// The default is the kLean 15 kernel at d = 64 (all four bits; bit 8 measured in session 19) and
// the kLean 7 kernel at d = 128 (bit 8 is d = 64 only; see the kernel). HARNESS_BWD_LEAN=0 takes
// the session-15 kernel (none of them), 1, 2 or 4 one of the first three bits alone, 7 those
// three (the session-17 default: at d = 128 the default itself), 15 the default, for
// experiments and A/B runs; HARNESS_BWD_PINGPONG (not 0) the
// ping-pong kernel, which has none of the lean changes (kLean 0; its "measured slower" at the top
// of launch was against the session-15 kernel). Another non-empty value than 0, 1, 2, 4, 7 or 15 is refused
// (std::invalid_argument), so that an A/B run with a mistyped value cannot time the default
// against itself; so is ping-pong with a lean value other than 0 (it has none of the changes:
// such a run would time something other than what it names).
const char* flash_hopper_backward_kernel_choice() {
  static const char* const choice = [] {
    const char* pp = std::getenv("HARNESS_BWD_PINGPONG");
    const std::string lean = std::getenv("HARNESS_BWD_LEAN") != nullptr ? std::getenv("HARNESS_BWD_LEAN") : "";
    const char* by_lean = lean == "0"                    ? "lean 0"
                          : lean == "1"                  ? "lean 1"
                          : lean == "2"                  ? "lean 2"
                          : lean == "4"                  ? "lean 4"
                          : lean == "7"                  ? "lean 7"
                          : lean.empty() || lean == "15" ? "default"
                                                         : "";
    if (*by_lean == '\0') return "";
    if (pp != nullptr && pp[0] != '\0' && pp[0] != '0') return lean.empty() || lean == "0" ? "ping-pong" : "pp+lean";
    return by_lean;
  }();
  if (*choice == '\0')
    throw std::invalid_argument(std::string("attention: HARNESS_BWD_LEAN must be 0, 1, 2, 4, 7 or 15, not '") +
                                std::getenv("HARNESS_BWD_LEAN") + "'");
  if (std::string(choice) == "pp+lean")
    throw std::invalid_argument(std::string("attention: HARNESS_BWD_PINGPONG takes the ping-pong kernel, which has none "
                                            "of the lean changes; unset HARNESS_BWD_LEAN (or set it to 0), not '") +
                                std::getenv("HARNESS_BWD_LEAN") + "'");
  return choice;
}

const char* flash_hopper_backward_kernel_at(int head_dim) {
  const char* choice = flash_hopper_backward_kernel_choice();
  // launch's k0_lean15: kLean 15 at d = 64, kLean 7 (k0_lean7's kernel) at d = 128.
  if (std::string(choice) == "default") return head_dim == 64 ? "default (lean 15)" : "default (lean 7)";
  if (std::string(choice) == "lean 7" && head_dim != 64) return "default (lean 7)";
  return choice;
}

const char* flash_hopper_backward_unsupported(const Shape& shape) {
  if (shape.head_dim != 64 && shape.head_dim != 128)
    return "the Hopper (wgmma) flash backward has kernels for head_dim 64 and 128";
  return detail::hopper_device_unsupported(true);
}

// Deterministic mode adds dQ into `chains` partial sums: key block kb into sum kb % chains after
// block kb - chains, and the round pass adds the sums in order. Why: each block's dQ add waits
// for the one before it to land in L2 (bulk wait, fences, release, acquire), so a wave's blocks
// of one head run up to n_kb such waits apart; chains shorten that to n_kb / chains, for
// (chains - 1) more dQ-sized f32 buffers to clear and read. Measured (H200, 2026-11-28, B = 4
// H = 16 N = 4096 d = 128, each process the default and the deterministic result back to back,
// two processes each): the deterministic mode's cost in time, 1 chain +18.1% / +14.7%
// non-causal, +19.1% / +20.0% causal; 2 chains +3.9% / +5.9%, +7.1% / +9.6%; 4 chains
// +10.8% / +9.9%, +22.7% / +24.3% (the extra buffers' traffic); at d = 64 N = 2048 (B = 2):
// +82% / +80%, +56% / +56%, +51% / +50%. So 2 is the default; HARNESS_BWD_DET_CHAINS=1 or 4
// (read once per process; unset or empty: 2) for A/B runs; another value is refused.
int flash_hopper_backward_dq_chains() {
  static const int chains = [] {
    const char* e = std::getenv("HARNESS_BWD_DET_CHAINS");
    const std::string v = e != nullptr ? e : "";
    return v == "1" ? 1 : v.empty() || v == "2" ? 2 : v == "4" ? 4 : 0;
  }();
  if (chains == 0)
    throw std::invalid_argument(std::string("attention: HARNESS_BWD_DET_CHAINS must be 1, 2 or 4, not '") +
                                std::getenv("HARNESS_BWD_DET_CHAINS") + "'");
  return chains;
}

std::size_t flash_hopper_backward_workspace_bytes(const Shape& shape, bool deterministic) {
  const std::int64_t chains = deterministic ? flash_hopper_backward_dq_chains() : 1;
  const std::int64_t dkv_sums = shape.group() > 1 ? 2 * shape.kv_elements() : 0;
  const std::int64_t counters = static_cast<std::int64_t>(shape.batch) *
                                (chains * shape.heads * ((shape.seq_len + kBM - 1) / kBM) +
                                 static_cast<std::int64_t>(shape.kv_heads) * ((shape.seq_len + kBN - 1) / kBN));
  return static_cast<std::size_t>(chains * shape.q_elements() + dkv_sums + shape.lse_elements() + counters) *
         sizeof(float);
}

cudaError_t flash_hopper_backward(const Shape& shape, Precision precision, const void* q, const void* k,
                                  const void* v, const void* o, const float* lse, const void* d_o, void* dq, void* dk,
                                  void* dv, void* workspace, cudaStream_t stream, bool deterministic) {
  const std::string why = shape_error(shape);
  if (!why.empty()) throw std::invalid_argument("attention: " + why);
  if (const char* reason = flash_hopper_backward_unsupported(shape))
    throw std::invalid_argument(std::string("attention: ") + reason);
  if ((reinterpret_cast<std::uintptr_t>(q) | reinterpret_cast<std::uintptr_t>(k) | reinterpret_cast<std::uintptr_t>(v) |
       reinterpret_cast<std::uintptr_t>(d_o) | reinterpret_cast<std::uintptr_t>(workspace)) % 16 != 0)
    return cudaErrorMisalignedAddress;
  return precision == Precision::bf16
             ? dispatch<__nv_bfloat16>(shape, precision, q, k, v, o, lse, d_o, dq, dk, dv, workspace, deterministic,
                                       stream)
             : dispatch<__half>(shape, precision, q, k, v, o, lse, d_o, dq, dk, dv, workspace, deterministic, stream);
}

}  // namespace kernels::attention
