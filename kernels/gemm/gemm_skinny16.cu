// Skinny GEMM in 16 bits (gemm_skinny16.hpp), layout nt: both operands K contiguous.
//
// Roles: W, the big operand (R rows of K: B when M is the small side, else A) and X, the small
// one (S rows of K, S <= 64). out(r, s) = alpha * sum_k W(r, k) X(s, k) + beta * out(r, s),
// stored at C[r * c_stride_w + s * c_stride_x] (M small: C(m = s, n = r), so strides 1 and N;
// N small: C(m = r, n = s), strides N and 1).
//
// Tiles and data path:
//   grid (KS, ceil(R / 128)): a cluster of KS CTAs (1 to 8) shares one block of 128 W
//   rows and splits K into KS slices of 32-wide k steps.
//   CTA: 8 warps, warp w owns W rows 16 w .. 16 w + 15 of the block and every X row (NT
//   n-tiles of 8, S padded to 8 NT); mma.sync m16n8k16 with W as the A operand (16 x k) and
//   X^T as B (k x 8).
//   Fragments are read 16 bytes a lane: lane (g, t) (g = lane / 4, t = lane % 4) reads elements
//   8t .. 8t + 7 of a 32-wide k step of W rows g and g + 8 (from global memory straight into
//   registers) and of X row g of each n-tile (from shared memory, see below). The order of k inside a dot product is free, so
//   the fragments take those elements as they come: physical k 8t + {0,1 | 2,3} are the
//   logical k {2t, 2t+1 | 2t+8, 2t+9} of the first m16n8k16 and 8t + {4,5 | 6,7} those of the
//   second, the same for both operands, so each product still pairs W(r, k) with X(s, k).
//   W is read once (past L1, one group of 4 k steps ahead of the products). X: the CTA's K
//   slice of it (8 NT rows, zeros past S and K) is copied into shared memory once (cp.async,
//   while the first W loads fly) where it fits in 96 KiB, else every warp reads it from L1/L2
//   in the loop (call B's ncu of that form: 65-83% of issue cycles stalled on those loads).
//   Epilogue: each CTA writes its 128 x 8NT partial sums to shared memory; after a cluster
//   barrier CTA q sums rows q c .. (q + 1) c - 1 (c = ceil(128 / KS)) over the KS CTAs' shared memory
//   (distributed shared memory, fixed order: deterministic) and writes them to C.
// The bytes: M = 8, N = 4096, K = 4096 reads B's 32 MiB once (~7 us at 4.8 TB/s).
#include "gemm/gemm_skinny16.hpp"

#include <cstddef>
#include <cstdint>

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "arch/cluster_launch.hpp"
#include "arch/env_switch.hpp"
#include "arch/global_load.cuh"
#include "arch/numeric.cuh"
#include "arch/sm80_cp_async.cuh"
#include "arch/sm80_mma.cuh"
#include "arch/smem.cuh"  // smem_u32
#include "gemm/common.cuh"

namespace kernels::gemm {
namespace {

namespace cg = cooperative_groups;

constexpr int kWarps = kSkinnyRowsPerBlock / 16;  // 8: one m16 tile of W rows a warp
constexpr int kThreads = 32 * kWarps;
constexpr int kRowsPerBlock = kSkinnyRowsPerBlock;
constexpr int kStepK = kSkinnyStepK;

// The big operand's 16-byte pieces: read once, past L1 (L1 keeps the small operand's lines where
// it is read from global memory).
__device__ __forceinline__ uint4 load_w(const void* p, bool in) {
  return in ? arch::ldg_stream_no_l1(p) : make_uint4(0u, 0u, 0u, 0u);
}
__device__ __forceinline__ uint4 load_x(const void* p, bool in) {
  return in ? __ldg(static_cast<const uint4*>(p)) : make_uint4(0u, 0u, 0u, 0u);
}

// k steps a group: W loads run one group ahead. Groups of 8 k steps were measured slower at every
// shape (call D of 2026-11-29: 16.4 -> 26.6 us at M = 2, N = 4096; 46.0 -> 53.3 us at M = 8,
// N = 14336).
constexpr int kStepsInFlight = 4;

// (W rows, X rows) = (R, S); each split sums steps [split * steps_per_split, ...) of K / 32.
// kMinBlocks: 0 (no minimum of CTAs an SM named to ptxas) or 3. Naming a minimum, even 1, changes
// ptxas's register allocation (H200 build, nvcc 13.0, bf16, X in shared memory): with none 74
// registers at 8 and 16 rows, 80 at 32, 136 at 64; with a minimum of 1, 106, 112, 135, 164; with
// 3, 80 (8 bytes spilled at 8 rows). At 8 rows 3 is the default, as measured in call C of
// 2026-11-29 with 3 K slices (8 x 14336 x 4096: 40.3 us; 14336 x 8: 38.7) against session 24's
// default, no minimum in 4 slices (45.5-46.0 us; 42.3, earlier calls). Not yet compared: no
// minimum in 3 slices (HARNESS_SKINNY_3CTAS=0). Above 8 rows: none.
template <typename T, int NT, bool kXShared, int kMinBlocks>
__global__ void __launch_bounds__(kThreads, kMinBlocks) skinny16_kernel(int R, int S, int K, int steps_per_split,
                                                            int x_row_bytes, float alpha,
                                                            const T* __restrict__ W, const T* __restrict__ X,
                                                            float beta, T* __restrict__ C, std::size_t c_stride_w,
                                                            std::size_t c_stride_x) {
  constexpr int kCols = 8 * NT;      // X rows, padded
  constexpr int kLd = kCols + 4;     // partial tile row stride in floats (+4: fewer bank conflicts)
  // Dynamic shared memory: kXShared: first the CTA's X slice (kCols rows of steps_per_split * 32
  // elements, row stride skinny_x_row_bytes: + 64 bytes so that the two rows of a quarter warp's
  // 16-byte reads fall in different banks); then (reused) the (128, 8 NT) partial sums.
  extern __shared__ __align__(16) unsigned char smem[];
  float* part = reinterpret_cast<float*>(smem);

  cg::cluster_group cluster = cg::this_cluster();
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane / 4, t = lane % 4;
  const int split = static_cast<int>(cluster.block_rank());
  const int splits = static_cast<int>(cluster.num_blocks());
  const int block_row0 = static_cast<int>(blockIdx.y) * kRowsPerBlock;
  const int row_lo = block_row0 + 16 * warp + g, row_hi = row_lo + 8;

  const int steps = (K + kStepK - 1) / kStepK;
  const int s_begin = split * steps_per_split, s_end = min(steps, s_begin + steps_per_split);
  const bool lo_in = row_lo < R, hi_in = row_hi < R;
  const T* w_lo = W + static_cast<std::size_t>(lo_in ? row_lo : 0) * K + 8 * t;
  const T* w_hi = W + static_cast<std::size_t>(hi_in ? row_hi : 0) * K + 8 * t;
  const T* x_row = X + static_cast<std::size_t>(g < S ? g : 0) * K + 8 * t;  // n-tile j: + 8 j K

  // W loads run one group of kStepsInFlight steps ahead of the products: the next group's loads
  // are issued before this group's mma.sync, so about 2 x kStepsInFlight x 32 bytes a lane are in
  // flight (the stream that sets the speed).
  const auto load_group = [&](int s0, uint4 (&lo)[kStepsInFlight], uint4 (&hi)[kStepsInFlight]) {
#pragma unroll
    for (int u = 0; u < kStepsInFlight; ++u) {
      const int k = (s0 + u) * kStepK;
      const bool in = s0 + u < s_end && k + 8 * t < K;  // K % 8 == 0: a lane's 8 elements are all in or all out
      lo[u] = load_w(w_lo + k, in && lo_in);
      hi[u] = load_w(w_hi + k, in && hi_in);
    }
  };
  float acc[NT][4] = {};
  uint4 a_lo[kStepsInFlight], a_hi[kStepsInFlight];
  load_group(s_begin, a_lo, a_hi);
  // kXShared: the X slice into shared memory (zeros past S and K), while the first W loads fly.
  const std::uint32_t xs = arch::smem_u32(smem);
  if constexpr (kXShared) {
    const int chunks_per_row = steps_per_split * kStepK / 8;
    for (int c = static_cast<int>(threadIdx.x); c < kCols * chunks_per_row; c += kThreads) {
      const int row = c / chunks_per_row, chunk = c % chunks_per_row;
      const int k = s_begin * kStepK + 8 * chunk;
      const bool in = row < S && k < K;
      arch::cp_async16(xs + static_cast<std::uint32_t>(row * x_row_bytes + 16 * chunk),
                       in ? X + static_cast<std::size_t>(row) * K + k : X, in);
    }
    arch::cp_async_commit();
    arch::cp_async_wait<0>();
    __syncthreads();
  }
  for (int s = s_begin; s < s_end; s += kStepsInFlight) {
    uint4 next_lo[kStepsInFlight], next_hi[kStepsInFlight];
    load_group(s + kStepsInFlight, next_lo, next_hi);  // all zero (no loads) past s_end
#pragma unroll
    for (int u = 0; u < kStepsInFlight; ++u) {
      // Past the slice's last step the W pieces are zeros: X reads zeros too (no read past the
      // shared X slice, whose neighbours, NaN included, would meet those zeros: 0 x NaN = NaN).
      const bool live = s + u < s_end;
      const int k = (s + u) * kStepK;
      const bool in = live && k + 8 * t < K;
      const std::uint32_t first[4] = {a_lo[u].x, a_hi[u].x, a_lo[u].y, a_hi[u].y};
      const std::uint32_t second[4] = {a_lo[u].z, a_hi[u].z, a_lo[u].w, a_hi[u].w};
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        uint4 b;
        if constexpr (kXShared) {
          b = live ? *reinterpret_cast<const uint4*>(smem + (8 * j + g) * x_row_bytes +
                                                     2 * ((s + u - s_begin) * kStepK + 8 * t))
                   : make_uint4(0u, 0u, 0u, 0u);
        } else {
          b = load_x(x_row + static_cast<std::size_t>(8 * j) * K + k, in && 8 * j + g < S);
        }
        arch::mma_m16n8k16<T>(acc[j], first, b.x, b.y);
        arch::mma_m16n8k16<T>(acc[j], second, b.z, b.w);
      }
    }
#pragma unroll
    for (int u = 0; u < kStepsInFlight; ++u) {
      a_lo[u] = next_lo[u];
      a_hi[u] = next_hi[u];
    }
  }

  if constexpr (kXShared) __syncthreads();  // every warp done with X: its memory takes the partial sums
  // C fragment: c0, c1 (W row g, X rows 2t, 2t + 1 of n-tile j), c2, c3 (W row g + 8).
#pragma unroll
  for (int j = 0; j < NT; ++j) {
    float* lo = part + (16 * warp + g) * kLd + 8 * j + 2 * t;
    float* hi = lo + 8 * kLd;
    lo[0] = acc[j][0];
    lo[1] = acc[j][1];
    hi[0] = acc[j][2];
    hi[1] = acc[j][3];
  }
  cluster.sync();  // every CTA's partials written and visible cluster-wide

  // CTA `split` sums its share of the block's rows over the cluster and writes them. Where C's
  // W-row stride is 1 (M small), consecutive threads take consecutive W rows: coalesced stores.
  // ceil(128 / KS) rows a CTA (the last CTAs fewer, or none, where KS does not divide 128).
  const int share = (kRowsPerBlock + splits - 1) / splits, row0 = split * share;
  const int rows = max(0, min(share, kRowsPerBlock - row0));
  const bool w_fastest = c_stride_w == 1;
  for (int e = static_cast<int>(threadIdx.x); e < rows * kCols; e += kThreads) {
    const int rr = row0 + (w_fastest ? e % rows : e / kCols);
    const int col = w_fastest ? e / rows : e % kCols;
    const int r = block_row0 + rr;
    if (r >= R || col >= S) continue;
    float v = 0.f;
    for (int q = 0; q < splits; ++q) v += cluster.map_shared_rank(part, q)[rr * kLd + col];
    T* out = C + static_cast<std::size_t>(r) * c_stride_w + static_cast<std::size_t>(col) * c_stride_x;
    float y = alpha * v;
    if (beta != 0.f) y = fmaf(beta, arch::to_float(*out), y);
    *out = arch::from_float<T>(y);
  }
  cluster.sync();  // no CTA leaves while another still reads its shared memory
}


struct Roles {
  int R, S;
  const void *W, *X;
  std::size_t stride_w, stride_x;
};

// M <= N: W = B (N rows), X = A; C(m, n) = out(n, m). Else W = A, X = B.
Roles roles(int M, int N, const void* A, const void* B) {
  if (M <= N) return {N, M, B, A, 1, static_cast<std::size_t>(N)};
  return {M, N, A, B, static_cast<std::size_t>(N), 1};
}

template <typename T, int NT, bool kXShared, int kMinBlocks>
cudaError_t launch_nt(const Roles& r, int K, int splits, float alpha, float beta, void* C, cudaStream_t stream) {
  const int steps = (K + kStepK - 1) / kStepK;
  const int per_split = (steps + splits - 1) / splits;
  const std::size_t smem = skinny16_smem_bytes(8 * NT, per_split, kXShared);
  auto* kernel = skinny16_kernel<T, NT, kXShared, kMinBlocks>;
  static const cudaError_t opt_in = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                         static_cast<int>(kSkinnyMaxSmemBytes));
  if (opt_in != cudaSuccess) return opt_in;
  arch::ClusterLaunch l(splits, kThreads, smem, stream);
  l.cfg.gridDim = dim3(static_cast<unsigned>(splits), static_cast<unsigned>((r.R + kRowsPerBlock - 1) / kRowsPerBlock));
  return cudaLaunchKernelEx(&l.cfg, kernel, r.R, r.S, K, per_split, skinny_x_row_bytes(per_split), alpha, static_cast<const T*>(r.W),
                            static_cast<const T*>(r.X), beta, static_cast<T*>(C), r.stride_w, r.stride_x);
}

template <typename T, bool kXShared, int kMinBlocks>
cudaError_t launch_x(const Roles& r, int K, int splits, float alpha, float beta, void* C, cudaStream_t stream) {
  switch (skinny_padded_small(r.S)) {
    case 8: return launch_nt<T, 1, kXShared, kMinBlocks>(r, K, splits, alpha, beta, C, stream);
    case 16: return launch_nt<T, 2, kXShared, kMinBlocks>(r, K, splits, alpha, beta, C, stream);
    case 32: return launch_nt<T, 4, kXShared, kMinBlocks>(r, K, splits, alpha, beta, C, stream);
    default: return launch_nt<T, 8, kXShared, kMinBlocks>(r, K, splits, alpha, beta, C, stream);
  }
}

// Experiment switches, read once a process: HARNESS_SKINNY_X=global reads X from global memory
// in the loop even where its slice fits in shared memory; HARNESS_SKINNY_SPLITS=1..8 forces
// the K slices (the cluster size).
int forced_splits() {
  static const int n = [] {
    const int x = arch::env_int("HARNESS_SKINNY_SPLITS");
    return x >= 1 && x <= kSkinnyMaxSplits ? x : 0;
  }();
  return n;
}
bool x_from_global() {
  static const bool on = arch::env_is("HARNESS_SKINNY_X", "global");
  return on;
}

// A minimum of 3 CTAs an SM where skinny_three_ctas (8 rows), or HARNESS_SKINNY_3CTAS=1|0 for every
// call (an experiment switch: the next A/B is the 74-register kernel in 3 K slices at 8 rows).
bool three_ctas(int padded_small) {
  static const int forced = arch::env_int("HARNESS_SKINNY_3CTAS", -1);
  return forced >= 0 ? forced == 1 : skinny_three_ctas(padded_small);
}

template <typename T, bool kXShared>
cudaError_t launch_blocks(const Roles& r, int K, int splits, float alpha, float beta, void* C, cudaStream_t stream) {
  if (three_ctas(skinny_padded_small(r.S)))
    return launch_x<T, kXShared, kSkinnyCtasPerSmAt8Rows>(r, K, splits, alpha, beta, C, stream);
  return launch_x<T, kXShared, 0>(r, K, splits, alpha, beta, C, stream);
}

template <typename T>
cudaError_t launch_typed(const Roles& r, int K, int splits, float alpha, float beta, void* C, cudaStream_t stream) {
  const bool shared = !x_from_global() && gemm_skinny16_x_in_smem(skinny_padded_small(r.S), K, splits);
  return shared ? launch_blocks<T, true>(r, K, splits, alpha, beta, C, stream)
                : launch_blocks<T, false>(r, K, splits, alpha, beta, C, stream);
}

}  // namespace

cudaError_t gemm_skinny16(TcDType dtype, Layout layout, int M, int N, int K, float alpha, const void* A,
                          const void* B, float beta, void* C, cudaStream_t stream) {
  if ((dtype != TcDType::bf16 && dtype != TcDType::f16) || M < 1 || N < 1 || K < 1 || A == nullptr ||
      B == nullptr || C == nullptr || !aligned16(A) || !aligned16(B))
    return cudaErrorInvalidValue;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return cudaErrorNoDevice;
  if (gemm_skinny16_unsupported(device, layout, M, N, K) != nullptr) return cudaErrorInvalidValue;
  int sms = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) return cudaErrorNoDevice;
  const Roles r = roles(M, N, A, B);
  const int splits = forced_splits() > 0 ? forced_splits() : gemm_skinny16_splits(M, N, K, sms);
  return dtype == TcDType::bf16 ? launch_typed<__nv_bfloat16>(r, K, splits, alpha, beta, C, stream)
                                : launch_typed<__half>(r, K, splits, alpha, beta, C, stream);
}

}  // namespace kernels::gemm
