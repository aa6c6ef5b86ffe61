#pragma once
// Skinny GEMM in 16 bits (bf16, f16 in and out, f32 sums) on mma.sync tensor-core products:
// layout nt with one small output side,
//   C (M, N) = alpha * A (M, K) * B^T + beta * C,  A stored (M, K), B stored (N, K),
// min(M, N) <= kSkinnyMaxSmall. These are the decode-like shapes (a few tokens against a
// weight): memory bound on the big operand, where a 128 x 128 wgmma tile computes 96-120
// rows of padding at M = 8-32. The big operand is streamed once from global memory straight
// into mma fragments (no shared-memory staging); the small one is read per warp from L1/L2;
// K is split over the CTAs of a thread-block cluster whose partial sums meet in distributed
// shared memory (gemm_skinny16.cu). Hopper (sm_90) only: the clusters.
#include <cstddef>
#include <string>

#include <cuda_runtime_api.h>

#include "gemm/gemm_types.hpp"

namespace kernels::gemm {

// The small side's limit: its rows are the n = 8 columns of m16n8k16, up to 8 of them.
constexpr int kSkinnyMaxSmall = 64;
// A CTA's block of big-operand rows (8 warps of 16), a k step (32 elements: 16 bytes a lane),
// the most K slices (clusters of up to 8 CTAs: the portable limit), the most row blocks (gridDim.y).
constexpr int kSkinnyRowsPerBlock = 128;
constexpr int kSkinnyStepK = 32;
constexpr int kSkinnyStepBytes = 2 * kSkinnyStepK;
constexpr int kSkinnyMaxSplits = 8;
constexpr int kSkinnyMaxRowBlocks = 65535;
// Shared memory: the CTA's slice of the small operand where it fits in kSkinnyMaxXSmemBytes (so
// that two CTAs share an SM), else read from global memory in the loop; the partial sums reuse it.
constexpr std::size_t kSkinnyMaxXSmemBytes = 96 * 1024;
constexpr std::size_t kSkinnyMaxSmemBytes = 112 * 1024;

// The small side padded to the kernel's n tiles: 8, 16, 32 or 64 rows.
constexpr int skinny_padded_small(int small) { return small <= 8 ? 8 : small <= 16 ? 16 : small <= 32 ? 32 : 64; }
// At a small side of 8 rows the kernel is compiled for 3 CTAs an SM (__launch_bounds__; 80
// registers, gemm_skinny16.cu; above, no minimum), and the K slices keep every CTA resident at
// once, one wave (gemm_skinny16_splits). Measured on an H200, 2026-11-29 (session 25): 8 x 14336
// x 4096 in 3 slices 40.3 us, in 4 (448 CTAs on 396 places) 46.9 us, same kernel, same call.
constexpr int kSkinnyCtasPerSmAt8Rows = 3;
constexpr bool skinny_three_ctas(int padded_small) { return padded_small <= 8; }
// Bytes of one X row's slice in shared memory: steps * 32 elements of 2 bytes, + 64 (bank offset).
constexpr int skinny_x_row_bytes(int steps_per_split) { return steps_per_split * kSkinnyStepBytes + 64; }

// nullptr when gemm_skinny16 takes (layout, M, N, K) on `device`, else the reason (a static
// string): layout nt, min(M, N) <= kSkinnyMaxSmall, K % 8 == 0 (16-byte rows), the big side
// under 2^23 rows, a device of compute capability 9.0. device < 0: the shape rule only
// (host arithmetic, no device query).
const char* gemm_skinny16_unsupported(int device, Layout layout, int M, int N, int K);

// How the call splits on `sms` SMs: the K slices (the cluster size, 1 to 8) and a line
// for the result's config ("skinny: 32 blocks of 128 rows x 8 K slices in clusters of 8, ...").
int gemm_skinny16_splits(int M, int N, int K, int sms);
std::string gemm_skinny16_plan(int M, int N, int K, int sms);
// Whether the X slice of a K slice (padded_small rows) fits in shared memory, and the dynamic
// shared memory a CTA takes (the X slice where x_shared, and the partial sums: the larger).
bool gemm_skinny16_x_in_smem(int padded_small, int K, int splits);
std::size_t skinny16_smem_bytes(int padded_small, int steps_per_split, bool x_shared);

// Where `auto` runs this kernel rather than wgmma's 128 x 128 tiles (measured on an H200,
// 2026-11-29, docs/PERFORMANCE.md): M the small side up to 8 rows (16 while N <= 8192; at
// 16 x 14336 wgmma was 5% faster), N the small side up to 32.
bool gemm_skinny16_preferred(int M, int N);

// dtype bf16 or f16; A, B, C of that type, A and B 16-byte aligned; beta == 0 does not read C.
// cudaErrorInvalidValue: another dtype, a dimension < 1, a null or misaligned pointer, or a
// case gemm_skinny16_unsupported refuses. Asynchronous on `stream`.
cudaError_t gemm_skinny16(TcDType dtype, Layout layout, int M, int N, int K, float alpha, const void* A,
                          const void* B, float beta, void* C, cudaStream_t stream);

}  // namespace kernels::gemm
