// Hopper GEMM: TMA (multicast in clusters of 2) -> 128B-swizzled shared memory ring ->
// wgmma.mma_async -> registers -> shared memory -> TMA store (or predicated global stores).
// Built for sm_90a only (kernels/gemm/CMakeLists.txt).
// One kernel for bf16, f16 (K step 64 elements, wgmma m64n256k16), tf32 (float storage,
// K step 32 elements, m64n256k8, both operands K-major: see gemm_wgmma.hpp for the re-layout
// of the other layouts) and fp8 e4m3 (K step 128 elements, m64n128k32 twice per slice, both
// operands K-major, bf16 C: see "fp8" below). A stage row is 128 bytes of K in every dtype,
// so the ring, the swizzle, the descriptors and the byte offsets below are the same; "64 k"
// below reads "32 k" for tf32 and "128 k" for fp8.
//
// fp8 (T = __nv_fp8_e4m3, TOut = bf16): the tensor cores add fp8 products into the
// accumulator with ~14 significant bits only (DeepSeek-V3 report, sec. 3.3.2; cuBLASLt's
// CUBLASLT_MATMUL_DESC_FAST_ACCUM off "periodically promotes" for the same reason), which
// at K = 4096 errs by percents. So every K step (128 k) runs into a fresh f32 fragment
// `part` (first wgmma with scale-d 0) and is added to the f32 accumulator `acc` on the CUDA
// cores ("promotion", as DeepGEMM): the tensor-core precision covers 128 products, FP32
// the rest. acc (64, 256) is 128 registers a thread; a (64, 256) part as well would not
// fit setmaxnreg's 232, so a step runs as two m64n128k32 halves (columns [0, 128) and
// [128, 256) of B's 256 rows) through one (64, 128) part of 64 registers: issue 4 wgmma
// k32, wait, add into acc[64 h ..], next half. The consumer waits for its own wgmmas there;
// the other consumer's keep the tensor cores busy meanwhile.
//
// Tiles and data path (one CTA per SM, persistent):
//   block tile (BM, BN, BK) = (128, 256, 64); 384 threads = 3 warpgroups. (BN = 128 for 16-bit
//   inputs at shapes with few tiles, gemm_wgmma_tile_n: B boxes of 128 rows, 6 stages of 32 KB,
//   a (64, 128) accumulator of 64 floats a thread, m64n128k16; read "256" below as BN.)
//   - warpgroup 0, the producer, gives registers back (setmaxnreg.dec 40) and one thread
//     issues the TMA copies of A (128 x 64) and B (256 x 64) for each K step into a ring of
//     kStages = 4 stages of 48 KB (192 KB of shared memory), each with a `full` mbarrier
//     (TMA completes its transaction bytes there) and an `empty` mbarrier (the consumers
//     release the stage).
//   - warpgroups 1 and 2, the consumers, take more registers (setmaxnreg.inc 232): each owns
//     64 rows of the block tile and holds its (64, 256) f32 accumulator tile in registers
//     (128 floats a thread), issuing 4 wgmma m64n256k16 per K step (BK = 4 x 16), keeping one
//     K step of wgmma in flight (wait_group 1) before releasing the previous stage.
//   - epilogue, beta == 0 and N % 8 == 0 (tuning.tma_store): alpha * acc -> 16-bit -> a
//     swizzled 16 KB staging buffer per consumer (one 64 x 128 half of its slab at a time)
//     -> TMA store (cp.async.bulk.tensor, clipped at M, N). The consumers go on to the next
//     tile's mainloop while the copy engine writes C. Otherwise: C = alpha * acc + beta * C
//     straight from the registers, every element predicated on (row < M, col < N). Either
//     way the producer already loads the next tile's stages.
//   - clusters (tuning.cluster_m = 2): 2 CTAs with the same n0 and adjacent m tiles; each
//     loads its own A and one 128-column half of B, multicast into both CTAs' stage (B's
//     L2 -> SM traffic halves: 32 KB instead of 48 KB per CTA and K step). A stage is free
//     again once the consumers of both CTAs released it (remote mbarrier arrives).
//   Tile order: work units (cl vertically adjacent tiles, cl = cluster size) are numbered in
//   groups of tuning.group_m unit-rows (column-major inside a group), so CTAs that run at the same
//   time share A rows and B columns in L2; cluster q takes units q, q + clusters, ...
//   - split-K (few output tiles, long K: a weight gradient X^T dY with M, N = 512..2048 and
//     K = 8192 tokens has 8-32 tiles for 132 SMs): each tile's K steps are cut into `splits`
//     contiguous ranges and every (split, tile) pair is a work unit of its own (split-major, so
//     the CTAs running together read the same K range). The splits are summed inside the
//     kernel (reduce_splits): every split stores its raw f32 products to its own slice of the
//     workspace and publishes a flag, waits for the tile's other splits, then sums 1/splits of
//     the tile over all slices in split order (the same bits every run) and writes that part
//     of C = alpha * sum + beta * C (+ bias). The host keeps tiles x splits within the grid (one
//     unit per CTA, all resident together), so the wait cannot deadlock. The flags carry a
//     tag that is new in every call, so nothing needs zeroing between calls: no memset, no
//     second launch (under CUDA graph capture, whose replays repeat a launch's tag, the flags
//     are zeroed by a captured memset instead). (Until 2026-11-29 the splits added into an f32 (M, N) workspace zeroed by
//     a memset, float2 atomicAdd, and a second kernel wrote C: on an H200 the memset and the
//     extra launch cost ~8 us and the contended atomics up to ~12 us of 512x512x8192's 27.7.)
//     An f32 C with alpha 1, beta 0 and no bias still takes the sums straight into C by
//     atomicAdd (kSumsIntoC: C zeroed first, no workspace).
//
// Shared-memory layouts (TMA SWIZZLE_128B: inside each 1024-byte block of 8 rows of 128
// bytes, the 16-byte chunk index is XORed with the row index mod 8; stage bases are
// 1024-aligned so the swizzle phase is the address's):
//   K-major operand (A 'n': box {64 k, 128 m}; B 't': box {64 k, 256 n}): row r (an m or n
//     index) of 64 k-elements = 128 bytes at r * 128. wgmma descriptor: SBO = 1024 (8-row
//     groups), LBO unused; the k16 slice kk starts kk * 32 bytes further (the hardware
//     applies the swizzle to the final address, as TMA did).
//   M/N-major operand (A 't', B 'n': boxes of {64 m|n, 64 k}, one per 64 rows|columns of
//     the tile, 8 KB each): k-row k of 64 m|n-elements at k * 128 inside the box. Descriptor
//     (transpose bit set): SBO = 1024 (8 k-rows), LBO = 8192 (next 64 m|n-elements); the k16
//     slice kk starts kk * 16 * 128 = kk * 2048 bytes further.
// Tails: TMA fills out-of-bounds box elements with zeros (K tail adds 0 * 0; M, N tails are
// computed and not stored), and still counts the full box bytes on the mbarrier.
#include "gemm/gemm_wgmma.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <type_traits>

#include <cuda.h>  // CUtensorMap and its enums (header only: no -lcuda)

#include "arch/cluster_launch.hpp"
#include "arch/env_switch.hpp"
#include "arch/memory_order.cuh"
#include "arch/numeric.cuh"
#include "arch/sm90_mbarrier.cuh"
#include "arch/sm90_tma.cuh"
#include "arch/sm90_warpgroup.cuh"
#include "arch/sm90_wgmma.cuh"
#include "arch/tma_map.hpp"
#include "gemm/gemm_transpose.hpp"

namespace kernels::gemm {
namespace {

constexpr int kBM = 128;
// K depth of a stage: one 128-byte row of the 128B swizzle, 64 16-bit or 32 f32 (tf32)
// elements; every byte count below is the same for both element sizes.
template <typename T>
constexpr int kBK = 128 / static_cast<int>(sizeof(T));
// fp8 inputs: promoted accumulation in two N halves (see the top).
template <typename T>
constexpr bool kPromote = arch::detail::is_fp8<T>;
// Split-K (gemm_wgmma_splits): at least 16 K steps (four passes over the 4-stage ring) per
// split, so that filling the pipeline and the sums stay small against the products. (Set when
// the sums took a memset, f32 atomics and a second launch: with 8, the Transformer seed's
// weight gradients (K = 1300 tokens, 21 steps) split in 2 and the step got 109 launches and
// 4.6% slower on an H200.) At most 16 splits.
constexpr int kSplitMinSteps = 16;
// Sums straight into an f32 C (see launch_typed): no workspace and no slices to read back, so
// a split pays from 2 K steps each. Measured (bf16 tn, f32 C, docs/PERFORMANCE.md "GEMM at the
// training's shapes", H200): 512x512x8192 16 splits 18.7-19.0 us against 20.8-21.2 at 8;
// 512x512x1300 8 splits 13.0-13.2 against 18.2-18.3 unsplit; 2048x512x1300 4 splits 17.3-17.5
// against 18.2-18.3.
constexpr int kSplitMinStepsIntoC = 2;
constexpr long long kSplitMax = 16;
constexpr int kConsumers = 2;  // consumer warpgroups, 64 rows of the block tile each
constexpr int kThreads = 128 * (1 + kConsumers);
constexpr int kABytes = kBM * 128;              // 16 KB: kBM rows of 128 bytes of K
constexpr int kBoxBytes = 64 * 128;             // a box of 64 rows of 128 bytes, 8 KB
// TMA-store staging of C: per consumer two swizzled boxes of 64 rows x 128 bytes (16-bit:
// a (64, 128) part of its (64, BN) tile, f32: a (64, 64) part), 16 KB; 32 KB in all.
constexpr int kCStageBytes = 2 * kBoxBytes;

// The block tile's N (BN) and what it sizes. BN = 256, or 128 for 16-bit inputs at shapes
// with few 128 x 256 tiles (gemm_wgmma_tile_n: twice the tiles, each half the work, and
// half-size split-K slices). The ring stays ~192 KB: 4 stages of 48 KB or 6 of 32 KB.
// Ring, C staging, 1 KB of slack to align the ring to 1024 bytes, 2 * kStages mbarriers:
// 196608 + 32768 + 1024 + 64 (BN 256) or + 96 (BN 128) bytes <= 232448 (227 KB, the sm_90
// opt-in limit).
template <int BN>
struct TileN {
  static_assert(BN == 128 || BN == 256, "wgmma GEMM: block tile N is 128 or 256");
  static constexpr int kBBytes = BN * 128;               // 32 or 16 KB: BN rows of 128 bytes of K
  static constexpr int kStageBytes = kABytes + kBBytes;  // 48 or 32 KB
  static constexpr int kStages = BN == 256 ? 4 : 6;
  static constexpr int kAcc = BN / 2;     // f32 accumulators a consumer thread: its (64, BN) slab
  static constexpr int kGroups = BN / 8;  // 8-column groups of them (acc[4 j8 .. 4 j8 + 3])
  static constexpr int kSmemBytes = kStages * kStageBytes + kConsumers * kCStageBytes + 1024 + 2 * kStages * 8;
  static_assert(kSmemBytes <= 232448, "227 KB of dynamic shared memory at most");
};

using arch::from_float;
using arch::to_float;

// Two adjacent elements of C as one vector (4 or 8 bytes).
template <typename T>
using Pair = std::conditional_t<std::is_same_v<T, __half>, __half2,
                                std::conditional_t<std::is_same_v<T, float>, float2, __nv_bfloat162>>;

// (v0, v1) -> T -> one shared-memory store of the pair at `addr`.
template <typename T>
__device__ __forceinline__ void st_shared_pair(uint32_t addr, float v0, float v1) {
  if constexpr (std::is_same_v<T, float>) {
    arch::st_shared_v2_f32(addr, v0, v1);
  } else {
    Pair<T> v;
    v.x = from_float<T>(v0);
    v.y = from_float<T>(v1);
    arch::st_shared_b32(addr, *reinterpret_cast<uint32_t*>(&v));
  }
}

// Work unit `t` (a cluster's `cl` vertically adjacent tiles) -> (first row of the unit, first
// column) of C, grouped raster order (see the top). units_m = ceil(tiles_m / cl).
template <int BN>
__device__ __forceinline__ void unit_origin(int t, int units_m, int tiles_n, int cl, int group_m,
                                            int& m0, int& n0) {
  const int per_group = group_m * tiles_n;
  const int group = t / per_group;
  const int first_m = group * group_m;
  const int rows = min(units_m - first_m, group_m);
  const int in_group = t - group * per_group;
  m0 = (first_m + in_group % rows) * kBM * cl;
  n0 = (in_group / rows) * BN;
}

// K steps [begin, end) of split `s` of `splits` over `k_steps`: contiguous, sizes differing
// by at most one.
__device__ __forceinline__ void split_range(int s, int splits, int k_steps, int& begin, int& end) {
  begin = static_cast<int>(static_cast<long long>(s) * k_steps / splits);
  end = static_cast<int>(static_cast<long long>(s + 1) * k_steps / splits);
}

// fp8: one K step (128 k = 4 slices of k32) promoted into acc (see the top). sa: this
// consumer's 64 A rows, sb: the stage's 256 B rows, both K-major rows of 128 bytes (SBO
// 1024, LBO unused). Half h multiplies into part (64, 128) against B rows [128 h, 128 h +
// 128), 16 KB further (1024-aligned: the swizzle phase holds), then acc[64 h + i] +=
// part[i]: fragment element i of an n128 tile sits at column 8 (i / 4) + ..., which is
// column 128 h + that in the n256 fragment at index 64 h + i. The smem of the stage is
// read completely once this returns (wait_group 0).
template <typename T>
__device__ __forceinline__ void promoted_step(float (&acc)[128], float (&part)[64], uint32_t sa, uint32_t sb) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    arch::fence_regs(part);
    arch::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      const uint64_t da = arch::make_smem_desc(sa + kk * 32u, 16u, 1024u);
      const uint64_t db = arch::make_smem_desc(sb + h * 16384u + kk * 32u, 16u, 1024u);
      arch::wgmma_ss<T, 128, 0, 0>(part, da, db, kk == 0 ? 0 : 1);  // kk 0: part = A B (no add)
    }
    arch::wgmma_commit();
    arch::wgmma_wait<0>();
    arch::fence_regs(part);
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[64 * h + i] += part[i];
  }
}

// C[row][col], C[row][col + 1] (crow: the row) = v + bias (kBias) + beta * C (read only when
// beta != 0, as BLAS), rounded to TOut; v0, v1 already scaled by alpha. One vector store when
// `pairs` (N even, C aligned to a pair) and both columns are inside N, else each column
// predicated on col < N.
template <typename TOut, bool kBias>
__device__ __forceinline__ void store_c_pair(TOut* crow, int col, int N, float v0, float v1, float beta,
                                             const float* __restrict__ bias, bool pairs) {
  if constexpr (kBias) {
    if (col < N) v0 += bias[col];
    if (col + 1 < N) v1 += bias[col + 1];
  }
  if (pairs && col + 1 < N) {
    Pair<TOut>* p = reinterpret_cast<Pair<TOut>*>(crow + col);
    if (beta != 0.f) {
      const Pair<TOut> old = *p;
      v0 += beta * to_float(old.x);
      v1 += beta * to_float(old.y);
    }
    Pair<TOut> out;
    out.x = from_float<TOut>(v0);
    out.y = from_float<TOut>(v1);
    *p = out;
  } else {
    if (col < N) {
      if (beta != 0.f) v0 += beta * to_float(crow[col]);
      crow[col] = from_float<TOut>(v0);
    }
    if (col + 1 < N) {
      if (beta != 0.f) v1 += beta * to_float(crow[col + 1]);
      crow[col + 1] = from_float<TOut>(v1);
    }
  }
}

// Split-K summed in the kernel, by the 256 consumer threads of split `s` (of `splits`) of CTA
// tile `tile` (of `tiles`: output tiles x cluster size). A slice is one split's (128, BN) f32
// tile in fragment order: float4 j8 (of BN / 8) of consumer thread ct (acc[4 j8 .. 4 j8 + 3])
// at float4 index j8 * 256 + ct, so every warp access is 512 contiguous bytes; slice (s, tile) is
// number s * tiles + tile of `partial`, its flag flags[s * tiles + tile]. Steps:
//   1. store acc to the own slice (st.global.cg: L2, where the other splits read it);
//   2. consumer barrier, then one thread: fence, release-store `tag` into the own flag, and
//      acquire-load every split's flag of this tile until each holds `tag` (a flag from an
//      earlier call holds that call's tag: no zeroing needed); consumer barrier;
//   3. float4 groups j8 in split_range(s, splits, BN / 8): sum the splits' slices in order 0 ..
//      splits - 1 (ld.global.cg), then C = alpha * sum (+ bias) (+ beta * C) for the group's
//      (row, col), (row, col + 1) and (row + 8, ...): row_base = this thread's first row, col0
//      = its first column (fragment layout: row = row_base + 8 h, col = col0 + 8 j8 + e for
//      acc[4 j8 + 2 h + e]).
// Every split of the tile must be running (the host keeps tiles x splits within the grid).
template <int BN, typename TOut, bool kBias>
__device__ __forceinline__ void reduce_splits(const float (&acc)[TileN<BN>::kAcc], int s, int splits, int tile, int tiles,
                                              float* __restrict__ partial,
                                              unsigned long long* __restrict__ flags, unsigned long long tag,
                                              int ct, int row_base, int col0, int M, int N, float alpha, float beta,
                                              TOut* __restrict__ C, const float* __restrict__ bias) {
  constexpr int kGroups = TileN<BN>::kGroups;
  constexpr int kSliceFloat4s = kGroups * 256;  // (128, BN) f32 (at most 2^30 / 8192 slices: grid units)
  float4* slices = reinterpret_cast<float4*>(partial);
  float4* mine = slices + (s * tiles + tile) * kSliceFloat4s;
#pragma unroll
  for (int j8 = 0; j8 < kGroups; ++j8)
    __stcg(mine + j8 * 256 + ct, make_float4(acc[4 * j8], acc[4 * j8 + 1], acc[4 * j8 + 2], acc[4 * j8 + 3]));
  arch::named_bar_sync(3, 256);
  if (ct == 0) {
    __threadfence();
    arch::st_release_gpu(flags + s * tiles + tile, tag);
    for (int o = 0; o < splits; ++o)
      while (arch::ld_acquire_gpu(flags + o * tiles + tile) != tag) {
      }
  }
  arch::named_bar_sync(3, 256);
  const bool pairs = (N % 2) == 0 && (reinterpret_cast<uintptr_t>(C) % sizeof(Pair<TOut>)) == 0;
  int jb = 0, je = 0;
  split_range(s, splits, kGroups, jb, je);
  for (int j8 = jb; j8 < je; ++j8) {
    float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int o = 0; o < splits; ++o) {
      const float4 v = __ldcg(slices + (o * tiles + tile) * kSliceFloat4s + j8 * 256 + ct);
      sum.x += v.x;
      sum.y += v.y;
      sum.z += v.z;
      sum.w += v.w;
    }
    const int col = col0 + 8 * j8;
    if (row_base < M)
      store_c_pair<TOut, kBias>(C + static_cast<size_t>(row_base) * static_cast<size_t>(N), col, N, alpha * sum.x,
                                alpha * sum.y, beta, bias, pairs);
    if (row_base + 8 < M)
      store_c_pair<TOut, kBias>(C + static_cast<size_t>(row_base + 8) * static_cast<size_t>(N), col, N,
                                alpha * sum.z, alpha * sum.w, beta, bias, pairs);
  }
}

// T: input element, TOut: C's element (T, except bf16 for fp8).
// TA: A is M-major (layout 't'); TB: B is K-major (layout 't'). Note the wgmma transpose
// bit of B is the opposite: wgmma's default B is K-major, so B 'n' (N-major) sets it.
// Launched with clusters of 1 or 2 CTAs along x (read from %cluster_nctarank). tma_store:
// nonzero for the shared-memory + TMA store epilogue (beta == 0, map_c valid). group_m: unit
// rows per raster group (see the top). splits > 1 (tma_store must be 0): with `flags`, split-K
// summed in the kernel (reduce_splits: `partial` holds the slices, `flags` one tag per slice,
// `tag` this call's); without, the raw sums added into `partial` (M, N) f32, zeroed (the
// kSumsIntoC case: partial is C, alpha 1, beta 0). kBias: C = alpha acc + bias[col]
// (+ beta C), bias (N) f32 added in the epilogue before the rounding (split-K: by the in-kernel
// sums); without it `bias` is not read.
template <typename T, typename TOut, bool TA, bool TB, bool kBias, int BN>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_wgmma_kernel(const __grid_constant__ CUtensorMap map_a,
                      const __grid_constant__ CUtensorMap map_b,
                      const __grid_constant__ CUtensorMap map_c, int M, int N, int K,
                      float alpha, float beta, TOut* __restrict__ C, int tma_store, int group_m,
                      int splits, float* __restrict__ partial, const float* __restrict__ bias,
                      unsigned long long* __restrict__ flags, unsigned long long tag) {
  using Tile = TileN<BN>;
  constexpr int kStages = Tile::kStages;
  constexpr int kStageBytes = Tile::kStageBytes;
  static_assert(BN == 256 || !kPromote<T>, "fp8's promoted steps: BN 256");
  extern __shared__ unsigned char smem_raw[];
  // Same offsets in every CTA (same kernel, same dynamic layout): multicast relies on it.
  const uint32_t ring = (arch::smem_u32(smem_raw) + 1023u) & ~1023u;
  const uint32_t cstage = ring + kStages * kStageBytes;              // kConsumers x 16 KB
  const uint32_t full_bar = cstage + kConsumers * kCStageBytes;      // kStages x 8 bytes
  const uint32_t empty_bar = full_bar + kStages * 8;                 // kStages x 8 bytes

  const int tid = static_cast<int>(threadIdx.x);
  const int wg = tid / 128;
  const int cl = static_cast<int>(arch::cluster_nctarank());  // 1 or 2
  const uint32_t rank = arch::cluster_ctarank();
  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) {
      arch::mbar_init(full_bar + 8 * s, 1);  // the producer's expect_tx arrive
      // One arrive per consumer warp of every CTA of the cluster (each stage's B half is
      // multicast into all of them, so all must have released it).
      arch::mbar_init(empty_bar + 8 * s, kConsumers * 4 * cl);
    }
    arch::mbar_fence_init();
  }
  // Barriers initialised in every CTA of the cluster before anyone multicasts or arrives.
  arch::cluster_sync();

  const int tiles_m = (M + kBM - 1) / kBM;
  const int tiles_n = (N + BN - 1) / BN;
  const int units_m = (tiles_m + cl - 1) / cl;  // a unit: cl vertically adjacent tiles
  const int num_units = units_m * tiles_n;  // output tiles (of cl tiles each)
  const int work_units = num_units * splits;  // (split, tile) pairs, split-major
  constexpr int BK = kBK<T>;
  const int k_steps = (K + BK - 1) / BK;
  const int first_unit = static_cast<int>(blockIdx.x) / cl;
  const int unit_stride = static_cast<int>(gridDim.x) / cl;

  if (wg == 0) {
    // ---- producer ----
    arch::warpgroup_reg_dealloc<40>();
    if (tid == 0) {
      int stage = 0;
      uint32_t phase = 0;
      for (int u = first_unit; u < work_units; u += unit_stride) {
        int m0, n0, ks_begin, ks_end;
        unit_origin<BN>(u % num_units, units_m, tiles_n, cl, group_m, m0, n0);
        split_range(u / num_units, splits, k_steps, ks_begin, ks_end);
        m0 += static_cast<int>(rank) * kBM;  // may be >= M: TMA fills zeros, nothing stored
        for (int ks = ks_begin; ks < ks_end; ++ks) {
          const int k0 = ks * BK;
          const uint32_t fb = full_bar + 8 * stage;
          arch::mbar_wait(empty_bar + 8 * stage, phase ^ 1u);  // fresh barrier: passes at once
          arch::mbar_expect_tx(fb, kStageBytes);  // A, own B part and the peer's multicast part
          const uint32_t sa = ring + stage * kStageBytes;
          const uint32_t sb = sa + kABytes;
          if constexpr (!TA) {
            arch::tma_load_2d(sa, &map_a, k0, m0, fb);  // A (M, K): box {64 k, 128 m}
          } else {
#pragma unroll
            for (int i = 0; i < kBM / 64; ++i)  // A (K, M): boxes {64 m, 64 k}
              arch::tma_load_2d(sa + i * kBoxBytes, &map_a, m0 + 64 * i, k0, fb);
          }
          if (cl == 1) {
            if constexpr (TB) {
              arch::tma_load_2d(sb, &map_b, k0, n0, fb);  // B (N, K): box {64 k, BN n}
            } else {
#pragma unroll
              for (int j = 0; j < BN / 64; ++j)  // B (K, N): boxes {64 n, 64 k}
                arch::tma_load_2d(sb + j * kBoxBytes, &map_b, n0 + 64 * j, k0, fb);
            }
          } else {
            // Cluster of 2 sharing n0: CTA `rank` loads B columns [BN / 2 rank, BN / 2 (rank + 1))
            // of the tile and multicasts them to both CTAs (BN / 16 KB each way).
            if constexpr (TB) {
              arch::tma_load_2d_multicast(sb + rank * (Tile::kBBytes / 2u), &map_b, k0,
                                          n0 + BN / 2 * static_cast<int>(rank), fb,
                                          0x3);  // B (N, K): box {64 k, BN / 2 n}
            } else {
#pragma unroll
              for (int j = 0; j < BN / 128; ++j) {
                const int jj = BN / 128 * static_cast<int>(rank) + j;
                arch::tma_load_2d_multicast(sb + jj * kBoxBytes, &map_b, n0 + 64 * jj, k0, fb, 0x3);
              }
            }
          }
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1u;
          }
        }
      }
    }
  } else {
    // ---- consumers ----
    arch::warpgroup_reg_alloc<232>();
    const int c = wg - 1;  // rows [64 c, 64 c + 64) of the block tile
    const int lane = tid % 32;
    const int warp = (tid % 128) / 32;
    // A descriptor offsets of this consumer's 64 rows: 64 K-major rows of 128 bytes, or
    // the c-th {64 m, 64 k} box; both 8 KB.
    const uint32_t a_off = static_cast<uint32_t>(c) * 8192u;
    constexpr uint32_t kSliceA = TA ? 2048u : 32u;  // byte step of one k16 slice
    constexpr uint32_t kSliceB = TB ? 32u : 2048u;
    constexpr uint32_t kLboA = TA ? 8192u : 16u;
    constexpr uint32_t kLboB = TB ? 16u : 8192u;
    constexpr int kTnspA = TA ? 1 : 0;
    constexpr int kTnspB = TB ? 0 : 1;
    const uint32_t my_cstage = cstage + static_cast<uint32_t>(c) * kCStageBytes;

    // Releases a stage to the producers of every CTA of the cluster (one arrive per warp),
    // after the warpgroup waited for the wgmmas that read it: the remote arrives at CTA scope
    // (CUTLASS's consumer release). With .release.cluster, the attention forward's cluster
    // kernel ran 2.04x slower (ncu: a membar stall of ~4.5 cycles per instruction; H100,
    // docs/PERFORMANCE.md "d = 64 forward in clusters of two").
    auto release = [&](int s) {
      if (lane != 0) return;
      if (cl == 1) {
        arch::mbar_arrive(empty_bar + 8 * s);
      } else {
        arch::mbar_arrive_cluster_cta_scope(empty_bar + 8 * s, 0);
        arch::mbar_arrive_cluster_cta_scope(empty_bar + 8 * s, 1);
      }
    };

    int stage = 0;
    uint32_t phase = 0;
    float acc[Tile::kAcc];
    float part[kPromote<T> ? 64 : 1] = {};  // fp8's per-step fragment (see promoted_step)
    for (int u = first_unit; u < work_units; u += unit_stride) {
      int m0, n0, ks_begin, ks_end;
      unit_origin<BN>(u % num_units, units_m, tiles_n, cl, group_m, m0, n0);
      split_range(u / num_units, splits, k_steps, ks_begin, ks_end);
      m0 += static_cast<int>(rank) * kBM;
#pragma unroll
      for (int i = 0; i < Tile::kAcc; ++i) acc[i] = 0.f;
      int prev_stage = -1;
      for (int ks = ks_begin; ks < ks_end; ++ks) {
        arch::mbar_wait(full_bar + 8 * stage, phase);
        const uint32_t sa = ring + stage * kStageBytes + a_off;
        const uint32_t sb = ring + stage * kStageBytes + kABytes;
        if constexpr (kPromote<T>) {
          static_assert(!TA && TB, "fp8 wgmma: both operands K-major (layout nt)");
          promoted_step<T>(acc, part, sa, sb);
          release(stage);  // read completely (prev_stage stays -1)
        } else {
          arch::fence_regs(acc);
          arch::wgmma_fence();
#pragma unroll
          for (int kk = 0; kk < 4; ++kk) {  // 4 slices of 32 bytes of K (k16 or tf32 k8)
            const uint64_t da = arch::make_smem_desc(sa + kk * kSliceA, kLboA, 1024u);
            const uint64_t db = arch::make_smem_desc(sb + kk * kSliceB, kLboB, 1024u);
            arch::wgmma_ss<T, BN, kTnspA, kTnspB>(acc, da, db);
          }
          arch::wgmma_commit();
          // The previous K step's wgmma group is done once at most this one is pending:
          // its stage goes back to the producer(s).
          arch::wgmma_wait<1>();
          arch::fence_regs(acc);
          if (prev_stage >= 0) release(prev_stage);
          prev_stage = stage;
        }
        if (++stage == kStages) {
          stage = 0;
          phase ^= 1u;
        }
      }
      arch::wgmma_wait<0>();
      arch::fence_regs(acc);
      if (prev_stage >= 0) release(prev_stage);

      // Epilogue. Accumulator j of this thread (m64nNk16 f32 fragment layout):
      //   row = 16 warp + lane / 4 + 8 ((j / 2) % 2), col = 8 (j / 4) + 2 (lane % 4) + j % 2.
      if (tma_store) {
        // Passes of two 128-byte-wide boxes (16-bit: BN / 128 passes of 128 columns, {64 col, 64 row}
        // boxes; f32: BN / 64 passes of 64 columns, {32 col, 64 row} boxes): alpha * acc -> T
        // pairs -> this consumer's 16 KB staging buffer, 128B-swizzled as the map says (the
        // 16-byte chunk ch of row r sits at chunk ch ^ (r % 8), so the 8 rows a warp store
        // touches spread over all 32 banks: one wavefront per 128 bytes stored) -> one thread
        // issues the TMA stores, which run on while the next tile's mainloop starts.
        constexpr int kBoxCols = 128 / static_cast<int>(sizeof(TOut));  // 64 or 32
        constexpr int kPassCols = 2 * kBoxCols;
        constexpr int kGroups = kPassCols / 8;  // 8-column accumulator groups per pass
        const bool leader = (tid % 128) == 0;
#pragma unroll
        for (int pass = 0; pass < BN / kPassCols; ++pass) {
          if (leader) arch::bulk_wait_read();  // the previous store has read the buffer
          arch::named_bar_sync(1 + c, 128);
#pragma unroll
          for (int jl = 0; jl < kGroups; ++jl) {
            const int j8 = kGroups * pass + jl;
            const int col = 8 * jl + 2 * (lane % 4);  // inside the pass
            const uint32_t box = my_cstage + static_cast<uint32_t>(col / kBoxCols) * kBoxBytes;
            const int byte = (col % kBoxCols) * static_cast<int>(sizeof(TOut));  // inside the row
            // kBias: the pair's two bias values (N % 8 == 0 here, so a pair is inside N or
            // wholly past it; col even: 8-byte aligned when bias is).
            float2 b = make_float2(0.f, 0.f);
            if constexpr (kBias) {
              const int gcol = n0 + kPassCols * pass + col;
              if (gcol < N) b = *reinterpret_cast<const float2*>(bias + gcol);
            }
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const int r = 16 * warp + lane / 4 + 8 * h;  // row inside the 64-row slab
              const uint32_t addr = box + static_cast<uint32_t>(r) * 128u +
                                    static_cast<uint32_t>(((byte / 16) ^ (r % 8)) * 16 + byte % 16);
              if constexpr (kBias)
                st_shared_pair<TOut>(addr, alpha * acc[4 * j8 + 2 * h] + b.x, alpha * acc[4 * j8 + 2 * h + 1] + b.y);
              else
                st_shared_pair<TOut>(addr, alpha * acc[4 * j8 + 2 * h], alpha * acc[4 * j8 + 2 * h + 1]);
            }
          }
          arch::fence_proxy_async();
          arch::named_bar_sync(1 + c, 128);
          if (leader) {
            arch::tma_store_2d(&map_c, my_cstage, n0 + kPassCols * pass, m0 + 64 * c);
            arch::tma_store_2d(&map_c, my_cstage + kBoxBytes, n0 + kPassCols * pass + kBoxCols, m0 + 64 * c);
            arch::bulk_commit();
          }
        }
        continue;
      }
      const int row_base = m0 + 64 * c + 16 * warp + lane / 4;
      if (splits > 1 && flags != nullptr) {
        reduce_splits<BN, TOut, kBias>(acc, u / num_units, splits, (u % num_units) * cl + static_cast<int>(rank),
                                   num_units * cl, partial, flags, tag, tid - 128, row_base,
                                   n0 + 2 * (lane % 4), M, N, alpha, beta, C, bias);
        continue;
      }
      if (splits > 1) {
        // Split-K into an f32 C (kSumsIntoC): this K range's raw products added into C (float2
        // when N is even: the pair (row, col) starts at an even index, C is 8-byte aligned).
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = row_base + 8 * h;
          if (row >= M) continue;
          float* prow = partial + static_cast<size_t>(row) * static_cast<size_t>(N);
#pragma unroll
          for (int j8 = 0; j8 < Tile::kGroups; ++j8) {
            const int col = n0 + 8 * j8 + 2 * (lane % 4);
            const float v0 = acc[4 * j8 + 2 * h], v1 = acc[4 * j8 + 2 * h + 1];
            if ((N % 2) == 0 && col + 1 < N) {
              atomicAdd(reinterpret_cast<float2*>(prow + col), make_float2(v0, v1));
            } else {
              if (col < N) atomicAdd(prow + col, v0);
              if (col + 1 < N) atomicAdd(prow + col + 1, v1);
            }
          }
        }
        continue;
      }
      // Column pairs are aligned vectors when N is even and C is aligned to a pair.
      const bool pairs = (N % 2) == 0 && (reinterpret_cast<uintptr_t>(C) % sizeof(Pair<TOut>)) == 0;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = row_base + 8 * h;
        if (row >= M) continue;
        TOut* crow = C + static_cast<size_t>(row) * static_cast<size_t>(N);
#pragma unroll
        for (int j8 = 0; j8 < Tile::kGroups; ++j8)
          store_c_pair<TOut, kBias>(crow, n0 + 8 * j8 + 2 * (lane % 4), N, alpha * acc[4 * j8 + 2 * h],
                                    alpha * acc[4 * j8 + 2 * h + 1], beta, bias, pairs);
      }
    }
    // C written before the kernel ends (the stores are asynchronous).
    if (tma_store && (tid % 128) == 0) arch::bulk_wait_all();
  }
  // No CTA leaves while its peer may still multicast into it or arrive on its barriers.
  if (cl > 1) arch::cluster_sync();
}

// ---- host side ------------------------------------------------------------------------------

// Row-major (rows, cols) matrix with leading dimension `ld` elements (2 bytes each, 4 for
// FLOAT32, 1 for UINT8: fp8 moves as raw bytes), boxes of {box_cols, box_rows} elements, 128B swizzle, zero fill out of bounds
// (arch::encode_tensor_map: the driver's encoder through the runtime, no -lcuda).
bool encode_map(bool cached, CUtensorMap* map, CUtensorMapDataType type, const void* ptr, int rows, int cols, int ld,
                int box_cols, int box_rows) {
  const std::uint64_t elem = type == CU_TENSOR_MAP_DATA_TYPE_FLOAT32 ? 4 : type == CU_TENSOR_MAP_DATA_TYPE_UINT8 ? 1 : 2;
  const std::uint64_t dims[2] = {static_cast<std::uint64_t>(cols), static_cast<std::uint64_t>(rows)};
  const std::uint64_t strides[1] = {static_cast<std::uint64_t>(ld) * elem};  // bytes, dim 1
  const std::uint32_t box[2] = {static_cast<std::uint32_t>(box_cols), static_cast<std::uint32_t>(box_rows)};
  const auto encode = cached ? arch::encode_tensor_map_cached : arch::encode_tensor_map;
  return encode(map, type, 2, ptr, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B);
}

cudaError_t sm_count(int* sms) {
  int device = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  return cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, device);
}

// K steps of a stage (128 bytes of K: 64 16-bit, 32 f32 or 128 fp8 elements), the unit a split takes whole.
int k_steps_of(int K, int elem_bytes) { return (K + 128 / elem_bytes - 1) / (128 / elem_bytes); }

// The split count forced for the call: tuning.splits, else HARNESS_WGMMA_SPLITS=n (n >= 1,
// read once per process: A/B runs of whole suites, as HARNESS_WGMMA_CLUSTER), else 0 (by shape).
int forced_splits(const GemmWgmmaTuning& tuning) {
  static const int from_env = [] {
    const int v = arch::env_int("HARNESS_WGMMA_SPLITS");
    return v >= 1 ? v : 0;
  }();
  return tuning.splits > 0 ? tuning.splits : from_env;
}

// Summed in the kernel, every split of a tile waits for the others: one unit per CTA, so at
// most slots / output_units splits (fewer than 2: unsplit).
int splits_within_grid(long long output_units, int splits, int slots) {
  return splits > 1 && output_units * splits > slots ? static_cast<int>(std::max<long long>(1, slots / output_units))
                                                     : splits;
}

// Output tiles of 128 x bn.
long long tiles_of(int M, int N, int bn) {
  return static_cast<long long>((M + kBM - 1) / kBM) * ((N + bn - 1) / bn);
}

// The by-shape split count over tiles of 128 x bn (gemm_wgmma_splits' rule).
int splits_by_shape(int M, int N, int K, int elem_bytes, int sms, bool sums_into_c, int bn) {
  if (M < 1 || N < 1 || K < 1 || sms < 1 || (elem_bytes != 1 && elem_bytes != 2 && elem_bytes != 4)) return 1;
  const long long tiles = tiles_of(M, N, bn);
  const int k_steps = k_steps_of(K, elem_bytes);
  if (2 * tiles > sms) return 1;  // at least half the SMs busy without a split
  const int min_steps = sums_into_c ? kSplitMinStepsIntoC : kSplitMinSteps;
  const long long n = std::min<long long>({sms / tiles, k_steps / min_steps, kSplitMax});
  return n >= 2 ? static_cast<int>(n) : 1;
}

// The split count asked for over tiles of 128 x bn (gemm_wgmma_tile_n): the forced one (at
// most one split per K step), else the shape's; at most sms / tiles (the in-kernel sums:
// splits_within_grid; clusters of 2 may lower it further at the launch), so a large forced
// count neither sizes a workspace it cannot use.
int requested_splits(int M, int N, int K, int elem_bytes, int sms, const GemmWgmmaTuning& tuning, int bn) {
  const int forced = forced_splits(tuning);
  const int n = forced > 0 ? std::min(forced, k_steps_of(K, elem_bytes))
                           : splits_by_shape(M, N, K, elem_bytes, sms, false, bn);
  return splits_within_grid(tiles_of(M, N, bn), n, sms);
}

// A split call whose sums go straight into C: 16-bit inputs with an f32 C and no bias (the
// instantiation, kSumsIntoC), alpha 1 and beta 0 (nothing is applied after the sum), C 8-byte
// aligned (float2 adds).
template <typename T, typename TOut, bool kBias>
constexpr bool kSumsIntoC = std::is_same_v<TOut, float> && !std::is_same_v<T, float> && !kBias;
bool sums_into_c(float alpha, float beta, const void* C) {
  return alpha == 1.f && beta == 0.f && reinterpret_cast<uintptr_t>(C) % 8 == 0;
}

// Workspace of `splits` in-kernel split sums (reduce_splits) over tiles of 128 x bn: one
// (128, bn) f32 slice per split and CTA tile, then one 8-byte flag per slice. CTA tiles
// counted with the M tiles rounded up to even (a cluster of 2 may take one past M), so any
// cluster size fits.
std::size_t split_sums_bytes(int M, int N, int splits, int bn) {
  const std::size_t tiles_m = static_cast<std::size_t>((M + kBM - 1) / kBM + 1) / 2 * 2;
  const std::size_t slices = tiles_m * static_cast<std::size_t>((N + bn - 1) / bn) * static_cast<std::size_t>(splits);
  return slices * (static_cast<std::size_t>(kBM) * bn * sizeof(float) + sizeof(unsigned long long));
}

// A tag for one call's split flags: a per-process random start (so a workspace left by another
// process or an earlier call holds no current tag), then one more per call; never 0.
unsigned long long next_split_tag() {
  static std::atomic<unsigned long long> next{(static_cast<unsigned long long>(std::random_device{}()) << 32) ^
                                              std::random_device{}()};
  unsigned long long t = next.fetch_add(1);
  return t != 0 ? t : next.fetch_add(1);
}

// The split count for this call over tiles of 128 x bn: requested_splits; 1 when the split
// sums do not fit the workspace (an error when tuning.splits forced a split).
cudaError_t splits_for(int M, int N, int K, int elem_bytes, int sms, const GemmWgmmaTuning& tuning, int bn,
                       const void* workspace, std::size_t workspace_bytes, int* splits) {
  int n = requested_splits(M, N, K, elem_bytes, sms, tuning, bn);
  const bool room = workspace != nullptr && reinterpret_cast<uintptr_t>(workspace) % 16 == 0 &&
                    workspace_bytes >= split_sums_bytes(M, N, n, bn);
  if (n > 1 && !room) {
    if (tuning.splits > 1) return cudaErrorInvalidValue;
    n = 1;
  }
  *splits = n;
  return cudaSuccess;
}

}  // namespace

// No clusters at any shape: clusters of 2 timed no faster over the shape zoo's bf16 layer
// shapes (H100, 2026-11-27: cuBLAS / wgmma geometric mean 0.898 with, 0.906 without; lower at
// d_model 512's forward shapes). The arguments are what a rule would read.
// HARNESS_WGMMA_CLUSTER=1 or 2 forces the choice (read once per process), for A/B runs of
// whole suites; unset or another value: the rule.
int gemm_wgmma_cluster(int M, int N, int splits, int sms) {
  static const int forced = [] {
    const int v = arch::env_int("HARNESS_WGMMA_CLUSTER");
    return v == 1 || v == 2 ? v : 0;
  }();
  if (forced != 0) return forced;
  (void)M, (void)N, (void)splits, (void)sms;
  return 1;
}

namespace {

// lda, ldb: leading dimensions of the stored A and B (elements; the tf32 path passes the
// padded ones of its workspace copies). splits > 1: split-K, summed in the kernel through the
// workspace at `partial` (16-byte aligned, split_sums_bytes(M, N, splits)), or into C itself
// (kSumsIntoC with alpha 1, beta 0). sms: the device's multiprocessors (the callers' sm_count).
// type, c_type: the tensor-map types of A and B, and of C (TOut). kBias: bias (N) f32 added
// to every row of C (see the kernel). BN: the block tile's N (gemm_wgmma_tile_n).
template <typename T, typename TOut, bool TA, bool TB, bool kBias, int BN>
cudaError_t launch_typed(int M, int N, int K, float alpha, const T* A, int lda, const T* B, int ldb,
                         float beta, TOut* C, cudaStream_t stream, CUtensorMapDataType type, CUtensorMapDataType c_type,
                         const GemmWgmmaTuning& tuning, int sms, int splits, float* partial,
                         const float* bias = nullptr) {
  constexpr int BK = kBK<T>;
  constexpr int kSmemBytes = TileN<BN>::kSmemBytes;
  const int cl = tuning.cluster_m == 0 ? gemm_wgmma_cluster(M, N, splits, sms) : tuning.cluster_m;
  // Through arch's map cache unless tuning.cache_maps is off (a hit is a lookup, not a
  // driver call).
  auto map_of = [&](CUtensorMap* map, CUtensorMapDataType t, const void* ptr, int rows, int cols, int ld, int box_cols,
                    int box_rows) { return encode_map(tuning.cache_maps, map, t, ptr, rows, cols, ld, box_cols, box_rows); };
  CUtensorMap map_a;
  CUtensorMap map_b;
  CUtensorMap map_c{};
  const bool ok_a = TA ? map_of(&map_a, type, A, K, M, lda, 64, 64)         // A (K, M)
                       : map_of(&map_a, type, A, M, K, lda, BK, kBM);       // A (M, K)
  const bool ok_b = TB ? map_of(&map_b, type, B, N, K, ldb, BK, BN / cl)    // B (N, K)
                       : map_of(&map_b, type, B, K, N, ldb, 64, 64);        // B (K, N)
  if (!ok_a || !ok_b) return cudaErrorInvalidValue;
  auto* kernel = gemm_wgmma_kernel<T, TOut, TA, TB, kBias, BN>;
  // Raising the dynamic shared-memory limit is per function and cheap, but done once.
  static const cudaError_t attr =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  if (attr != cudaSuccess) return attr;

  arch::ClusterLaunch launch(cl, kThreads, kSmemBytes, stream);
  cudaLaunchConfig_t& cfg = launch.cfg;

  // Persistent grid: one CTA per SM, or as many clusters of 2 as fit at once (the GPCs'
  // SM counts may leave an SM without a partner).
  int slots = sms;
  if (cl == 2) {
    static int max_clusters = -1;  // per instantiation; one device assumed, as above
    if (max_clusters < 0) {
      int n = 0;
      if (cudaError_t e = arch::max_active_clusters(kernel, launch, sms, &n); e != cudaSuccess) return e;
      max_clusters = n;
    }
    if (max_clusters < 1) return cudaErrorNotSupported;
    slots = max_clusters;
  }
  if (tuning.max_ctas > 0) slots = std::max(1, std::min(slots, tuning.max_ctas / cl));
  const long long tiles_m = (M + kBM - 1) / kBM;
  const long long output_units = (tiles_m + cl - 1) / cl * static_cast<long long>((N + BN - 1) / BN);
  // 16-bit inputs with an f32 C (gemm_wgmma_bf16_f32: a weight gradient) and nothing applied
  // after the sum (alpha 1, beta 0, no bias): the split-K sums go straight into C, zeroed
  // first (float2 atomics: C 8-byte aligned); no workspace.
  const bool sums_in_c = kSumsIntoC<T, TOut, kBias> && splits > 1 && sums_into_c(alpha, beta, C);
  if (!sums_in_c) splits = splits_within_grid(output_units, splits, slots);
  // The TMA store needs 16-byte row strides and base; beta != 0 reads C (direct path).
  constexpr int kPerChunk = 16 / static_cast<int>(sizeof(TOut));
  constexpr int kBoxColsC = 128 / static_cast<int>(sizeof(TOut));
  // kBias there reads the bias in 8-byte pairs.
  const bool tma_store = splits == 1 && tuning.tma_store && beta == 0.f && N % kPerChunk == 0 &&
                         reinterpret_cast<uintptr_t>(C) % 16 == 0 &&
                         (!kBias || reinterpret_cast<uintptr_t>(bias) % 8 == 0) &&
                         map_of(&map_c, c_type, C, M, N, N, kBoxColsC, 64);  // C (M, N): {128 B of n, 64 m}
  const long long units = output_units * splits;
  if (units > 0x3FFFFFFF) return cudaErrorInvalidValue;
  const int grid_units = static_cast<int>(units < slots ? units : slots);
  cfg.gridDim = dim3(static_cast<unsigned>(grid_units * cl));
  unsigned long long* flags = nullptr;
  unsigned long long tag = 0;
  if (sums_in_c) {
    if constexpr (kSumsIntoC<T, TOut, kBias>) partial = C;
    if (cudaError_t e = cudaMemsetAsync(partial, 0, static_cast<std::size_t>(M) * N * sizeof(float), stream);
        e != cudaSuccess)
      return e;
  } else if (splits > 1) {
    // The flags follow the slices (split_sums_bytes' layout; tiles counted as the kernel does).
    flags = reinterpret_cast<unsigned long long*>(
        reinterpret_cast<unsigned char*>(partial) +
        static_cast<std::size_t>(output_units) * cl * splits * kBM * BN * sizeof(float));
    // A CUDA graph replays its launches with the tags they were captured with, so the flags
    // from the previous replay would already hold this launch's tag: under stream capture the
    // flags are zeroed by a (captured) memset before the kernel and every launch uses tag 1.
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (cudaError_t e = cudaStreamIsCapturing(stream, &capture); e != cudaSuccess) return e;
    if (capture == cudaStreamCaptureStatusNone) {
      tag = next_split_tag();
    } else {
      if (cudaError_t e = cudaMemsetAsync(flags, 0,
                                          static_cast<std::size_t>(output_units) * cl * splits * sizeof(unsigned long long),
                                          stream);
          e != cudaSuccess)
        return e;
      tag = 1;
    }
  }
  return cudaLaunchKernelEx(&cfg, kernel, map_a, map_b, map_c, M, N, K, alpha, beta, C, tma_store ? 1 : 0,
                            tuning.group_m, splits, partial, bias, flags, tag);
}

// tile_n 128 only for 16-bit inputs (elem_bytes 2).
bool tuning_valid(const GemmWgmmaTuning& tuning, int elem_bytes) {
  return tuning.cluster_m >= 0 && tuning.cluster_m <= 2 && tuning.max_ctas >= 0 && tuning.group_m >= 1 &&
         tuning.splits >= 0 && (tuning.tile_n == 0 || tuning.tile_n == 256 || (tuning.tile_n == 128 && elem_bytes == 2));
}

// The four layouts of launch_typed at one BN.
template <int BN, typename T, typename TOut, bool kBias>
cudaError_t launch_layout(bool a_trans, bool b_trans, int M, int N, int K, float alpha, const T* A, const T* B,
                          float beta, TOut* C, cudaStream_t stream, CUtensorMapDataType type,
                          CUtensorMapDataType c_type, const GemmWgmmaTuning& tuning, int sms, int splits,
                          float* partial, const float* bias) {
  const int lda = a_trans ? M : K, ldb = b_trans ? K : N;
  if constexpr (kPromote<T>) {
    // gemm_wgmma_unsupported admitted layout nt only.
    return launch_typed<T, TOut, false, true, false, BN>(M, N, K, alpha, A, lda, B, ldb, beta, C, stream, type,
                                                         c_type, tuning, sms, splits, partial);
  } else {
    if (!a_trans && !b_trans)
      return launch_typed<T, TOut, false, false, kBias, BN>(M, N, K, alpha, A, lda, B, ldb, beta, C, stream, type,
                                                            c_type, tuning, sms, splits, partial, bias);
    if (!a_trans && b_trans)
      return launch_typed<T, TOut, false, true, kBias, BN>(M, N, K, alpha, A, lda, B, ldb, beta, C, stream, type,
                                                           c_type, tuning, sms, splits, partial, bias);
    if (a_trans && !b_trans)
      return launch_typed<T, TOut, true, false, kBias, BN>(M, N, K, alpha, A, lda, B, ldb, beta, C, stream, type,
                                                           c_type, tuning, sms, splits, partial, bias);
    return launch_typed<T, TOut, true, true, kBias, BN>(M, N, K, alpha, A, lda, B, ldb, beta, C, stream, type,
                                                        c_type, tuning, sms, splits, partial, bias);
  }
}

// TOut: C's element (T for 16-bit inputs, bf16 for fp8, whose only layout is nt). kBias: the
// epilogue adds `bias` (16-bit inputs only).
template <typename T, typename TOut = T, bool kBias = false>
cudaError_t launch(bool a_trans, bool b_trans, int M, int N, int K, float alpha, const T* A,
                   const T* B, float beta, TOut* C, cudaStream_t stream, CUtensorMapDataType type,
                   CUtensorMapDataType c_type, const GemmWgmmaTuning& tuning, void* workspace,
                   std::size_t workspace_bytes, const float* bias = nullptr) {
  static_assert(!kBias || !kPromote<T>, "the bias epilogue is for 16-bit inputs");
  if (kBias && bias == nullptr) return cudaErrorInvalidValue;
  if (M < 1 || N < 1 || K < 1 || A == nullptr || B == nullptr || C == nullptr)
    return cudaErrorInvalidValue;
  if (!tuning_valid(tuning, static_cast<int>(sizeof(T)))) return cudaErrorInvalidValue;
  // TMA global addresses must be 16-byte aligned.
  if ((reinterpret_cast<uintptr_t>(A) | reinterpret_cast<uintptr_t>(B)) % 16 != 0)
    return cudaErrorInvalidValue;
  int device = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  if (gemm_wgmma_unsupported(device, a_trans, b_trans, M, N, K, static_cast<int>(sizeof(T))) != nullptr)
    return cudaErrorNotSupported;
  int sms = 0, splits = 1;
  if (cudaError_t e = sm_count(&sms); e != cudaSuccess) return e;
  const int bn = gemm_wgmma_tile_n(M, N, static_cast<int>(sizeof(T)), sms, tuning);
  if (cudaError_t e = splits_for(M, N, K, static_cast<int>(sizeof(T)), sms, tuning, bn, workspace, workspace_bytes,
                                 &splits);
      e != cudaSuccess)
    return e;
  // Sums straight into C need no workspace and no slices: the by-shape count of that
  // case, with or without a workspace (tuning.splits still decides when set).
  if (kSumsIntoC<T, TOut, kBias> && forced_splits(tuning) == 0 && sums_into_c(alpha, beta, C))
    splits = splits_by_shape(M, N, K, static_cast<int>(sizeof(T)), sms, /*sums_into_c=*/true, bn);
  auto* partial = static_cast<float*>(workspace);
  if constexpr (sizeof(T) == 2) {
    if (bn == 128)
      return launch_layout<128, T, TOut, kBias>(a_trans, b_trans, M, N, K, alpha, A, B, beta, C, stream, type, c_type, tuning, sms,
                                splits, partial, bias);
  }
  return launch_layout<256, T, TOut, kBias>(a_trans, b_trans, M, N, K, alpha, A, B, beta, C, stream, type, c_type, tuning, sms,
                            splits, partial, bias);
}

}  // namespace

const char* gemm_wgmma_fp8_unsupported(bool a_trans, bool b_trans, int K) {
  if (a_trans || !b_trans)
    return "layout: fp8 wgmma reads both operands K-major only: layout nt (A stored (M, K), B stored (N, K))";
  if (K % 16 != 0) return "alignment: TMA needs 16-byte aligned row strides (fp8: K % 16 != 0)";
  return nullptr;
}

const char* gemm_wgmma_unsupported(int device, bool a_trans, bool b_trans, int M, int N, int K,
                                   int elem_bytes) {
  if (elem_bytes != 1 && elem_bytes != 2 && elem_bytes != 4)
    return "wgmma kernel takes fp8 e4m3, 16-bit inputs (bf16, f16) or f32 storage with tf32 math";
  if (M < 1 || N < 1 || K < 1) return "M, N, K must be >= 1";
  // fp8's layout and alignment rule first: host arithmetic, the same answer on every machine.
  if (elem_bytes == 1) {
    if (const char* why = gemm_wgmma_fp8_unsupported(a_trans, b_trans, K)) return why;
  }
  int major = 0;
  int minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return "no usable CUDA device";
  }
  if (major != 9 || minor != 0)
    return "not Hopper: wgmma needs compute capability 9.0 (built for sm_90a only)";
  if (arch::tensor_map_encoder() == nullptr) return "cuTensorMapEncodeTiled unavailable from the driver";
  // tf32: any operand that is not K-major with 16-byte rows is rewritten into the workspace.
  if (elem_bytes == 4) return nullptr;
  // TMA: the byte stride between stored rows must be a multiple of 16.
  if (!a_trans && K % 8 != 0) return "alignment: TMA needs 16-byte aligned row strides (A 'n': K % 8 != 0)";
  if (a_trans && M % 8 != 0) return "alignment: TMA needs 16-byte aligned row strides (A 't': M % 8 != 0)";
  if (b_trans && K % 8 != 0) return "alignment: TMA needs 16-byte aligned row strides (B 't': K % 8 != 0)";
  if (!b_trans && N % 8 != 0) return "alignment: TMA needs 16-byte aligned row strides (B 'n': N % 8 != 0)";
  return nullptr;
}

int gemm_wgmma_tile_n(int M, int N, int elem_bytes, int sms, const GemmWgmmaTuning& tuning) {
  static const int from_env = [] {
    const int v = arch::env_int("HARNESS_WGMMA_TILE_N");
    return v == 128 || v == 256 ? v : 0;
  }();
  if (elem_bytes != 2) return 256;
  if (tuning.tile_n == 128 || tuning.tile_n == 256) return tuning.tile_n;
  if (from_env != 0) return from_env;
  if (M < 1 || N < 1) return 256;
  // 128 x 128 where 128 x 256 tiles leave 7/8 of the SMs idle, or where 128 x 128 tiles keep
  // more than half of them busy unsplit; 128 x 256 otherwise (at 24-32 tiles of 128 x 256,
  // splitting those 4 ways beat twice the tiles split 2 ways). Measured on an H200 (bf16/f16,
  // cuBLAS in the same run; docs/PERFORMANCE.md, session 23): 128 x 128 against 128 x 256:
  // tn 512x512x8192 (8 tiles) 20.2 against 24.6 us; nt 128x4096x4096 (16) 21.5 against 26.2;
  // nt 128x14336x4096 (56; 112 unsplit) 36.4 against 50.2; tn 1536x512x8192 (24) 37.3 against
  // 33.9; tn 2048x512x8192 and 1024x1024x8192 (32) 38.4 / 39.0 against 37.2 / 37.3.
  const long long wide = tiles_of(M, N, 256), narrow = tiles_of(M, N, 128);
  return 8 * wide <= sms || (2 * wide <= sms && 2 * narrow > sms) ? 128 : 256;
}

int gemm_wgmma_splits(int M, int N, int K, int elem_bytes, int sms, bool sums_into_c) {
  return splits_by_shape(M, N, K, elem_bytes, sms, sums_into_c, gemm_wgmma_tile_n(M, N, elem_bytes, sms));
}

std::string gemm_wgmma_plan(int M, int N, int K, int elem_bytes, int sms, int cluster_m) {
  if (M < 1 || N < 1 || K < 1 || sms < 1 || (elem_bytes != 1 && elem_bytes != 2 && elem_bytes != 4)) return {};
  const int cl = cluster_m == 2 ? 2 : 1;
  const int bn = gemm_wgmma_tile_n(M, N, elem_bytes, sms);
  const long long tiles_m = (M + kBM - 1) / kBM, tiles_n = (N + bn - 1) / bn;
  const int k_steps = k_steps_of(K, elem_bytes);
  const bool forced = forced_splits(GemmWgmmaTuning{}) > 0;
  const int splits = splits_within_grid((tiles_m + cl - 1) / cl * tiles_n,
                                        requested_splits(M, N, K, elem_bytes, sms, GemmWgmmaTuning{}, bn), sms / cl);
  std::string plan = "128x" + std::to_string(bn) + " tiles: " + std::to_string(tiles_m * tiles_n) + " for " + std::to_string(sms) + " SMs";
  if (cl == 2) plan += ", clusters of 2";
  if (splits < 2) return plan + (forced ? "; unsplit (HARNESS_WGMMA_SPLITS)" : "; unsplit");
  const int lo = k_steps / splits, hi = (k_steps + splits - 1) / splits;
  return plan + "; split-K " + std::to_string(splits) + " (" + std::to_string(k_steps) + " K steps, " +
         (lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi)) +
         " a split; summed in the kernel" + (forced ? "; HARNESS_WGMMA_SPLITS" : "") + ")";
}

std::size_t gemm_wgmma_splitk_workspace_bytes(int M, int N, int K, int elem_bytes, const GemmWgmmaTuning& tuning) {
  int sms = 0;
  if (sm_count(&sms) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  const int bn = gemm_wgmma_tile_n(M, N, elem_bytes, sms, tuning);
  const int n = requested_splits(M, N, K, elem_bytes, sms, tuning, bn);
  return n > 1 ? split_sums_bytes(M, N, n, bn) : 0;
}

cudaError_t gemm_wgmma_bf16(bool a_trans, bool b_trans, int M, int N, int K, float alpha,
                            const __nv_bfloat16* A, const __nv_bfloat16* B, float beta,
                            __nv_bfloat16* C, cudaStream_t stream,
                            const GemmWgmmaTuning& tuning, void* workspace, std::size_t workspace_bytes) {
  return launch(a_trans, b_trans, M, N, K, alpha, A, B, beta, C, stream,
                CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, tuning, workspace, workspace_bytes);
}

cudaError_t gemm_wgmma_bf16_bias(bool a_trans, bool b_trans, int M, int N, int K, float alpha,
                                 const __nv_bfloat16* A, const __nv_bfloat16* B, const float* bias, float beta,
                                 __nv_bfloat16* C, cudaStream_t stream, const GemmWgmmaTuning& tuning,
                                 void* workspace, std::size_t workspace_bytes) {
  return launch<__nv_bfloat16, __nv_bfloat16, true>(a_trans, b_trans, M, N, K, alpha, A, B, beta, C, stream,
                                                    CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
                                                    tuning, workspace, workspace_bytes, bias);
}

cudaError_t gemm_wgmma_bf16_f32(bool a_trans, bool b_trans, int M, int N, int K, float alpha,
                                const __nv_bfloat16* A, const __nv_bfloat16* B, float beta, float* C,
                                cudaStream_t stream, const GemmWgmmaTuning& tuning, void* workspace,
                                std::size_t workspace_bytes) {
  return launch<__nv_bfloat16, float>(a_trans, b_trans, M, N, K, alpha, A, B, beta, C, stream,
                                      CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, tuning,
                                      workspace, workspace_bytes);
}

cudaError_t gemm_wgmma_f16(bool a_trans, bool b_trans, int M, int N, int K, float alpha,
                           const __half* A, const __half* B, float beta, __half* C,
                           cudaStream_t stream, const GemmWgmmaTuning& tuning, void* workspace,
                           std::size_t workspace_bytes) {
  return launch(a_trans, b_trans, M, N, K, alpha, A, B, beta, C, stream,
                CU_TENSOR_MAP_DATA_TYPE_FLOAT16, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, tuning, workspace, workspace_bytes);
}

// fp8 e4m3 (layout nt): alpha = scale_a * scale_b (one f32 rounding, 2^-24 relative), beta = 0.
// TMA moves the bytes untyped (UINT8); wgmma reads them as e4m3.
cudaError_t gemm_wgmma_fp8_e4m3(int M, int N, int K, float scale_a, float scale_b, const __nv_fp8_e4m3* A,
                                const __nv_fp8_e4m3* B, __nv_bfloat16* C, cudaStream_t stream,
                                const GemmWgmmaTuning& tuning, void* workspace, std::size_t workspace_bytes) {
  return launch(false, true, M, N, K, scale_a * scale_b, A, B, 0.f, C, stream, CU_TENSOR_MAP_DATA_TYPE_UINT8,
                CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, tuning, workspace, workspace_bytes);
}

// ---- tf32 -----------------------------------------------------------------------------------
// wgmma reads tf32 operands only K-major (no transpose bits), and TMA needs 16-byte row
// strides and bases. An operand that is K-major (A 'n' (M, K), B 't' (N, K)) with K % 4 == 0
// and a 16-byte aligned base is read in place; any other is first rewritten into the
// workspace as a K-major (rows, K) matrix with leading dimension kpad = round_up(K, 4):
// transposed (A 't' (K, M) -> (M, K), B 'n' (K, N) -> (N, K): gemm_transpose_f32) or copied
// row by row (cudaMemcpy2DAsync: only the stride or the base was misaligned). The pad
// columns are never read (the tensor map's width is K). The rewrite runs on `stream` before
// the GEMM and is part of whatever the caller times.

namespace {

long long tf32_kpad(int K) { return (static_cast<long long>(K) + 3) / 4 * 4; }

bool tf32_in_place(bool k_major, int K, const void* p) {
  return k_major && K % 4 == 0 && reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

// One operand of `rows` K-major rows: in place, or rewritten at `dst` (see above).
cudaError_t tf32_prepare(bool k_major, int rows, int K, const float* src, float* dst,
                         const float** out, int* ld, cudaStream_t stream) {
  if (tf32_in_place(k_major, K, src)) {
    *out = src;
    *ld = K;
    return cudaSuccess;
  }
  const int kpad = static_cast<int>(tf32_kpad(K));
  *out = dst;
  *ld = kpad;
  if (!k_major) return gemm_transpose_f32(K, rows, src, rows, dst, kpad, stream);  // (K, rows) -> (rows, K)
  return cudaMemcpy2DAsync(dst, static_cast<size_t>(kpad) * sizeof(float), src,
                           static_cast<size_t>(K) * sizeof(float), static_cast<size_t>(K) * sizeof(float),
                           static_cast<size_t>(rows), cudaMemcpyDeviceToDevice, stream);
}

std::size_t tf32_bytes(bool k_major, int rows, int K, const void* p) {
  return tf32_in_place(k_major, K, p) ? 0
                                      : static_cast<std::size_t>(rows) * static_cast<std::size_t>(tf32_kpad(K)) *
                                            sizeof(float);
}

}  // namespace

std::size_t gemm_wgmma_tf32_workspace_bytes(bool a_trans, bool b_trans, int M, int N, int K,
                                            const float* A, const float* B, const GemmWgmmaTuning& tuning) {
  if (M < 1 || N < 1 || K < 1) return 0;
  return tf32_bytes(!a_trans, M, K, A) + tf32_bytes(b_trans, N, K, B) +
         gemm_wgmma_splitk_workspace_bytes(M, N, K, 4, tuning);
}

cudaError_t gemm_wgmma_tf32(bool a_trans, bool b_trans, int M, int N, int K, float alpha, const float* A,
                            const float* B, float beta, float* C, void* workspace, std::size_t workspace_bytes,
                            cudaStream_t stream, const GemmWgmmaTuning& tuning) {
  if (M < 1 || N < 1 || K < 1 || A == nullptr || B == nullptr || C == nullptr)
    return cudaErrorInvalidValue;
  if (!tuning_valid(tuning, 4)) return cudaErrorInvalidValue;
  int device = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  if (gemm_wgmma_unsupported(device, a_trans, b_trans, M, N, K, 4) != nullptr) return cudaErrorNotSupported;
  const std::size_t a_bytes = tf32_bytes(!a_trans, M, K, A);
  const std::size_t need = a_bytes + tf32_bytes(b_trans, N, K, B);
  if (need > 0 && (workspace == nullptr || reinterpret_cast<uintptr_t>(workspace) % 16 != 0 ||
                   workspace_bytes < need))
    return cudaErrorInvalidValue;
  // The split-K sums (optional: without room the GEMM runs unsplit) after the rewrites; need
  // is a multiple of 16 bytes (rows of kpad floats).
  int sms = 0, splits = 1;
  if (cudaError_t e = sm_count(&sms); e != cudaSuccess) return e;
  void* sums = workspace == nullptr ? nullptr : static_cast<unsigned char*>(workspace) + need;
  if (cudaError_t e = splits_for(M, N, K, 4, sms, tuning, 256, sums, workspace == nullptr ? 0 : workspace_bytes - need,
                                 &splits);
      e != cudaSuccess)
    return e;
  auto* ws = static_cast<float*>(workspace);
  const float* a = nullptr;
  const float* b = nullptr;
  int lda = 0, ldb = 0;
  if (cudaError_t e = tf32_prepare(!a_trans, M, K, A, ws, &a, &lda, stream); e != cudaSuccess) return e;
  // a_bytes is a multiple of 16 (rows of kpad floats): B's copy starts aligned too.
  if (cudaError_t e = tf32_prepare(b_trans, N, K, B, ws == nullptr ? nullptr : ws + a_bytes / sizeof(float), &b,
                                   &ldb, stream);
      e != cudaSuccess)
    return e;
  return launch_typed<float, float, false, true, false, 256>(M, N, K, alpha, a, lda, b, ldb, beta, C, stream,
                                                 CU_TENSOR_MAP_DATA_TYPE_FLOAT32, CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
                                                 tuning, sms, splits,
                                          static_cast<float*>(sums));
}

}  // namespace kernels::gemm
