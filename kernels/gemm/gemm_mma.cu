// Tensor-core GEMM on warp-level mma.sync: C = alpha * op(A) op(B) + beta * C (see
// gemm_mma.hpp for the contract, gemm_types.hpp for layouts and dtypes).
//
// Tiles. Three block configurations (Cfg below; gemm_mma_pick_tile chooses by shape):
//   large  (128, 256) C tile, 256 threads = 2 (M) x 4 (N) warps of (64, 64), 4 stages;
//   medium (128, 128) C tile, 128 threads = 2 x 2 warps of (64, 64), 3 stages;
//   small  ( 64,  64) C tile, 128 threads = 2 x 2 warps of (32, 32), 4 stages.
// A (64, 64) warp tile is 4 x 8 mma tiles of (16, 8): 128 FP32 accumulators per thread,
// and per k-step 4 A + 4 B ldmatrix.x4 feed 32 mma (4 mma per ldmatrix; a (64, 32) warp
// tile gets 2.7), so shared-memory bandwidth stays below the tensor pipe's needs.
// The K depth of a stage is 128 bytes of input: BK = 64 bf16/f16 elements (four m16n8k16
// steps) or 32 floats for tf32 (four m16n8k8 steps): one barrier per 4 k-steps.
// Large needs up to 255 registers (one block of 8 warps per SM, 192 KB of shared memory);
// it runs where its tiles fill every SM at least once, medium where its tiles do, small
// otherwise (small M or N: a linear layer on a batch of 16..128 rows gets 64-row tiles and
// 4x the blocks of a 128x128 grid).
//
// Data path. global --cp.async (16 B, L2 only: .cg)--> shared memory, a ring of stages
// (stages - 1 tiles in flight while the tensor cores work on one) --ldmatrix--> registers
// (fragments double-buffered: the k-step ks + 1 is loaded while the mmas of ks run, and
// the first k-step of the next stage is loaded right after the stage's barrier, before the
// last mmas of the current one) --mma.sync--> FP32 accumulators --> predicated epilogue
// (alpha, beta, rounding to the output type; two adjacent columns per store) --> global.
// Shared tiles keep the operand's global orientation, so every 16-byte chunk is copied as
// is: a "K-contiguous" operand (A 'n', B 't') is stored as BM (BN) rows of 8 chunks along
// K and read with ldmatrix; an "MN-contiguous" operand (A 't', B 'n') as BK rows (K) of
// BM (BN) elements and read with ldmatrix.trans, which transposes each 8x8 block of 16-bit
// elements on the way -- so all four layouts run the same data path.
// ldmatrix.trans has no 32-bit form: tf32 MN-contiguous fragments are read with 32-bit
// shared loads (same swizzle, also conflict-free).
//
// Swizzle. A chunk (row r, logical index c) of a row of R >= 8 chunks lives at physical
// chunk c ^ s(r), s(r) = ((r & 3) << 1) | ((r >> 2) & 1) on the low 3 bits. It is a
// permutation within a row, so cp.async writes of whole rows stay conflict-free; the 8
// rows one ldmatrix phase reads (8 consecutive r, same c) land in 8 different 16-byte bank
// groups (s takes 8 distinct values on r & 7); and the tf32 scalar reads (4 consecutive
// rows k, 8 consecutive elements = 2 chunks) land in 8 different bank groups too (the
// (r & 3) << 1 term separates the rows, the chunk's low bit the two chunks).
//
// Edges. Chunks outside the matrix are zero-filled (cp.async src-size 0), so partial
// tiles in M, N and K add zeros; the epilogue writes only elements inside (M, N). The
// fast path needs 16-byte rows (leading dimension a multiple of 8 halves / 4 floats);
// otherwise kAligned = false loads each element with a bounds check and stores the chunk
// to shared memory with one 16-byte store (same pipeline, synchronous loads; medium or
// small tiles only).
// Block order: tiles are numbered in groups of GROUP tile rows (M) so that consecutive
// blocks share panels of A and B in L2 (16 rows of 128 for large: a group's A panel, 2048
// rows, matches the 8 columns of 256 that ~one wave of 132 blocks covers).
#include <cstdint>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "arch/numeric.cuh"
#include "arch/sm80_cp_async.cuh"
#include "arch/sm80_ldmatrix.cuh"
#include "arch/sm80_mma.cuh"
#include "arch/smem.cuh"
#include "gemm/gemm_mma.hpp"

namespace kernels::gemm {
namespace {

constexpr int kRowBytes = 128;  // BK in bytes: 64 bf16/f16 or 32 floats per stage

// A block tile configuration: (BM, BN) tile of C, a WARPS_M x WARPS_N grid of warps,
// STAGES shared-memory stages, MIN_BLOCKS for __launch_bounds__, GROUP tile rows per raster group.
template <int BM_, int BN_, int WARPS_M_, int WARPS_N_, int STAGES_, int MIN_BLOCKS_, int GROUP_>
struct Cfg {
  static constexpr int BM = BM_, BN = BN_, WARPS_M = WARPS_M_, WARPS_N = WARPS_N_;
  static constexpr int kStages = STAGES_, kMinBlocks = MIN_BLOCKS_, kGroupRows = GROUP_;
  static constexpr int kThreads = 32 * WARPS_M * WARPS_N;
  static constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N;  // warp tile
  static constexpr int MI = WM / 16;                            // m16 tiles per warp
  static constexpr int NJ = WN / 8;                             // n8 tiles per warp
  static constexpr int kATileBytes = BM * kRowBytes, kBTileBytes = BN * kRowBytes;
  static constexpr int kStageBytes = kATileBytes + kBTileBytes;
  static constexpr int kSharedBytes = kStages * kStageBytes;
  static_assert(WM % 16 == 0 && WN % 16 == 0);
};
using Large = Cfg<128, 256, 2, 4, 4, 1, 16>;  // 192 KB, (64, 64) warp tiles
using Medium = Cfg<128, 128, 2, 4, 3, 1, 8>;  // 96 KB, (64, 32) warp tiles
using Small = Cfg<64, 64, 2, 2, 4, 3, 8>;     // 64 KB, (32, 32) warp tiles

// Physical byte offset of chunk `c` of row `r` in a tile with `R` chunks per row.
template <int R>
__device__ __forceinline__ int swz(int r, int c) {
  static_assert(R % 8 == 0);
  return (r * R + (c ^ (((r & 3) << 1) | ((r >> 2) & 1)))) * 16;
}

template <class T> struct Elem;
template <> struct Elem<float> {
  static __device__ __forceinline__ float to_float(float v) { return v; }
  static __device__ __forceinline__ float from_float(float v) { return v; }
};
template <> struct Elem<__nv_bfloat16> {
  static __device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
  static __device__ __forceinline__ __nv_bfloat16 from_float(float v) { return __float2bfloat16_rn(v); }
};
template <> struct Elem<__half> {
  static __device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
  static __device__ __forceinline__ __half from_float(float v) { return __float2half_rn(v); }
};

// d += a * b for one (16, 8) tile. T picks the instruction: m16n8k16 bf16/f16, m16n8k8 tf32.
template <class T>
__device__ __forceinline__ void mma(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
  if constexpr (std::is_same_v<T, float>)
    arch::mma_m16n8k8_tf32(d, a[0], a[1], a[2], a[3], b0, b1);
  else
    arch::mma_m16n8k16<T>(d, a, b0, b1);
}

// One operand's (ROWS x BK) tile of a stage, ROWS = BM (A) or BN (B). kKContig: stored
// (MN, K) -> ROWS rows of 8 chunks; else stored (K, MN) -> BK rows of ROWS / E chunks.
// `G` is the stored matrix (rows, cols) row-major; mn0 the tile origin along M or N.
// Thread tid copies the chunks (r0 + i * RS, c) for i < kPer: the per-thread pointer and
// bounds are computed once per block, so a stage costs an add per chunk (few registers:
// the (64, 64) warp tile leaves ~60 for everything but accumulators and fragments).
template <class T, bool kKContig, bool kAligned, int ROWS, int kThreads>
struct TileLoader {
  static constexpr int E = 16 / static_cast<int>(sizeof(T));  // elements per chunk
  static constexpr int R = kKContig ? kRowBytes / 16 : ROWS / E;  // chunks per smem row
  static constexpr int kChunks = ROWS * kRowBytes / 16;
  static constexpr int kPer = kChunks / kThreads;  // chunks per thread
  static constexpr int RS = kThreads / R;          // smem rows between a thread's chunks
  static_assert(kChunks % kThreads == 0 && kThreads % R == 0);

  const T* p0;        // element (r0, c * E) of the tile at k0 = 0
  long long istride;  // elements between chunk i and i + 1 (RS rows of G)
  int dst0;           // swizzled smem offset of chunk 0
  int fixed_lim;      // K-contig: rows left below r0 (chunk i valid if i * RS < it); MN: columns left
  int var_lim;        // K-contig: columns left after c * E (k0 + e < it); MN: rows left below r0
  int cols;
  int r0, c;          // this thread's first chunk (smem row, logical chunk)

  __device__ __forceinline__ TileLoader(const T* __restrict__ G, int rows, int cols_, int mn0, int tid) {
    r0 = tid / R;
    c = tid % R;
    cols = cols_;
    istride = static_cast<long long>(RS) * cols;
    dst0 = swz<R>(r0, c);
    if constexpr (kKContig) {
      p0 = G + static_cast<long long>(mn0 + r0) * cols + c * E;
      fixed_lim = rows - (mn0 + r0);
      var_lim = cols - c * E;
    } else {
      p0 = G + static_cast<long long>(r0) * cols + mn0 + c * E;
      fixed_lim = cols - (mn0 + c * E);
      var_lim = rows - r0;
    }
  }

  __device__ __forceinline__ void load(unsigned char* tile, const T* __restrict__ G, int k0) const {
    const T* base = p0 + (kKContig ? static_cast<long long>(k0) : static_cast<long long>(k0) * cols);
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      // s(r) depends on r & 7 only: when RS is a multiple of 8 every chunk shares chunk 0's swizzle.
      int dst;
      if constexpr (RS % 8 == 0) {
        dst = dst0 + i * RS * R * 16;
      } else {
        dst = swz<R>(r0 + i * RS, c);
      }
      const T* src = base + i * istride;
      if constexpr (kAligned) {
        // cols % E == 0 here, so a chunk that starts inside the row ends inside it.
        const bool valid = kKContig ? (i * RS < fixed_lim && k0 < var_lim) : (0 < fixed_lim && k0 + i * RS < var_lim);
        // Invalid: src-size 0 writes 16 zero bytes and reads nothing (src must still be a
        // valid address: G).
        arch::cp_async16(arch::smem_u32(tile + dst), valid ? src : G, valid);
      } else {
        alignas(16) T v[E];
#pragma unroll
        for (int e = 0; e < E; ++e) {
          const bool valid = kKContig ? (i * RS < fixed_lim && k0 + e < var_lim) : (e < fixed_lim && k0 + i * RS < var_lim);
          v[e] = valid ? src[e] : Elem<T>::from_float(0.0f);
        }
        *reinterpret_cast<uint4*>(tile + dst) = *reinterpret_cast<const uint4*>(v);
      }
    }
  }
};

// Per-lane shared-memory offsets of one operand's ldmatrix fragments, computed once.
// mn_half / k_half: which bit of the lane's 8x8 matrix index q selects the upper 8 rows
// along M/N and along K (A: q & 1, q >> 1; B: q >> 1, q & 1). The offset of m16 (n16)
// tile i at k-step ks is then base + an immediate + ((x ^ const) << 4), because the
// swizzle s depends on the row's low 3 bits only (r8 here) and the chunk terms that vary
// with i or ks occupy bits that no other term carries into.
// tf32 MN-contiguous (32-bit loads, off32): element (mn, k) with mn = w * WT + 16 i + g +
// 8 mn_hi and k = 8 ks + t + 4 k_hi sits in row k, chunk mn / 4, word g & 3; s(k) =
// 2t | k_hi, and the chunk's terms (w * WT / 4, 4 i, g >> 2, 2 mn_hi) are disjoint bits, so
// the physical chunk is (w * WT / 4 ^ g >> 2 ^ 2t) ^ (4 i ^ 2 mn_hi ^ k_hi).
template <bool kKContig, int R, int WT, bool kScalar32>
struct FragAddr {
  int base, x;
  __device__ __forceinline__ FragAddr(int w, int mn_half, int k_half, int lane) {
    const int r8 = lane % 8, g = lane / 4, t = lane % 4;
    const int s = ((r8 & 3) << 1) | ((r8 >> 2) & 1);
    if constexpr (kScalar32) {
      static_assert(!kKContig && (WT / 16 & (WT / 16 - 1)) == 0);
      base = t * R * 16 + (g & 3) * 4;
      x = (w * WT / 4) ^ (g >> 2) ^ (2 * t);
    } else if constexpr (kKContig) {  // row (MN) w * WT + 16 i + 8 mn_half + r8, chunk 2 ks + k_half
      base = (w * WT + mn_half * 8 + r8) * kRowBytes;
      x = k_half ^ s;
    } else {  // row (K) 16 ks + 8 k_half + r8, chunk (w * WT + 16 i + 8 mn_half) / 8 (16-bit types)
      base = (k_half * 8 + r8) * R * 16;
      x = (w * WT / 8 + mn_half) ^ s;
    }
  }
  __device__ __forceinline__ int off(int i, int ks) const {
    if constexpr (kKContig) return base + i * 16 * kRowBytes + (((2 * ks) ^ x) << 4);
    else return base + ks * 16 * R * 16 + ((x ^ (2 * i)) << 4);
  }
  __device__ __forceinline__ int off32(int i, int ks, int mn_hi, int k_hi) const {
    return base + (8 * ks + 4 * k_hi) * R * 16 + ((x ^ (4 * i) ^ (2 * mn_hi) ^ k_hi) << 4);
  }
};

// Loads the fragments of k-step `ks` (k offset kk = 16 ks, 8 ks for tf32) of a stage: af[i]
// for the MI m16 tiles (rows mrow = wm * WM + 16 i), bf[j] for the
// NJ n8 tiles (pairs from ncol = wn * WN + 16 j) of this warp (mma fragment layouts).
template <class C, class T, bool kAK, bool kBK, class LA, class LB, class FA, class FB>
__device__ __forceinline__ void load_fragments(std::uint32_t (&af)[C::MI][4], std::uint32_t (&bf)[C::NJ][2],
                                               const unsigned char* a_tile, const unsigned char* b_tile, int ks,
                                               const FA& fa, const FB& fb) {
  constexpr bool kTf32 = sizeof(T) == 4;
  const std::uint32_t a_s = arch::smem_u32(a_tile), b_s = arch::smem_u32(b_tile);
#pragma unroll
  for (int i = 0; i < C::MI; ++i) {
    if constexpr (kAK) {
      // matrix q: rows mrow + (q & 1) * 8, k chunk (kk / E) + (q >> 1) -> a0..a3.
      arch::ldsm_x4(af[i], a_s + fa.off(i, ks));
    } else if constexpr (!kTf32) {
      // Stored (K, M): matrix q covers k rows kk + (q >> 1) * 8 .., m chunk (mrow + (q & 1) * 8) / 8;
      // .trans hands lane (g, t) the elements (m = g, k = 2t, 2t + 1).
      arch::ldsm_x4_t(af[i], a_s + fa.off(i, ks));
    } else {
      // tf32, stored (K, M): a0 (m g, k t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4).
#pragma unroll
      for (int v = 0; v < 4; ++v)
        af[i][v] = *reinterpret_cast<const std::uint32_t*>(a_tile + fa.off32(i, ks, v & 1, v >> 1));
    }
    if constexpr (kTf32) {
#pragma unroll
      for (int v = 0; v < 4; ++v) af[i][v] = arch::to_tf32(af[i][v]);
    }
  }
#pragma unroll
  for (int j = 0; j < C::NJ / 2; ++j) {
    std::uint32_t x[4];
    if constexpr (kBK) {
      // Stored (N, K): matrix q: rows ncol + (q >> 1) * 8, k chunk kk / E + (q & 1).
      arch::ldsm_x4(x, b_s + fb.off(j, ks));
    } else if constexpr (!kTf32) {
      // Stored (K, N): matrix q: k rows kk + (q & 1) * 8 .., n chunk (ncol + (q >> 1) * 8) / 8.
      arch::ldsm_x4_t(x, b_s + fb.off(j, ks));
    } else {
      // tf32, stored (K, N): b0 (k t, n g), b1 (k t + 4, n g), for n tiles at ncol, ncol + 8.
#pragma unroll
      for (int v = 0; v < 4; ++v)
        x[v] = *reinterpret_cast<const std::uint32_t*>(b_tile + fb.off32(j, ks, v >> 1, v & 1));
    }
#pragma unroll
    for (int v = 0; v < 4; ++v) bf[2 * j + v / 2][v % 2] = kTf32 ? arch::to_tf32(x[v]) : x[v];
  }
}

// tf32's scalar load path spills at small's 3 blocks per SM (<= 170 registers): 2 there.
template <class C, class T, bool kAT, bool kBT, bool kAligned>
__global__ void __launch_bounds__(C::kThreads, sizeof(T) == 4 && !kAligned && C::kMinBlocks > 2 ? 2 : C::kMinBlocks)
    gemm_mma_kernel(int M, int N, int K, float alpha, const T* __restrict__ A, const T* __restrict__ B, float beta,
                    T* __restrict__ Cm) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  constexpr bool kAK = !kAT;  // A K-contiguous: stored (M, K)
  constexpr bool kBK = kBT;   // B K-contiguous: stored (N, K)
  using LA = TileLoader<T, kAK, kAligned, C::BM, C::kThreads>;
  using LB = TileLoader<T, kBK, kAligned, C::BN, C::kThreads>;
  constexpr int E = LA::E;
  constexpr int BK = kRowBytes / static_cast<int>(sizeof(T));  // 64 or 32 (tf32)
  constexpr int KS = BK / (2 * E);  // k-steps per stage: 4
  static_assert(KS % 2 == 0, "fragment double buffering alternates buffers within a stage");
  constexpr int S = C::kStages;

  extern __shared__ __align__(128) unsigned char smem[];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int wm = warp % C::WARPS_M, wn = warp / C::WARPS_M;  // warp tile at (wm * WM, wn * WN)

  // Grouped raster over the (tiles_m, tiles_n) grid of C tiles.
  const int tiles_m = (M + C::BM - 1) / C::BM, tiles_n = (N + C::BN - 1) / C::BN;
  const int per_group = C::kGroupRows * tiles_n;
  const int group = blockIdx.x / per_group, first_m = group * C::kGroupRows;
  const int group_rows = min(tiles_m - first_m, C::kGroupRows);
  const int in_group = blockIdx.x % per_group;
  const int m0 = (first_m + in_group % group_rows) * C::BM;
  const int n0 = (in_group / group_rows) * C::BN;

  // Stored shapes (rows, cols): A (M, K) or (K, M); B (K, N) or (N, K).
  const int a_rows = kAT ? K : M, a_cols = kAT ? M : K;
  const int b_rows = kBT ? N : K, b_cols = kBT ? K : N;

  float acc[C::MI][C::NJ][4] = {};
  std::uint32_t af[2][C::MI][4], bf[2][C::NJ][2];
  const int ktiles = (K + BK - 1) / BK;
  const LA la(A, a_rows, a_cols, m0, tid);
  const LB lb(B, b_rows, b_cols, n0, tid);
  auto load_stage = [&](int stage, int kt) {
    unsigned char* base = smem + stage * C::kStageBytes;
    la.load(base, A, kt * BK);
    lb.load(base + C::kATileBytes, B, kt * BK);
  };
  const int q = lane / 8;  // ldmatrix: which 8x8 matrix this lane addresses
  constexpr bool kTf32 = sizeof(T) == 4;
  using FA = FragAddr<kAK, LA::R, C::WM, kTf32 && !kAK>;
  using FB = FragAddr<kBK, LB::R, C::WN, kTf32 && !kBK>;
  const FA fa(wm, q & 1, q >> 1, lane);
  const FB fb(wn, q >> 1, q & 1, lane);
  auto stage_a = [&](int stage) { return smem + stage * C::kStageBytes; };

  // Prologue: tiles 0 .. S-2 in flight, wait for tile 0, load its first fragments.
#pragma unroll
  for (int s = 0; s < S - 1; ++s) {
    if (s < ktiles) load_stage(s, s);
    arch::cp_async_commit();
  }
  arch::cp_async_wait<S - 2>();
  __syncthreads();
  int read = 0, write = S - 1;
  load_fragments<C, T, kAK, kBK, LA, LB>(af[0], bf[0], stage_a(0), stage_a(0) + C::kATileBytes, 0, fa, fb);

  // Iteration kt: the mmas of tile kt (stage `read`) while tiles kt+1 .. kt+S-1 load.
  // Stage `write` = (kt - 1) % S was last read (fragments of its last k-step) before the
  // barrier at the end of iteration kt - 1, so refilling it at ks = 0 is safe.
  // Commit groups before the barrier of iteration kt: S - 1 + kt + 1; tile kt + 1 is group
  // kt + 1, so waiting until at most S - 2 are pending makes it land.
  for (int kt = 0; kt < ktiles; ++kt) {
#pragma unroll
    for (int ks = 0; ks < KS; ++ks) {
      if (ks == KS - 1) {
        arch::cp_async_wait<S - 2>();  // tile kt + 1 has landed (this thread's copies) ...
        __syncthreads();               // ... every thread's; everyone is done reading stage `read`'s fragments
        read = read + 1 == S ? 0 : read + 1;
      }
      // Prefetch the fragments of the next k-step (the next stage's first after the barrier;
      // after the last tile this reads a stale stage and the result is unused).
      const int nks = (ks + 1) % KS;
      const unsigned char* a_tile = stage_a(read);
      load_fragments<C, T, kAK, kBK, LA, LB>(af[(ks + 1) % 2], bf[(ks + 1) % 2], a_tile, a_tile + C::kATileBytes,
                                             nks, fa, fb);
      if (ks == 0) {
        if (kt + S - 1 < ktiles) load_stage(write, kt + S - 1);
        arch::cp_async_commit();
        write = write + 1 == S ? 0 : write + 1;
      }
#pragma unroll
      for (int i = 0; i < C::MI; ++i)
#pragma unroll
        for (int j = 0; j < C::NJ; ++j) mma<T>(acc[i][j], af[ks % 2][i], bf[ks % 2][j][0], bf[ks % 2][j][1]);
    }
  }
  arch::cp_async_wait<0>();  // no copy may outlive the block (only empty groups remain)

  // Epilogue: acc[i][j] = C rows (g, g + 8) x cols (2t, 2t + 1) of mma tile (i, j); the
  // two columns go out in one store when N is even and C aligned to two elements.
  const int g = lane / 4, t = lane % 4;
  const bool pairs = N % 2 == 0 && reinterpret_cast<std::uintptr_t>(Cm) % (2 * sizeof(T)) == 0;
#pragma unroll
  for (int i = 0; i < C::MI; ++i)
#pragma unroll
    for (int j = 0; j < C::NJ; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = m0 + wm * C::WM + i * 16 + g + h * 8;
        const int col = n0 + wn * C::WN + j * 8 + 2 * t;
        if (row >= M) continue;
        T* p = Cm + static_cast<std::size_t>(row) * N + col;
        float out[2];
#pragma unroll
        for (int v = 0; v < 2; ++v) {
          const float a = alpha * acc[i][j][2 * h + v];
          out[v] = (beta == 0.0f || col + v >= N) ? a : fmaf(beta, Elem<T>::to_float(p[v]), a);
        }
        if (pairs && col + 1 < N) {
          if constexpr (sizeof(T) == 4) {
            *reinterpret_cast<float2*>(p) = make_float2(out[0], out[1]);
          } else {
            alignas(4) T two[2] = {Elem<T>::from_float(out[0]), Elem<T>::from_float(out[1])};
            *reinterpret_cast<std::uint32_t*>(p) = *reinterpret_cast<const std::uint32_t*>(two);
          }
        } else {
#pragma unroll
          for (int v = 0; v < 2; ++v)
            if (col + v < N) p[v] = Elem<T>::from_float(out[v]);
        }
      }
#else
  __trap();  // the host launcher refuses devices below sm_80
#endif
}

template <class C, class T, bool kAT, bool kBT, bool kAligned>
cudaError_t launch(int M, int N, int K, float alpha, const void* A, const void* B, float beta, void* Cm,
                   cudaStream_t stream) {
  auto kernel = gemm_mma_kernel<C, T, kAT, kBT, kAligned>;
  if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, C::kSharedBytes);
      e != cudaSuccess)
    return e;
  const long long tiles = static_cast<long long>((M + C::BM - 1) / C::BM) * ((N + C::BN - 1) / C::BN);
  if (tiles > 0x7fffffffLL) return cudaErrorInvalidConfiguration;
  kernel<<<static_cast<unsigned>(tiles), C::kThreads, C::kSharedBytes, stream>>>(
      M, N, K, alpha, static_cast<const T*>(A), static_cast<const T*>(B), beta, static_cast<T*>(Cm));
  return cudaGetLastError();
}

// The scalar load path (unaligned rows) runs medium or small tiles only (fewer
// instantiations; large's (64, 64) warp tiles leave no registers for scalar loads), and so
// does tf32 with an MN-contiguous operand (its 32-bit fragment loads spill at (64, 64)).
template <class T, bool kAT, bool kBT>
cudaError_t launch_tile(MmaTile tile, bool fast, int M, int N, int K, float alpha, const void* A, const void* B,
                        float beta, void* C, cudaStream_t stream) {
  constexpr bool kLargeOk = !(sizeof(T) == 4 && (kAT || !kBT));
  if (fast) {
    switch (tile) {
      case MmaTile::large:
        if constexpr (kLargeOk) return launch<Large, T, kAT, kBT, true>(M, N, K, alpha, A, B, beta, C, stream);
        [[fallthrough]];
      case MmaTile::medium: return launch<Medium, T, kAT, kBT, true>(M, N, K, alpha, A, B, beta, C, stream);
      default: return launch<Small, T, kAT, kBT, true>(M, N, K, alpha, A, B, beta, C, stream);
    }
  }
  if (tile == MmaTile::small) return launch<Small, T, kAT, kBT, false>(M, N, K, alpha, A, B, beta, C, stream);
  return launch<Medium, T, kAT, kBT, false>(M, N, K, alpha, A, B, beta, C, stream);
}

template <class T>
cudaError_t launch_layout(MmaTile tile, Layout layout, bool fast, int M, int N, int K, float alpha, const void* A,
                          const void* B, float beta, void* C, cudaStream_t stream) {
  switch (layout) {
    case Layout::nn: return launch_tile<T, false, false>(tile, fast, M, N, K, alpha, A, B, beta, C, stream);
    case Layout::nt: return launch_tile<T, false, true>(tile, fast, M, N, K, alpha, A, B, beta, C, stream);
    case Layout::tn: return launch_tile<T, true, false>(tile, fast, M, N, K, alpha, A, B, beta, C, stream);
    case Layout::tt: return launch_tile<T, true, true>(tile, fast, M, N, K, alpha, A, B, beta, C, stream);
  }
  return cudaErrorInvalidValue;
}

long long tile_count(int M, int N, int bm, int bn) {
  return static_cast<long long>((M + bm - 1) / bm) * ((N + bn - 1) / bn);
}

}  // namespace

MmaTile gemm_mma_pick_tile(int M, int N, int sms) {
  if (tile_count(M, N, Large::BM, Large::BN) >= sms) return MmaTile::large;
  if (tile_count(M, N, Medium::BM, Medium::BN) >= sms) return MmaTile::medium;
  return MmaTile::small;
}

bool gemm_mma_fast_path(TcDType dtype, Layout layout, int M, int N, int K, const void* A, const void* B) {
  const int e = 16 / element_bytes(dtype);
  const int lda = a_transposed(layout) ? M : K;
  const int ldb = b_transposed(layout) ? K : N;
  return lda % e == 0 && ldb % e == 0 && reinterpret_cast<std::uintptr_t>(A) % 16 == 0 &&
         reinterpret_cast<std::uintptr_t>(B) % 16 == 0;
}

cudaError_t gemm_mma_tile(MmaTile tile, TcDType dtype, Layout layout, int M, int N, int K, float alpha,
                          const void* A, const void* B, float beta, void* C, cudaStream_t stream) {
  if (M < 1 || N < 1 || K < 1 || A == nullptr || B == nullptr || C == nullptr || dtype == TcDType::f32 ||
      dtype == TcDType::fp8_e4m3)
    return cudaErrorInvalidValue;
  int device = 0, major = 0, minor = 0, sms = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  if (cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device); e != cudaSuccess)
    return e;
  if (cudaError_t e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device); e != cudaSuccess)
    return e;
  if (major * 10 + minor < kMmaMinComputeCapability) return cudaErrorNotSupported;
  if (tile == MmaTile::automatic) {
    if (cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device); e != cudaSuccess)
      return e;
    tile = gemm_mma_pick_tile(M, N, sms);
  }
  // A tile whose shared memory the device cannot give one block (large's 192 KB on an
  // A100's 163 KB, medium's 96 KB on a 99 KB sm_86) runs the next smaller one.
  int smem_optin = 0;
  if (cudaError_t e = cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
      e != cudaSuccess)
    return e;
  if (tile == MmaTile::large && Large::kSharedBytes > smem_optin) tile = MmaTile::medium;
  if (tile == MmaTile::medium && Medium::kSharedBytes > smem_optin) tile = MmaTile::small;
  const bool fast = gemm_mma_fast_path(dtype, layout, M, N, K, A, B);
  switch (dtype) {
    case TcDType::tf32: return launch_layout<float>(tile, layout, fast, M, N, K, alpha, A, B, beta, C, stream);
    case TcDType::bf16: return launch_layout<__nv_bfloat16>(tile, layout, fast, M, N, K, alpha, A, B, beta, C, stream);
    case TcDType::f16: return launch_layout<__half>(tile, layout, fast, M, N, K, alpha, A, B, beta, C, stream);
    case TcDType::f32:
    case TcDType::fp8_e4m3: break;
  }
  return cudaErrorInvalidValue;
}

cudaError_t gemm_mma(TcDType dtype, Layout layout, int M, int N, int K, float alpha, const void* A, const void* B,
                     float beta, void* C, cudaStream_t stream) {
  return gemm_mma_tile(MmaTile::automatic, dtype, layout, M, N, K, alpha, A, B, beta, C, stream);
}

}  // namespace kernels::gemm
