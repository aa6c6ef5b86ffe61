// Tensor-core GEMM on warp-level mma.sync: C = alpha * op(A) op(B) + beta * C (see
// gemm_mma.hpp for the contract, gemm_types.hpp for layouts and dtypes).
//
// Tiles. A block of 256 threads (8 warps) computes a (128, 128) tile of C; its warps form
// a 2 (M) x 4 (N) grid of (64, 32) warp tiles, each 4 x 4 mma tiles of (16, 8), i.e. 64
// FP32 accumulators per thread. The K depth of a block tile is 64 bytes of input: BK = 32
// bf16/f16 elements (two m16n8k16 steps) or 16 floats for tf32 (two m16n8k8 steps).
// Why: (64, 32) warp tiles read 4 A + 2 B ldmatrix.x4 per 16 mma (a good ratio of shared
// memory traffic to tensor work), 128x128 block tiles reuse each loaded byte 128 times,
// and at 64 KB of shared memory and <= 128 registers two blocks fit on an SM (bf16/f16;
// tf32 runs one block per SM, see the launch bounds).
//
// Data path. global --cp.async (16 B, L2 only: .cg)--> shared memory, 4 stages in a ring
// (up to 3 tiles in flight while the tensor cores work on the fourth) --ldmatrix--> registers
// --mma.sync--> FP32 accumulators --> predicated epilogue (alpha, beta, rounding to the
// output type) --> global.
// Shared tiles keep the operand's global orientation, so every 16-byte chunk is copied as
// is: a "K-contiguous" operand (A 'n', B 't') is stored as 128 rows (M or N) of 4 chunks
// along K and read with ldmatrix; an "MN-contiguous" operand (A 't', B 'n') as BK rows (K)
// of 128 elements along M or N and read with ldmatrix.trans, which transposes each 8x8
// block of 16-bit elements on the way -- so all four layouts run the same data path.
// ldmatrix.trans has no 32-bit form: tf32 MN-contiguous fragments are read with 32-bit
// shared loads (same swizzle, also conflict-free).
//
// Swizzle. A chunk (row r, logical index c) lives at physical chunk c ^ s(r):
//   4 chunks per row (64 B, two rows per 128-byte bank line): s(r) = (r >> 1) & 3;
//   >= 8 chunks per row: s(r) = ((r & 3) << 1) | ((r >> 2) & 1) on the low 3 bits.
// Each is a permutation within a row, so cp.async writes of whole rows stay
// conflict-free; the 8 rows one ldmatrix phase reads (8 consecutive r, same c) land in 8
// different 16-byte bank groups; and the tf32 scalar reads (4 consecutive rows k, 8
// consecutive elements = 2 chunks) land in 8 different bank groups too (the (r & 3) << 1
// term separates the rows, the chunk's low bit the two chunks).
//
// Edges. Chunks outside the matrix are zero-filled (cp.async src-size 0), so partial
// tiles in M, N and K add zeros; the epilogue writes only elements inside (M, N). The
// fast path needs 16-byte rows (leading dimension a multiple of 8 halves / 4 floats);
// otherwise kAligned = false loads each element with a bounds check and stores the chunk
// to shared memory with one 16-byte store (same pipeline, synchronous loads).
// Block order: tiles are numbered in groups of 8 tile rows (M) so that consecutive blocks
// share panels of A and B in L2.
#include <cstdint>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "gemm/gemm_mma.hpp"

namespace kernels::gemm {
namespace {

constexpr int kThreads = 256;
constexpr int kTile = 128;         // BM = BN
constexpr int kRowBytes = 64;      // BK in bytes
constexpr int kStages = 4;
constexpr int kOperandTileBytes = kTile * kRowBytes;  // 8 KB
constexpr int kStageBytes = 2 * kOperandTileBytes;
static_assert(kStages * kStageBytes == kMmaSharedBytes);
constexpr int kGroupRows = 8;      // block raster: groups of 8 tile rows

__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// Physical byte offset of chunk `c` of row `r` in a tile with `R` chunks per row.
template <int R>
__device__ __forceinline__ int swz(int r, int c) {
  if constexpr (R == 4) {
    return (r * R + (c ^ ((r >> 1) & 3))) * 16;
  } else {
    static_assert(R % 8 == 0);
    return (r * R + (c ^ (((r & 3) << 1) | ((r >> 2) & 1)))) * 16;
  }
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

__device__ __forceinline__ void cp_async16(std::uint32_t dst, const void* src, bool valid) {
  // src-size 0 writes 16 zero bytes and reads nothing (src must still be a valid address).
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

template <bool kTrans>
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t addr) {
  if constexpr (kTrans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

__device__ __forceinline__ std::uint32_t to_tf32(std::uint32_t bits) {
  std::uint32_t out;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(out) : "f"(__uint_as_float(bits)));
  return out;
}

// d += a * b for one (16, 8) tile. T picks the instruction: m16n8k16 bf16/f16, m16n8k8 tf32.
template <class T>
__device__ __forceinline__ void mma(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  else if constexpr (std::is_same_v<T, __half>)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  else
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// One operand's (128 x BK) tile of a stage. kKContig: stored (MN, K) -> 128 rows of 4
// chunks; else stored (K, MN) -> BK rows of 128 / E chunks. `G` is the stored matrix
// (rows, cols) row-major; mn0, k0 the tile origin.
template <class T, bool kKContig, bool kAligned>
struct TileLoader {
  static constexpr int E = 16 / static_cast<int>(sizeof(T));  // elements per chunk
  static constexpr int BK = kRowBytes / static_cast<int>(sizeof(T));
  static constexpr int R = kKContig ? kRowBytes / 16 : kTile / E;  // chunks per smem row
  static constexpr int kChunks = kOperandTileBytes / 16;           // 512
  static_assert(kChunks % kThreads == 0);

  __device__ __forceinline__ static void load(unsigned char* tile, const T* __restrict__ G, int rows, int cols,
                                              int mn0, int k0, int tid) {
#pragma unroll
    for (int i = 0; i < kChunks / kThreads; ++i) {
      const int ci = tid + i * kThreads;
      const int r = ci / R, c = ci % R;
      const int grow = kKContig ? mn0 + r : k0 + r;
      const int gcol = kKContig ? k0 + c * E : mn0 + c * E;
      unsigned char* dst = tile + swz<R>(r, c);
      if constexpr (kAligned) {
        // cols % E == 0 here, so a chunk that starts inside the row ends inside it.
        const bool valid = grow < rows && gcol < cols;
        const T* src = valid ? G + static_cast<std::size_t>(grow) * cols + gcol : G;
        cp_async16(smem_u32(dst), src, valid);
      } else {
        alignas(16) T v[E];
        const T* src = G + static_cast<std::size_t>(grow < rows ? grow : 0) * cols;
#pragma unroll
        for (int e = 0; e < E; ++e)
          v[e] = (grow < rows && gcol + e < cols) ? src[gcol + e] : Elem<T>::from_float(0.0f);
        *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(v);
      }
    }
  }
};

template <class T, bool kAT, bool kBT, bool kAligned>
// Two blocks per SM for bf16/f16 (<= 128 registers: no spills on the fast path); tf32's
// extra cvt.rna and scalar fragment loads spill at 128, so it takes one block with more.
__global__ void __launch_bounds__(kThreads, sizeof(T) == 4 ? 1 : 2)
    gemm_mma_kernel(int M, int N, int K, float alpha, const T* __restrict__ A, const T* __restrict__ B, float beta,
                    T* __restrict__ C) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  constexpr bool kAK = !kAT;  // A K-contiguous: stored (M, K)
  constexpr bool kBK = kBT;   // B K-contiguous: stored (N, K)
  using LA = TileLoader<T, kAK, kAligned>;
  using LB = TileLoader<T, kBK, kAligned>;
  constexpr int E = LA::E;
  constexpr int BK = LA::BK;
  constexpr int kMmaK = 2 * E;         // 16 (bf16/f16) or 8 (tf32)
  constexpr bool kTf32 = sizeof(T) == 4;

  extern __shared__ __align__(128) unsigned char smem[];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int wm = warp % 2, wn = warp / 2;  // (64, 32) warp tile at (wm * 64, wn * 32)
  const int g = lane / 4, t = lane % 4;    // mma fragment coordinates
  const int q = lane / 8, r8 = lane % 8;   // ldmatrix: which 8x8 matrix this lane addresses, which row

  // Grouped raster over the (tiles_m, tiles_n) grid of C tiles.
  const int tiles_m = (M + kTile - 1) / kTile, tiles_n = (N + kTile - 1) / kTile;
  const int per_group = kGroupRows * tiles_n;
  const int group = blockIdx.x / per_group, first_m = group * kGroupRows;
  const int group_rows = min(tiles_m - first_m, kGroupRows);
  const int in_group = blockIdx.x % per_group;
  const int m0 = (first_m + in_group % group_rows) * kTile;
  const int n0 = (in_group / group_rows) * kTile;

  // Stored shapes (rows, cols): A (M, K) or (K, M); B (K, N) or (N, K).
  const int a_rows = kAT ? K : M, a_cols = kAT ? M : K;
  const int b_rows = kBT ? N : K, b_cols = kBT ? K : N;

  float acc[4][4][4] = {};
  const int ktiles = (K + BK - 1) / BK;
  auto load_stage = [&](int stage, int kt) {
    unsigned char* base = smem + stage * kStageBytes;
    LA::load(base, A, a_rows, a_cols, m0, kt * BK, tid);
    LB::load(base + kOperandTileBytes, B, b_rows, b_cols, n0, kt * BK, tid);
  };

#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < ktiles) load_stage(s, s);
    cp_async_commit();
  }

  for (int kt = 0; kt < ktiles; ++kt) {
    cp_async_wait<kStages - 2>();  // tile kt has landed (for this thread's copies) ...
    __syncthreads();               // ... for every thread's, and stage (kt - 1) % S is free
    if (kt + kStages - 1 < ktiles) load_stage((kt + kStages - 1) % kStages, kt + kStages - 1);
    cp_async_commit();

    const unsigned char* a_tile = smem + (kt % kStages) * kStageBytes;
    const unsigned char* b_tile = a_tile + kOperandTileBytes;
#pragma unroll
    for (int ks = 0; ks < BK / kMmaK; ++ks) {
      const int kk = ks * kMmaK;
      std::uint32_t af[4][4], bf[4][2];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int mrow = wm * 64 + i * 16;
        if constexpr (kAK) {
          // matrix q: rows mrow + (q & 1) * 8, k chunk (kk / E) + (q >> 1) -> a0..a3.
          ldmatrix_x4<false>(af[i], smem_u32(a_tile + swz<LA::R>(mrow + (q & 1) * 8 + r8, kk / E + (q >> 1))));
        } else if constexpr (!kTf32) {
          // Stored (K, M): matrix q covers k rows kk + (q >> 1) * 8 .., m chunk (mrow + (q & 1) * 8) / 8;
          // .trans hands lane (g, t) the elements (m = g, k = 2t, 2t + 1).
          ldmatrix_x4<true>(af[i], smem_u32(a_tile + swz<LA::R>(kk + (q >> 1) * 8 + r8, (mrow + (q & 1) * 8) / E)));
        } else {
          // tf32, stored (K, M): a0 (m g, k t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4).
#pragma unroll
          for (int v = 0; v < 4; ++v) {
            const int m = mrow + g + (v & 1) * 8, k = kk + t + (v >> 1) * 4;
            af[i][v] = *reinterpret_cast<const std::uint32_t*>(a_tile + swz<LA::R>(k, m / E) + (m % E) * 4);
          }
        }
        if constexpr (kTf32) {
#pragma unroll
          for (int v = 0; v < 4; ++v) af[i][v] = to_tf32(af[i][v]);
        }
      }
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const int ncol = wn * 32 + j * 16;  // two n8 tiles: 2j and 2j + 1
        std::uint32_t x[4];
        if constexpr (kBK) {
          // Stored (N, K): matrix q: rows ncol + (q >> 1) * 8, k chunk kk / E + (q & 1).
          ldmatrix_x4<false>(x, smem_u32(b_tile + swz<LB::R>(ncol + (q >> 1) * 8 + r8, kk / E + (q & 1))));
        } else if constexpr (!kTf32) {
          // Stored (K, N): matrix q: k rows kk + (q & 1) * 8 .., n chunk (ncol + (q >> 1) * 8) / 8.
          ldmatrix_x4<true>(x, smem_u32(b_tile + swz<LB::R>(kk + (q & 1) * 8 + r8, (ncol + (q >> 1) * 8) / E)));
        } else {
          // tf32, stored (K, N): b0 (k t, n g), b1 (k t + 4, n g), for n tiles at ncol, ncol + 8.
#pragma unroll
          for (int v = 0; v < 4; ++v) {
            const int n = ncol + g + (v >> 1) * 8, k = kk + t + (v & 1) * 4;
            x[v] = *reinterpret_cast<const std::uint32_t*>(b_tile + swz<LB::R>(k, n / E) + (n % E) * 4);
          }
        }
#pragma unroll
        for (int v = 0; v < 4; ++v) {
          const std::uint32_t b = kTf32 ? to_tf32(x[v]) : x[v];
          bf[2 * j + v / 2][v % 2] = b;
        }
      }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) mma<T>(acc[i][j], af[i], bf[j][0], bf[j][1]);
    }
  }
  cp_async_wait<0>();  // no copy may outlive the block (only empty groups remain)

  // Epilogue: acc[i][j] = C rows (g, g + 8) x cols (2t, 2t + 1) of mma tile (i, j).
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int v = 0; v < 4; ++v) {
        const int row = m0 + wm * 64 + i * 16 + g + (v / 2) * 8;
        const int col = n0 + wn * 32 + j * 8 + 2 * t + (v % 2);
        if (row < M && col < N) {
          T* p = C + static_cast<std::size_t>(row) * N + col;
          const float out = beta == 0.0f ? alpha * acc[i][j][v] : fmaf(beta, Elem<T>::to_float(*p), alpha * acc[i][j][v]);
          *p = Elem<T>::from_float(out);
        }
      }
#else
  __trap();  // the host launcher refuses devices below sm_80
#endif
}

template <class T, bool kAT, bool kBT, bool kAligned>
cudaError_t launch(int M, int N, int K, float alpha, const void* A, const void* B, float beta, void* C,
                   cudaStream_t stream) {
  auto kernel = gemm_mma_kernel<T, kAT, kBT, kAligned>;
  if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kMmaSharedBytes);
      e != cudaSuccess)
    return e;
  const long long tiles = static_cast<long long>((M + kTile - 1) / kTile) * ((N + kTile - 1) / kTile);
  if (tiles > 0x7fffffffLL) return cudaErrorInvalidConfiguration;
  kernel<<<static_cast<unsigned>(tiles), kThreads, kMmaSharedBytes, stream>>>(
      M, N, K, alpha, static_cast<const T*>(A), static_cast<const T*>(B), beta, static_cast<T*>(C));
  return cudaGetLastError();
}

template <class T, bool kAT, bool kBT>
cudaError_t launch_aligned(bool fast, int M, int N, int K, float alpha, const void* A, const void* B, float beta,
                           void* C, cudaStream_t stream) {
  return fast ? launch<T, kAT, kBT, true>(M, N, K, alpha, A, B, beta, C, stream)
              : launch<T, kAT, kBT, false>(M, N, K, alpha, A, B, beta, C, stream);
}

template <class T>
cudaError_t launch_layout(Layout layout, bool fast, int M, int N, int K, float alpha, const void* A, const void* B,
                          float beta, void* C, cudaStream_t stream) {
  switch (layout) {
    case Layout::nn: return launch_aligned<T, false, false>(fast, M, N, K, alpha, A, B, beta, C, stream);
    case Layout::nt: return launch_aligned<T, false, true>(fast, M, N, K, alpha, A, B, beta, C, stream);
    case Layout::tn: return launch_aligned<T, true, false>(fast, M, N, K, alpha, A, B, beta, C, stream);
    case Layout::tt: return launch_aligned<T, true, true>(fast, M, N, K, alpha, A, B, beta, C, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

bool gemm_mma_fast_path(TcDType dtype, Layout layout, int M, int N, int K, const void* A, const void* B) {
  const int e = 16 / element_bytes(dtype);
  const int lda = a_transposed(layout) ? M : K;
  const int ldb = b_transposed(layout) ? K : N;
  return lda % e == 0 && ldb % e == 0 && reinterpret_cast<std::uintptr_t>(A) % 16 == 0 &&
         reinterpret_cast<std::uintptr_t>(B) % 16 == 0;
}

cudaError_t gemm_mma(TcDType dtype, Layout layout, int M, int N, int K, float alpha, const void* A, const void* B,
                     float beta, void* C, cudaStream_t stream) {
  if (M < 1 || N < 1 || K < 1 || A == nullptr || B == nullptr || C == nullptr || dtype == TcDType::f32)
    return cudaErrorInvalidValue;
  int device = 0, major = 0, minor = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  if (cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device); e != cudaSuccess)
    return e;
  if (cudaError_t e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device); e != cudaSuccess)
    return e;
  if (major * 10 + minor < kMmaMinComputeCapability) return cudaErrorNotSupported;
  const bool fast = gemm_mma_fast_path(dtype, layout, M, N, K, A, B);
  switch (dtype) {
    case TcDType::tf32: return launch_layout<float>(layout, fast, M, N, K, alpha, A, B, beta, C, stream);
    case TcDType::bf16: return launch_layout<__nv_bfloat16>(layout, fast, M, N, K, alpha, A, B, beta, C, stream);
    case TcDType::f16: return launch_layout<__half>(layout, fast, M, N, K, alpha, A, B, beta, C, stream);
    case TcDType::f32: break;
  }
  return cudaErrorInvalidValue;
}

}  // namespace kernels::gemm
