// dtype fp8_e4m3 of the `attention` problem without a GPU (issue 30 item 3): the parameter,
// the operands (E4M3 bytes of three different scales, bf16 O, per-output tolerances), the
// work, the backward's refusal, every variant's skip reason, the config, the cpu reference
// on the dequantized inputs, and the tolerance rule itself: a host emulation of the Hopper
// FP8 kernel's arithmetic (128-key tiles, online softmax, P rounded to E4M3, l from the
// unrounded P) passes it at odd sizes, and the same emulation with one planted error
// (a key tile dropped, V's key order not undone, s_v dropped) fails it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <gtest/gtest.h>

#include "attention/attention.hpp"
#include "attention/fp8_fragments.hpp"
#include "attention_fp8.hpp"
#include "attention_rules.hpp"
#include "attention_test_support.hpp"
#include "family_support.hpp"
#include "harness/check.hpp"
#include "harness/registry.hpp"

namespace {

namespace attn = kernels::attention;
namespace rules = plugins::attention;
using attn::Shape;

harness::Params params(int b, int h, int hkv, int n, int d, bool causal, const char* dtype = "fp8_e4m3") {
  return harness::test::attention_params(b, h, hkv, n, d, causal, dtype);
}

// Shape's fields in order: batch, heads, kv_heads, seq_len, head_dim, scale (0: 1/sqrt(d)), causal.
Shape shape(int b, int h, int hkv, int n, int d, bool causal) { return Shape{b, h, hkv, n, d, 0.0f, causal}; }

std::optional<std::string> constraint(const char* problem, const char* variant, const harness::Params& p) {
  const harness::Variant* v = harness::Registry::instance().find_variant(problem, variant);
  EXPECT_NE(v, nullptr) << variant;
  if (v == nullptr || !v->constraint) return std::nullopt;
  return v->constraint(p);
}

float e4m3_value(std::uint8_t byte) {
  __nv_fp8_e4m3 v;
  v.__x = byte;
  return static_cast<float>(v);
}
float round_e4m3(float x) {
  return e4m3_value(static_cast<std::uint8_t>(__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3)));
}

TEST(AttentionFp8, OperandsWorkAndTolerances) {
  const harness::Problem& problem = harness::test::problem_named("attention");
  const auto p = params(2, 4, 2, 33, 128, false);
  EXPECT_FALSE(problem.reject(p).has_value());
  const auto ops = problem.operands(p);
  ASSERT_EQ(ops.size(), 5u);  // Q, K, V, O, LSE
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(ops[i].dtype, harness::DType::u8) << ops[i].name;
    EXPECT_EQ(ops[i].fill.kind, harness::Fill::Kind::custom) << ops[i].name;
  }
  EXPECT_EQ(ops[3].name, "O");
  EXPECT_EQ(ops[3].dtype, harness::DType::bf16);
  EXPECT_EQ(ops[4].dtype, harness::DType::f32);
  ASSERT_TRUE(ops[3].tolerance && ops[4].tolerance);
  EXPECT_DOUBLE_EQ(ops[3].tolerance->rel_l2, 0.07);
  EXPECT_DOUBLE_EQ(ops[4].tolerance->abs, 2e-3);
  EXPECT_DOUBLE_EQ(ops[4].tolerance->rel_l2, 0.0);
  // Bytes: Q, K, V at 1 byte, O at 2, LSE at 4.
  const double q = 2.0 * 4 * 33 * 128, kv = 2.0 * 2 * 33 * 128, rows = 2.0 * 4 * 33;
  EXPECT_DOUBLE_EQ(problem.work(p).bytes, q + 2 * kv + 2 * q + 4 * rows);
  EXPECT_DOUBLE_EQ(problem.work(p).flops, 4.0 * 2 * 4 * 33.0 * 33 * 128);
  EXPECT_NE(problem.tolerance_rule().find("fp8_e4m3"), std::string::npos);
}

TEST(AttentionFp8, InputsAreE4m3OfTheirScalesFreshAndPerHead) {
  const auto ops = harness::test::problem_named("attention").operands(params(1, 2, 2, 512, 128, false));
  const float scales[] = {rules::kFp8Scales.q, rules::kFp8Scales.k, rules::kFp8Scales.v};
  for (int t = 0; t < 3; ++t) {
    std::vector<std::uint8_t> bytes(ops[t].count()), again(ops[t].count());
    ops[t].fill.custom(std::as_writable_bytes(std::span<std::uint8_t>(bytes)), 7);
    ops[t].fill.custom(std::as_writable_bytes(std::span<std::uint8_t>(again)), 8);
    EXPECT_NE(bytes, again) << ops[t].name << ": a new seed gives new values";
    // Dequantized they are N(0, 1): mean ~0, variance ~1 (131072 values).
    double sum = 0, sum2 = 0;
    const auto x = rules::fp8_dequantized(bytes.data(), bytes.size(), scales[t]);
    for (float v : x) sum += v, sum2 += double(v) * v;
    const double count = static_cast<double>(x.size());
    const double mean = sum / count, var = sum2 / count - mean * mean;
    EXPECT_NEAR(mean, 0.0, 0.02) << ops[t].name;
    EXPECT_NEAR(var, 1.0, 0.05) << ops[t].name;
    // The two heads are different streams.
    EXPECT_NE(std::vector<std::uint8_t>(bytes.begin(), bytes.begin() + 64),
              std::vector<std::uint8_t>(bytes.begin() + 512 * 128, bytes.begin() + 512 * 128 + 64));
  }
}

TEST(AttentionFp8, BackwardRefusesAndVariantsWithoutFp8SaySo) {
  const auto& reg = harness::Registry::instance();
  const harness::Params b = harness::test::attention_params(1, 2, 2, 16, 128, false, "fp8_e4m3", "attention_backward");
  const auto why = reg.find_problem("attention_backward")->reject(b);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("fp8_e4m3 is forward only"), std::string::npos) << *why;

  const auto p = params(1, 2, 2, 16, 128, false);
  EXPECT_EQ(*constraint("attention", "naive", p), "naive: dtype f32 only, not fp8_e4m3");
  EXPECT_NE(constraint("attention", "flash_fa2", p)->find("bf16/f16 only"), std::string::npos);
  EXPECT_NE(constraint("attention", "flash_3xtf32", p)->find("dtype f32 only"), std::string::npos);
  for (const char* v : {"flash_tc_r64", "flash_tc_r128", "flash_tc_w8", "flash_tc_deep"})
    EXPECT_NE(constraint("attention", v, p)->find("not fp8_e4m3"), std::string::npos) << v;
  EXPECT_FALSE(constraint("attention", "cpu", p).has_value());
  // The Hopper kernel: head_dim 128 only (the shape rule comes before the device's).
  for (const char* v : {"flash", "flash_wgmma"}) {
    const auto d64 = constraint("attention", v, params(1, 2, 2, 16, 64, false));
    ASSERT_TRUE(d64.has_value()) << v;
    EXPECT_NE(d64->find("(fp8_e4m3): the FP8 Hopper flash forward has a kernel for head_dim 128 only"),
              std::string::npos)
        << *d64;
  }
  // Config and workspace (V^T: B Hkv d N16 bytes).
  const harness::Variant* flash = reg.find_variant("attention", "flash_wgmma");
  ASSERT_TRUE(flash->config);
  EXPECT_EQ(flash->config(p), rules::kFp8Config);
  // bf16: not the scales but the 16-bit Hopper kernel (AttentionPlugin.HopperForwardConfigNamesTheKernel).
  const std::string bf16_config = flash->config(params(1, 2, 2, 16, 128, false, "bf16"));
  EXPECT_EQ(bf16_config.find("fp8"), std::string::npos) << bf16_config;
  EXPECT_NE(bf16_config.find("tiles"), std::string::npos) << bf16_config;
  EXPECT_EQ(flash->workspace_bytes(params(2, 4, 2, 33, 128, false)), std::size_t{2} * 2 * 128 * 48);
  EXPECT_EQ(flash->workspace_bytes(params(2, 4, 2, 33, 128, false, "bf16")), 0u);
}

// The cpu variant at fp8: the double reference on s * q, O rounded to bf16.
TEST(AttentionFp8, CpuReferenceRunsOnTheDequantizedInputs) {
  const harness::Problem& problem = harness::test::problem_named("attention");
  const auto p = params(1, 2, 1, 19, 128, true);
  auto inst = problem.make_instance(p, 42);
  inst->prepare(harness::Backend::cpu);
  const harness::Variant* cpu = harness::Registry::instance().find_variant("attention", "cpu");
  const auto outs = harness::test::run_once(*cpu, *inst, p);
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_EQ(outs[0].dtype, harness::DType::bf16);
  const harness::Operands* io = inst->operands(harness::Backend::cpu);
  auto dequantized = [&](const char* name, float scale) {
    const auto& e = io->at(name);
    return rules::fp8_dequantized(e.data, e.spec->count(), scale);
  };
  const auto q = dequantized("Q", rules::kFp8Scales.q), k = dequantized("K", rules::kFp8Scales.k),
             v = dequantized("V", rules::kFp8Scales.v);
  const Shape s = shape(1, 2, 1, 19, 128, true);
  std::vector<float> o(s.q_elements()), lse(s.lse_elements());
  attn::forward_cpu(s, q.data(), k.data(), v.data(), o.data(), lse.data(), 1);
  for (std::size_t i = 0; i < o.size(); ++i)
    ASSERT_EQ(outs[0].value(i), static_cast<double>(__bfloat162float(__float2bfloat16_rn(o[i])))) << i;
  for (std::size_t i = 0; i < lse.size(); ++i) ASSERT_EQ(outs[1].value(i), lse[i]) << i;
}

// The fp8 P V product's register-level data path, on the host (fp8_fragments.hpp): for every
// lane, k32 slice, register and byte, the A element that the 8-bit fragment layout puts at
// (row, k) is the accumulator the kernel packs there, of the same row, whose column (key) is
// the key V^T holds at position k. Every (row, key) of a warp's 16 x 128 tile is used once,
// and the product built from the fragments and V^T is P V exactly (small integers).
TEST(AttentionFp8, PFragmentsAndTheVTransposeOrderMakeTheProduct) {
  namespace f8 = kernels::attention::fp8;
  constexpr int kKeys = 128, kCols = 8;
  std::vector<int> used(16 * kKeys, 0);
  std::vector<int> P(16 * kKeys), V(kKeys * kCols), A(16 * kKeys, 0);
  for (int i = 0; i < 16 * kKeys; ++i) P[i] = (i * 7 + 3) % 11 - 5;
  for (int i = 0; i < kKeys * kCols; ++i) V[i] = (i * 5 + 1) % 9 - 4;
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    for (int kk = 0; kk < kKeys / 32; ++kk)
      for (int q = 0; q < 4; ++q)
        for (int i = 0; i < 4; ++i) {
          const int row_a = g + 8 * (q % 2), k = 32 * kk + 16 * (q / 2) + 4 * t + i;  // the fragment's element
          const int j = f8::p_accumulator(kk, q / 2, q % 2, i);                        // what the kernel packs there
          const int row_c = g + 8 * ((j / 2) % 2), key = 8 * (j / 4) + 2 * t + j % 2;  // that accumulator's place
          ASSERT_EQ(row_c, row_a) << "lane " << lane << " kk " << kk << " q " << q << " i " << i;
          ASSERT_EQ(key, f8::vt_key_of(k)) << "lane " << lane << " kk " << kk << " q " << q << " i " << i;
          ++used[row_c * kKeys + key];
          A[row_a * kKeys + k] = P[row_c * kKeys + key];
        }
  }
  for (int i = 0; i < 16 * kKeys; ++i) ASSERT_EQ(used[i], 1) << "row " << i / kKeys << " key " << i % kKeys;
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < kCols; ++n) {
      long got = 0, want = 0;
      for (int k = 0; k < kKeys; ++k) {
        got += long{A[m * kKeys + k]} * V[f8::vt_key_of(k) * kCols + n];  // V^T[n][k] = V[key(k)][n]
        want += long{P[m * kKeys + k]} * V[k * kCols + n];
      }
      ASSERT_EQ(got, want) << m << " " << n;
    }
}

// ---- the tolerance rule against an emulation of the kernel's arithmetic ----

enum class Planted { none, drop_last_key_tile, keys_in_v_transpose_order, drop_v_scale };

// The Hopper FP8 forward's arithmetic on the host (flash_hopper_forward.cu): per (b, h, row),
// key tiles of 128 in order; raw scores are float sums of exact E4M3 products; c = scale
// log2(e) s_q s_k; the running max m of c S; P = exp2(c S - m) rounded to E4M3 for P V; l
// the f32 sum of the unrounded P; O = s_v (sum P V_q) / l rounded to bf16; LSE = ln 2 (m +
// log2 l).
void emulate(const Shape& s, const std::vector<std::uint8_t>& q, const std::vector<std::uint8_t>& k,
             const std::vector<std::uint8_t>& v, Planted planted, std::vector<float>& o, std::vector<float>& lse) {
  const int N = s.seq_len, d = s.head_dim, group = s.heads / s.kv_heads;
  const float c = s.effective_scale() * 1.4426950408889634f * rules::kFp8Scales.q * rules::kFp8Scales.k;
  const float sv = planted == Planted::drop_v_scale ? 1.0f : rules::kFp8Scales.v;
  o.assign(s.q_elements(), 0.0f);
  lse.assign(s.lse_elements(), 0.0f);
  for (int bh = 0; bh < s.batch * s.heads; ++bh) {
    const int bkv = (bh / s.heads) * s.kv_heads + (bh % s.heads) / group;
    for (int i = 0; i < N; ++i) {
      const int key_end = s.causal ? i + 1 : N;
      int tiles = (key_end + 127) / 128;
      if (planted == Planted::drop_last_key_tile && tiles > 1) --tiles;
      float m = -INFINITY, l = 0.0f;
      std::vector<float> acc(d, 0.0f);
      for (int t = 0; t < tiles; ++t) {
        const int j0 = 128 * t, j1 = std::min(j0 + 128, key_end);
        std::vector<float> sc(j1 - j0);
        float mx = m;
        for (int j = j0; j < j1; ++j) {
          float dot = 0.0f;
          for (int x = 0; x < d; ++x)
            dot += e4m3_value(q[(std::size_t(bh) * N + i) * d + x]) * e4m3_value(k[(std::size_t(bkv) * N + j) * d + x]);
          sc[j - j0] = dot;
          mx = std::max(mx, dot * c);
        }
        const float alpha = std::exp2(m - mx);
        m = mx;
        l *= alpha;
        for (float& a : acc) a *= alpha;
        for (int j = j0; j < j1; ++j) {
          const float p = std::exp2(sc[j - j0] * c - m);
          l += p;
          // keys_in_v_transpose_order: V read in V^T's stored order without the inverse map
          // (key 16 g + x taken as key 16 g + perm(x)).
          int jv = j;
          if (planted == Planted::keys_in_v_transpose_order)
            jv = std::min(N - 1, kernels::attention::fp8::vt_key_of(j));
          const float pq = round_e4m3(p);
          for (int x = 0; x < d; ++x) acc[x] += pq * e4m3_value(v[(std::size_t(bkv) * N + jv) * d + x]);
        }
      }
      for (int x = 0; x < d; ++x)
        o[(std::size_t(bh) * N + i) * d + x] = __bfloat162float(__float2bfloat16_rn(acc[x] * sv / l));
      lse[std::size_t(bh) * N + i] = (m + std::log2(l)) * 0.6931471805599453f;
    }
  }
}

// Checks the emulation (with `planted`) against the cpu variant with the operands' own
// tolerances, as the runner does; o_rel_l2: O's own ||got - ref|| / ||ref||.
harness::CheckResult check_emulation(int b, int h, int hkv, int n, bool causal, Planted planted,
                                     double* o_rel_l2 = nullptr) {
  const harness::Problem& problem = harness::test::problem_named("attention");
  const auto p = params(b, h, hkv, n, 128, causal);
  auto inst = problem.make_instance(p, 2026);
  inst->prepare(harness::Backend::cpu);
  const auto want = harness::test::run_once(*harness::Registry::instance().find_variant("attention", "cpu"), *inst, p);
  const harness::Operands* io = inst->operands(harness::Backend::cpu);
  auto bytes = [&](const char* name) {
    const auto& e = io->at(name);
    const auto* first = static_cast<const std::uint8_t*>(e.data);
    return std::vector<std::uint8_t>(first, first + e.spec->count());
  };
  std::vector<float> o, lse;
  emulate(shape(b, h, hkv, n, 128, causal), bytes("Q"), bytes("K"), bytes("V"), planted, o, lse);
  std::vector<harness::Output> got = want;  // names, dtypes and tolerances of the operands
  for (std::size_t i = 0; i < o.size(); ++i) {
    const __nv_bfloat16 x = __float2bfloat16_rn(o[i]);
    std::memcpy(got[0].data.data() + 2 * i, &x, 2);
  }
  std::memcpy(got[1].data.data(), lse.data(), 4 * lse.size());
  if (o_rel_l2) *o_rel_l2 = harness::compare_outputs({got[0]}, {want[0]}, {}).rel_l2_error;
  return harness::compare_outputs(got, want, problem.tolerance(p));
}

TEST(AttentionFp8, ToleranceHoldsForTheKernelsArithmeticAtOddSizes) {
  struct Case {
    int b, h, hkv, n;
    bool causal;
  };
  for (const Case& c : {Case{1, 2, 2, 1, false}, Case{1, 2, 1, 13, true}, Case{2, 2, 1, 200, false},
                        Case{1, 4, 2, 300, true}, Case{1, 1, 1, 1000, false}}) {
    double o_l2 = 0;
    const auto r = check_emulation(c.b, c.h, c.hkv, c.n, c.causal, Planted::none, &o_l2);
    EXPECT_TRUE(r.passed) << "N=" << c.n << (c.causal ? " causal" : "") << ": " << r.summary();
    std::printf("  emulated fp8 kernel, N=%d%s: O rel L2 err %.3g; %s\n", c.n, c.causal ? " causal" : "", o_l2,
                r.summary().c_str());
  }
}

TEST(AttentionFp8, ToleranceCatchesPlantedErrors) {
  // A dropped last key tile (keys 256..299 of 300: O moves by ~15% of its norm, LSE by
  // ln(300 / 256)).
  auto r = check_emulation(1, 2, 2, 300, false, Planted::drop_last_key_tile);
  EXPECT_FALSE(r.passed) << r.summary();
  // V in V^T's stored key order (the permutation not undone).
  r = check_emulation(1, 2, 2, 200, false, Planted::keys_in_v_transpose_order);
  EXPECT_FALSE(r.passed) << r.summary();
  EXPECT_EQ(r.l2_failures, 1u) << r.summary();
  // s_v left out: O 72x too large.
  r = check_emulation(1, 2, 2, 64, false, Planted::drop_v_scale);
  EXPECT_FALSE(r.passed) << r.summary();
}

}  // namespace
