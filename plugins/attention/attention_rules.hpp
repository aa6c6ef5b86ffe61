#pragma once
// The attention problems' rules: work, memory, tolerances and when the check switches to
// sampled rows. In a header so that the tests hold kernels to exactly these bounds.
#include <algorithm>
#include <cmath>
#include <cstddef>

#include "attention/attention.hpp"
#include "harness/checked.hpp"
#include "harness/dtype.hpp"
#include "harness/problem.hpp"

namespace plugins::attention {

using kernels::attention::Shape;

// Query rows compared in sampled mode (forward: O and LSE; backward: dQ).
inline constexpr int kSampledRows = 256;

// Multiply-adds of one score pass, B*H*N^2*d (half of it when causal): the CPU
// reference does about 2x that forward, 4x backward, in double.
inline double score_macs(const Shape& s) {
  const double n = s.seq_len;
  return static_cast<double>(s.batch) * s.heads * n * n * s.head_dim * (s.causal ? 0.5 : 1.0);
}

// Above these the full host reference is off and sampled rows are checked instead:
// 2^31 (e.g. B=1, H=32, N=1024, d=64) is a few seconds forward on 2 cores; backward
// does twice the work per score, hence 2^30.
inline double cpu_limit(bool backward) { return backward ? 1073741824.0 : 2147483648.0; }
inline bool sampled(const Shape& s, bool backward) { return score_macs(s) > cpu_limit(backward); }

// FLOPs: forward 4*B*H*N^2*d (Q K^T and P V, 2 FLOPs per multiply-add; softmax not
// counted), half when causal; backward 2.5x the forward (the customary count: five
// N^2*d products - S, dP, dV, dK, dQ - against the forward's two).
// Bytes: every input read once and every output written once; the forward reads
// Q, K, V and writes O, LSE; the backward reads Q, K, V, O, dO, LSE and writes dQ, dK, dV.
// `elem` is the size of the tensors' dtype (4, or 2 for bf16/f16, 1 for fp8_e4m3); `out_elem`
// that of O when it differs (fp8_e4m3: a bf16 O); LSE is always f32.
inline harness::Work work(const Shape& s, bool backward, double elem = 4.0, double out_elem = 0.0) {
  const double fwd = 4.0 * score_macs(s);
  const double q = static_cast<double>(s.q_elements());
  const double kv = static_cast<double>(s.kv_elements());
  const double rows = static_cast<double>(s.lse_elements());
  if (out_elem <= 0.0) out_elem = elem;
  if (!backward) return {fwd, elem * (q + 2 * kv) + out_elem * q + 4.0 * rows};
  return {2.5 * fwd, elem * (3 * q + 2 * kv + q + 2 * kv) + 4.0 * rows};
}

// Device bytes of inputs and outputs (workspace is the variants' own, declared apart).
// Checked: InputError "size overflows 64-bit arithmetic: ..." rather than a wrapped count.
inline std::size_t device_bytes(const Shape& s, bool backward, std::size_t elem = sizeof(float)) {
  constexpr const char* what = "attention tensors (B*H*N*d elements of Q)";
  const std::size_t q = harness::size_product(what, s.batch, s.heads, s.seq_len, s.head_dim);
  const std::size_t kv = harness::size_product(what, s.batch, s.kv_heads, s.seq_len, s.head_dim);
  const std::size_t rows = harness::size_product(what, s.batch, s.heads, s.seq_len);
  const int copies = backward ? 4 : 2;  // Q, O (+ dO, dQ); K, V (+ dK, dV); LSE
  const std::size_t elements =
      harness::size_sum(what, harness::size_product(what, copies, q), harness::size_product(what, copies, kv));
  return harness::size_sum(what, harness::size_product(what, elem, elements),
                           harness::size_product(what, sizeof(float), rows));
}

// Scratch bytes of the naive variants: the (N, N) scores of every (b, h), B*H*N^2 floats
// forward, twice that plus D (B*H*N floats) backward. Checked like device_bytes.
inline std::size_t naive_workspace_bytes(const Shape& s, bool backward) {
  constexpr const char* what = "naive attention workspace (B*H*N^2 floats of scores)";
  const std::size_t scores = harness::size_product(what, s.batch, s.heads, s.seq_len, s.seq_len, sizeof(float));
  if (!backward) return scores;
  return harness::size_sum(what, harness::size_product(what, 2, scores),
                           harness::size_product(what, s.batch, s.heads, s.seq_len, sizeof(float)));
}

// The scale relative to the default: scores are s_eff times N(0, 1) for N(0, 1) inputs.
inline double relative_scale(const Shape& s) {
  return std::max(1.0, std::abs(static_cast<double>(s.effective_scale())) *
                           std::sqrt(static_cast<double>(s.head_dim)));
}

// f32 as derived in the rules below. bf16/f16 (u = 2^-8 / 2^-11): the reference is the
// double result on the same rounded inputs, itself rounded to the dtype.
inline harness::Tolerance tolerance(const Shape& s, bool backward, harness::DType dtype = harness::DType::f32) {
  const double r = relative_scale(s);
  if (dtype == harness::DType::bf16 || dtype == harness::DType::f16) {
    const double u = harness::unit_roundoff(dtype);
    if (!backward) return {4 * u * r, 2 * u};
    return {8 * u * r * r, 4 * u};
  }
  if (!backward) return {4e-5 * r, 1e-6};
  return {2e-4 * r * r, 1e-4};
}

inline constexpr const char* kForwardToleranceRule =
    "|got - ref| <= 4e-5 * max(1, |scale| sqrt(d)) + 1e-6 |ref| for O and LSE. With N(0,1) "
    "inputs a FP32 score has rounding error ~u*scale*d/sqrt(2) (u = 2^-24; 5 sigma ~2e-6 at "
    "the default scale), which is the relative error of each softmax weight (plus 2 ulp of "
    "exp2); O is a convex combination of V rows (|v| <~ 5), so its error is <~ 1e-5, and "
    "the FP32 sums over N add ~u relative to l. LSE errs by the score error plus u*|LSE|. "
    "The bound is 4x that, yet a dropped 32-key tile shifts LSE by >= 32/N (2.4e-4 at "
    "N = 131072) and a causal off-by-one moves early rows' O by O(1/i). "
    "bf16/f16 (u = 2^-8 / 2^-11): |got - ref| <= 4u max(1, |scale| sqrt(d)) + 2u |ref|. Scores "
    "and statistics are f32 from exactly representable products (small error); P is rounded "
    "to the dtype for P V (relative u per weight: O errs by <= u sum_j p_j |v_j| <~ u |v|max, "
    "typically far less), and both O and the reference are rounded to the dtype (u |ref| "
    "each). A dropped 64-key tile at N = 999 moves LSE by >= 0.06, above 4u = 0.016 (bf16)";

inline constexpr const char* kBackwardToleranceRule =
    "|got - ref| <= 2e-4 * max(1, |scale| sqrt(d))^2 + 1e-4 |ref| for dQ, dK, dV. dP = dO V^T "
    "has |dP| ~ sqrt(d) and FP32 error ~1.5e-5 (5 sigma, d = 64); dS = P (dP - D) then errs "
    "by ~P * 1e-4 (weights' relative error times |dP - D| <~ 40), and dQ, dK sum it against "
    "|q|, |k| <~ 5 times scale over rows whose weights total O(1) (dK: column sums of P, a "
    "few): <~ 1e-4; GQA and dQ use atomics, whose order changes only the last bits. "
    "bf16/f16 (u = 2^-8 / 2^-11): |got - ref| <= 8u max(1, |scale| sqrt(d))^2 + 4u |ref|. P and dS "
    "are rounded to the dtype as mma operands (relative u each), D = rowsum(dO * O) uses the "
    "forward's rounded O (error <= u sum_c |dO_c O_c|, a small part of |dP - D| ~ 10), and the "
    "outputs and the reference are rounded (u |ref| each); the sums over rows have random "
    "signs, so the error of dQ, dK is a few u times scale |k|, |q| sqrt(sum P^2) |dP - D|";

}  // namespace plugins::attention
