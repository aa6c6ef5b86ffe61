#pragma once
// Tensor-core helpers of the bf16/f16 flash kernels: the swizzled shared-memory tiles and
// their cp.async loads. The instructions come from kernels/arch: ldsm_x4 / ldsm_x4_t
// (sm80_ldmatrix.cuh), mma_m16n8k16<T> (sm80_mma.cuh), pack2 / unpack2 (numeric.cuh) and
// the quad reductions over the 4 lanes that share an accumulator row (warp_reduce.cuh).
//
// mma.sync m16n8k16 (A 16x16 row-major, B 16x8 "col", C/D 16x8 f32), lane = 4*g + t:
//   A regs a0: (row g,   cols 2t, 2t+1)   a1: (row g+8, cols 2t, 2t+1)
//          a2: (row g,   cols 2t+8, +9)    a3: (row g+8, cols 2t+8, +9)
//   B regs b0: (k 2t, 2t+1; col g)        b1: (k 2t+8, 2t+9; col g)
//   C      c0, c1: (row g, cols 2t, 2t+1)  c2, c3: (row g+8, cols 2t, 2t+1)
// Two adjacent 16x8 C tiles (cols n..n+15) hold exactly the A fragment of a 16x16 tile
// whose columns are those 16: that is how P (and dS) go from an accumulator to the A
// operand of the next product without leaving registers.
//
// Shared-memory tiles of 16-bit elements are (rows, D) row-major with the 16-byte chunks
// of each row XOR-swizzled: chunk c of row r is stored at chunk c ^ (r & 7). An ldmatrix
// reads 8 rows at one logical chunk, which then land in 8 different 16-byte bank groups
// (no conflicts), and a cp.async of one 16-byte chunk stays contiguous.
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "arch/numeric.cuh"
#include "arch/sm80_cp_async.cuh"
#include "arch/sm80_ldmatrix.cuh"
#include "arch/sm80_mma.cuh"
#include "arch/warp_reduce.cuh"
#include "attention_common.cuh"

namespace kernels::attention::tc {

// Element offset of (row, col) in a swizzled (rows, kD) tile; kD a multiple of 64.
template <int kD>
__device__ __forceinline__ int swz(int row, int col) {
  return row * kD + ((((col >> 3) ^ row) & 7) | ((col >> 3) & ~7)) * 8 + (col & 7);
}

// swz<kD>(row, 16 c + 8 hi) == swz_step(swz<kD>(row, 8 hi), c), hi in {0, 1}: the chunk
// 2c + hi has hi in bit 0, so its low 3 bits are (2c & 7) ^ hi and the XOR with row & 7
// can be applied to the lane's base as a constant; row * kD (a multiple of 64) leaves
// those bits zero, and adding a multiple of 8 rows keeps them. A loop over c then needs
// one per-lane base register instead of one address per c.
__device__ __forceinline__ int swz_step(int base, int c) { return (base ^ ((2 * c & 7) << 3)) + (c >> 2) * 64; }

// Rows [row0, row0 + kRows) of a (n, kD) row-major 16-bit matrix into a swizzled tile,
// 16-byte cp.async chunks; rows >= n are zero-filled. All kThreads threads take part.
template <int kRows, int kD, int kThreads, class T>
__device__ __forceinline__ void load_tile(T* dst, const T* __restrict__ src, int row0, int n,
                                          int tid) {
  constexpr int kChunksPerRow = kD / 8;
  constexpr int kChunks = kRows * kChunksPerRow;
  static_assert(kChunks % kThreads == 0, "tile must split evenly over the block");
#pragma unroll
  for (int it = 0; it < kChunks / kThreads; ++it) {
    const int c = tid + it * kThreads;
    const int r = c / kChunksPerRow;
    const int col = (c % kChunksPerRow) * 8;
    const bool valid = row0 + r < n;
    const T* g = valid ? src + static_cast<std::int64_t>(row0 + r) * kD + col : src;
    arch::cp_async16(dst + swz<kD>(r, col), g, valid);
  }
}

}  // namespace kernels::attention::tc
