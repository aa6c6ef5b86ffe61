#pragma once
// dtype fp8_e4m3 of the gemm problem (issue 32 item 3): its semantics, inputs and variants.
//
//   C (M, N) bf16 = scale_a * scale_b * op(A_q) op(B_q)   (nt: A_q (M, K) B_q (N, K)^T)
//
// Every layout is defined (the cpu reference takes them all), but the GPU paths read fp8
// operands K-major only: wgmma and cuBLASLt run layout nt and skip the others, saying so.
//
// A_q, B_q: FP8 E4M3 bytes (stored as harness u8 operands), per-tensor f32 scales, FP32
// accumulation, bf16 output; alpha = 1 and beta = 0 only (the problem rejects other values:
// a scaled GEMM has its scales instead of alpha, and a bf16 C it does not read).
//
// Inputs: fresh random values every seed, never zero: x ~ U[-1, 1) (the harness's generator),
// stored as A_q = e4m3(x / scale_a) with scale_a = 1/448 (E4M3's largest finite value is 448,
// so the stored values span the whole fp8 range) and B_q = e4m3(x / scale_b), scale_b = 1/384
// (a different, also non-power-of-two scale: a variant that drops or swaps a scale fails).
// A value that rounds to zero is stored as the smallest subnormal (2^-9) of its sign.
// Dequantized, scale * A_q lies in [-1, 1]: the f32 tolerance analysis holds
// (gemm_tolerance.hpp; the reference is double on the dequantized inputs).
// The scales are recorded in each fp8 result's config ("scale_a=1/448 scale_b=1/384").
//
// Variants: wgmma (Hopper, gemm_wgmma_fp8_e4m3; nt, K % 16 == 0), cublas (cuBLASLt FP8,
// compute capability >= 8.9; nt, K % 16 == 0, N % 8 == 0), cpu (gemm_cpu_fp8_e4m3, every
// layout); mma and the FP32 kernels skip.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <cublas_api.h>

#include "harness/operands.hpp"
#include "harness/params.hpp"
#include "harness/variant.hpp"

namespace plugins::gemm {

inline constexpr float kFp8ScaleA = 1.0f / 448.0f;
inline constexpr float kFp8ScaleB = 1.0f / 384.0f;
inline constexpr const char* kFp8Config = "fp8_e4m3 scale_a=1/448 scale_b=1/384";

// The result's config of a variant at these parameters: kFp8Config for dtype fp8_e4m3 (the
// scales, recorded in every fp8 result), else nothing.
std::string fp8_config(const harness::Params& p);

// The quantizing fill of A (scale kFp8ScaleA) or B (kFp8ScaleB): generator stream `stream`.
harness::Fill fp8_fill(float scale, std::uint64_t stream);

// alpha != 1 or beta != 0 with dtype fp8_e4m3: the reason (the problem's reject).
std::optional<std::string> fp8_rejects(const harness::Params& p);

// Skip reasons of the fp8 variants (host rules first, then the device's compute capability).
std::optional<std::string> fp8_wgmma_constraint(const harness::Params& p);
std::optional<std::string> fp8_cublas_constraint(const harness::Params& p);

std::size_t fp8_wgmma_workspace(const harness::Params& p);

void launch_wgmma_fp8(harness::LaunchContext& ctx);
// cuBLASLt with a handle of its own and the scales in a device buffer, both made at the first
// call (on the run's device, as the cuBLAS handle) and kept for the process. The caller
// checks the status (gemm_problem.cpp's GEMM_CUBLAS).
cublasStatus_t launch_cublas_fp8(harness::LaunchContext& ctx, void* workspace, std::size_t workspace_bytes);
void launch_cpu_fp8(harness::LaunchContext& ctx);

}  // namespace plugins::gemm
