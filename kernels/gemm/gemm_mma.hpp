#pragma once
// Tensor-core GEMM with warp-level mma.sync (sm_80 and later: Ampere, Ada, Hopper):
//
//   C (M, N) = alpha * op(A) * op(B) + beta * C, layouts and dtypes of gemm_types.hpp,
//   C row-major (ld N), FP32 accumulation, C rounded to its dtype once.
//
// dtype tf32 (float storage: inputs rounded to TF32 with round-to-nearest, ties away --
// cvt.rna.tf32.f32 -- products exact, summed in FP32), bf16, f16. f32 has no mma path:
// cudaErrorInvalidValue (use tf32 for tensor cores); nor has fp8_e4m3 (wgmma, cuBLASLt).
//
// Any M, N, K >= 1. The fast path (16-byte cp.async) needs the leading dimension of the
// stored A and B to be a multiple of 16 bytes (8 bf16/f16 elements, 4 floats) and A, B
// 16-byte aligned (gemm_mma_fast_path); other shapes run the same kernel with scalar,
// bounds-checked global loads (correct, slower). C needs no alignment.
//
// Errors: cudaErrorInvalidValue for a dimension < 1, a null pointer or dtype f32 / fp8_e4m3;
// cudaErrorNotSupported on a device below compute capability 8.0 (nothing launched);
// otherwise the launch status. Asynchronous on `stream`; allocates nothing.
#include <cuda_runtime_api.h>

#include "gemm/gemm_types.hpp"

namespace kernels::gemm {

cudaError_t gemm_mma(TcDType dtype, Layout layout, int M, int N, int K, float alpha, const void* A,
                     const void* B, float beta, void* C, cudaStream_t stream);

// True when gemm_mma takes its cp.async path for these operands.
bool gemm_mma_fast_path(TcDType dtype, Layout layout, int M, int N, int K, const void* A, const void* B);

// The compute capability mma.sync with bf16/f16/tf32 needs (major * 10 + minor).
inline constexpr int kMmaMinComputeCapability = 80;

// Block tile configurations of the kernel (gemm_mma.cu gives their tiles and why):
//   large  (128, 256) tiles, 8 warps of (64, 64), 4 stages, 192 KB shared, 1 block per SM;
//   medium (128, 128) tiles, 4 warps of (64, 64), 3 stages,  96 KB shared, 2 blocks per SM;
//   small  ( 64,  64) tiles, 4 warps of (32, 32), 4 stages,  64 KB shared, 3 blocks per SM.
// automatic (what gemm_mma runs) takes the largest tile whose grid still fills every SM
// once (tiles >= SM count), else small -- so small M or N (a batch of 16..128 rows) gets
// many small blocks instead of a few large ones.
enum class MmaTile { automatic, large, medium, small };

// gemm_mma with a chosen tile configuration (tests run each on every layout and tail;
// tuning). Same contract and errors as gemm_mma. A tile the device's shared memory per
// block cannot hold runs the next smaller one; large in tf32 with an MN-contiguous operand
// (A 't' or B 'n') and large or medium on the scalar load path run medium (small stays small).
cudaError_t gemm_mma_tile(MmaTile tile, TcDType dtype, Layout layout, int M, int N, int K, float alpha,
                          const void* A, const void* B, float beta, void* C, cudaStream_t stream);

// The configuration MmaTile::automatic picks for an M x N output on a GPU with `sms` SMs.
MmaTile gemm_mma_pick_tile(int M, int N, int sms);

}  // namespace kernels::gemm
