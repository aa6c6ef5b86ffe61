#pragma once
// dtype fp8_e4m3 of the `attention` problem (issue 30 item 3, FlashAttention-3's FP8 forward):
// its inputs, tolerance and the Hopper variant's pieces. Forward only (attention_backward
// rejects the dtype).
//
//   Q, K, V: FP8 E4M3 bytes (harness u8 operands) q_x with per-tensor f32 scales s_x, the
//   values being s_x q_x; O bf16, LSE f32:  O = softmax(scale s_q s_k Q_q K_q^T) s_v V_q.
//
// Inputs: fresh N(0, 1) values every seed, each (tensor, head) its own generator stream as
// the other dtypes' (stream << 32 | head), stored as q = e4m3(x / s) (round to nearest even,
// saturated to +-448) with s_q = 1/40, s_k = 1/56, s_v = 1/72: three different
// non-power-of-two scales, so a kernel that drops s_v or the product s_q s_k fails (a
// factor >= 40); N(0, 1) values span most of E4M3's range (448 s = 11, 8, 6.2 sigma).
// The references read s_x q_x (exact in float and double) and compute in double.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attention/attention.hpp"
#include "harness/operands.hpp"
#include "harness/params.hpp"
#include "harness/variant.hpp"

namespace plugins::attention {

inline constexpr const char* kFp8DType = "fp8_e4m3";
inline constexpr kernels::attention::Fp8Scales kFp8Scales{1.0f / 40.0f, 1.0f / 56.0f, 1.0f / 72.0f};
inline constexpr const char* kFp8Config = "fp8_e4m3 scale_q=1/40 scale_k=1/56 scale_v=1/72";

inline bool is_fp8(const harness::Params& p) { return p.get_string("dtype") == kFp8DType; }

// The result's config: kFp8Config for dtype fp8_e4m3, else nothing.
std::string fp8_config(const harness::Params& p);

// The quantizing fill of one (B, heads, N, d) input: N(0, 1) per head from stream
// (stream << 32 | head) (as Fill::block does for the other dtypes), stored as e4m3(x / scale).
harness::Fill fp8_fill(float scale, std::uint64_t stream, std::size_t head_elements);

// The values s * q of `count` E4M3 bytes (the references' inputs).
std::vector<float> fp8_dequantized(const void* bytes, std::size_t count, float scale);

// Tolerances of the fp8 forward (kFp8ToleranceRule says why): O, with a statistical rel L2
// bound beside the worst-case element bound; LSE, tight.
harness::Tolerance fp8_o_tolerance();
harness::Tolerance fp8_lse_tolerance(const kernels::attention::Shape& s);

inline constexpr const char* kFp8ToleranceRule =
    "fp8_e4m3 (forward only; the reference is double on the dequantized inputs s q): "
    "O: |got - ref| <= 0.375 + 2^-7 |ref| and ||got - ref|| / ||ref|| <= 0.07; LSE: |got - ref| <= "
    "2e-3 max(1, |scale| sqrt(d)). The kernel rounds P (in [0, 1]) to E4M3 for P V: 2^-4 relative "
    "for P >= 2^-6, 2^-10 absolute below; an element of O then errs by at most 2^-4 sum_j p_j |v_j| / l "
    "<= 2^-4 max |v| (~6 for N(0,1) V: 0.375), which is the element bound (it catches garbage, "
    "never-written and NaN, not subtle errors). The roundings have random signs, so O's error is "
    "~0.03 of O in L2 (uniform relative error of rms 2^-4 / sqrt 3 ~ 0.036 at most, less for the "
    "exact P = 1 of each row's maximum); rel L2 0.07 is twice that, while a dropped key tile, a "
    "missing scale or a wrong key order moves O by far more. Scores are exact products of E4M3 "
    "values summed on the tensor cores (FP8 wgmma keeps about 14 bits in its sums: 6e-5 of |S|), "
    "and l is an f32 sum of the unrounded P, so LSE errs by ~1e-4; 2e-3 catches a dropped key "
    "tile (>= 128 / N of l) and a causal off-by-one at N <= 500. O and the reference are also "
    "rounded to bf16 (2^-9 relative each, inside the element bound's 2^-7)";

// flash_wgmma / flash at fp8: the Hopper FP8 kernel (head_dim 128, sm_90), for the shape
// the problem read from the parameters.
std::optional<std::string> fp8_kernel_constraint(const kernels::attention::Shape& s, const char* variant);
std::size_t fp8_workspace(const kernels::attention::Shape& s);
void launch_fp8_forward(harness::LaunchContext& ctx, const kernels::attention::Shape& s);

}  // namespace plugins::attention
