#pragma once
// The register layouts of the FP8 Hopper forward (flash_hopper_forward.cu) as functions that
// the kernel and a host test (tests/attention_fp8_test.cpp) share.
//
// A thread (lane = 4 g + t of its warp) holds, of a wgmma m64nN f32 accumulator tile, the
// elements j = 0 .. N/2 - 1 at row g + 8 ((j / 2) % 2) (of its warp's 16), column
// 8 (j / 4) + 2 t + j % 2. The 8-bit A operand of wgmma m64nNk32 from registers (PTX ISA,
// the k32 A fragment of 8-bit types, as mma.m16n8k32's) is 4 registers of 4 bytes: register q,
// byte i holds row g + 8 (q % 2), k = 16 (q / 2) + 4 t + i.
//
// S = Q K^T gives P in the accumulator layout, and the fragment wants each thread's bytes at
// k = 4t .. 4t + 3 of each 16-k group, where the thread holds columns 2t, 2t + 1, 8 + 2t,
// 9 + 2t. Rather than moving values between lanes, the k index is relabelled: register
// r + 2h, byte i of slice kk takes accumulator p_accumulator(kk, h, r, i), and V^T stores at
// position 32 kk + 16 h + (4 t + i) the key of that accumulator's column (vt_key_of): the
// sum over k of P[m][key(k)] V[key(k)][n] is P V.
#include <cuda_runtime_api.h>

namespace kernels::attention::fp8 {

// The accumulator (of the (64, 128) S tile) in register r + 2h, byte i, of P's k32 slice kk.
__host__ __device__ constexpr int p_accumulator(int kk, int h, int r, int i) {
  return 16 * kk + 8 * h + 2 * r + (i < 2 ? i : i + 2);
}

// The key held at position pos of a row of V^T: inside each group of 16, position 4t + i
// holds key 2t + i (i < 2) or 8 + 2t + i - 2 (i >= 2).
__host__ __device__ constexpr int vt_key_of(int pos) {
  return (pos & ~15) + ((pos & 15) % 4 < 2 ? 2 * ((pos & 15) / 4) + (pos & 15) % 4
                                           : 8 + 2 * ((pos & 15) / 4) + (pos & 15) % 4 - 2);
}

}  // namespace kernels::attention::fp8
