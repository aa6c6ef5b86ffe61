// The attention CPU references (kernels/attention/cpu.cpp) against the formula written as
// plainly as possible, and the backward reference against central finite differences of
// that formula, in double. CPU only.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "attention/attention.hpp"
#include "attention_rules.hpp"
#include "harness/dtype.hpp"
#include "attention_test_support.hpp"
#include "harness/registry.hpp"

namespace {

using kernels::attention::Shape;

std::vector<float> normal(std::size_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

std::string describe(const Shape& s) {
  return "B=" + std::to_string(s.batch) + " H=" + std::to_string(s.heads) +
         " Hkv=" + std::to_string(s.kv_heads) + " N=" + std::to_string(s.seq_len) +
         " d=" + std::to_string(s.head_dim) + (s.causal ? " causal" : "") +
         " scale=" + std::to_string(s.scale);
}

// The definition, one (b, h) at a time: S = scale Q K^T (N x N) in full, -inf above the
// diagonal when causal, P = exp(S - max) / sum, O = P V, LSE = max + log(sum).
struct Direct {
  std::vector<double> o, lse;
};
Direct direct_forward(const Shape& s, const std::vector<double>& q, const std::vector<double>& k,
                      const std::vector<double>& v) {
  const int B = s.batch, H = s.heads, Hkv = s.kv_heads, N = s.seq_len, d = s.head_dim;
  const double scale = s.scale != 0.0f ? s.scale : 1.0 / std::sqrt(double(d));
  Direct out{std::vector<double>(q.size()), std::vector<double>(std::size_t(B) * H * N)};
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      const int hk = h / (H / Hkv);
      auto Q = [&](int i, int c) { return q[((std::size_t(b) * H + h) * N + i) * d + c]; };
      auto K = [&](int j, int c) { return k[((std::size_t(b) * Hkv + hk) * N + j) * d + c]; };
      auto V = [&](int j, int c) { return v[((std::size_t(b) * Hkv + hk) * N + j) * d + c]; };
      std::vector<double> S(std::size_t(N) * N);
      for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) {
          double dot = 0;
          for (int c = 0; c < d; ++c) dot += Q(i, c) * K(j, c);
          S[std::size_t(i) * N + j] =
              (s.causal && j > i) ? -std::numeric_limits<double>::infinity() : scale * dot;
        }
      for (int i = 0; i < N; ++i) {
        double mx = -std::numeric_limits<double>::infinity();
        for (int j = 0; j < N; ++j) mx = std::max(mx, S[std::size_t(i) * N + j]);
        double sum = 0;
        for (int j = 0; j < N; ++j) sum += std::exp(S[std::size_t(i) * N + j] - mx);
        const std::size_t row = (std::size_t(b) * H + h) * N + i;
        out.lse[row] = mx + std::log(sum);
        for (int c = 0; c < d; ++c) {
          double acc = 0;
          for (int j = 0; j < N; ++j) acc += std::exp(S[std::size_t(i) * N + j] - mx) / sum * V(j, c);
          out.o[row * d + c] = acc;
        }
      }
    }
  return out;
}

std::vector<double> widen(const std::vector<float>& x) { return {x.begin(), x.end()}; }

void expect_close(const std::vector<float>& got, const std::vector<double>& want, double tol,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double worst = 0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double err = std::abs(double(got[i]) - want[i]) / (1.0 + std::abs(want[i]));
    if (!(err <= worst)) worst = err, at = i;  // NaN counts as worst
  }
  EXPECT_LE(worst, tol) << what << ": worst at " << at << " got " << got[at] << " want " << want[at];
}

class AttentionCpuForward : public ::testing::TestWithParam<Shape> {};

TEST_P(AttentionCpuForward, MatchesTheDefinition) {
  const Shape s = GetParam();
  ASSERT_EQ(kernels::attention::shape_error(s), "");
  const auto q = normal(s.q_elements(), 1), k = normal(s.kv_elements(), 2),
             v = normal(s.kv_elements(), 3);
  std::vector<float> o(s.q_elements()), lse(s.lse_elements());
  kernels::attention::forward_cpu(s, q.data(), k.data(), v.data(), o.data(), lse.data(), 2);
  const Direct want = direct_forward(s, widen(q), widen(k), widen(v));
  // Both in double: they differ only by the final rounding to float.
  expect_close(o, want.o, 1e-6, "O " + describe(s));
  expect_close(lse, want.lse, 1e-6, "LSE " + describe(s));

  // The sampled form gives the same rows, bit for bit (same code, same order).
  std::vector<std::int64_t> rows;
  for (std::int64_t r = 0; r < s.lse_elements(); r += 3) rows.push_back(r);
  rows.push_back(s.lse_elements() - 1);
  std::vector<float> o_rows(rows.size() * s.head_dim), lse_rows(rows.size());
  kernels::attention::forward_cpu_rows(s, q.data(), k.data(), v.data(), rows.data(), rows.size(),
                                       o_rows.data(), lse_rows.data(), 2);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(lse_rows[i], lse[rows[i]]) << "row " << rows[i];
    for (int c = 0; c < s.head_dim; ++c)
      EXPECT_EQ(o_rows[i * s.head_dim + c], o[rows[i] * s.head_dim + c]) << "row " << rows[i];
  }
}

Shape shape(int b, int h, int hkv, int n, int d, bool causal, float scale = 0.0f) {
  Shape s;
  s.batch = b, s.heads = h, s.kv_heads = hkv, s.seq_len = n, s.head_dim = d;
  s.causal = causal, s.scale = scale;
  return s;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, AttentionCpuForward,
    ::testing::Values(shape(1, 1, 1, 1, 4, false), shape(1, 1, 1, 1, 4, true),
                      shape(2, 2, 2, 7, 8, false), shape(2, 2, 2, 7, 8, true),
                      shape(1, 4, 2, 9, 4, false), shape(1, 4, 1, 9, 4, true),
                      shape(2, 3, 3, 16, 32, true, 0.3f), shape(1, 2, 1, 33, 64, false)));

// L(Q, K, V) = sum(O * dO): its gradient is exactly what backward computes for upstream dO.
double loss(const Shape& s, const std::vector<double>& q, const std::vector<double>& k,
            const std::vector<double>& v, const std::vector<double>& d_o) {
  const Direct f = direct_forward(s, q, k, v);
  double sum = 0;
  for (std::size_t i = 0; i < f.o.size(); ++i) sum += f.o[i] * d_o[i];
  return sum;
}

class AttentionCpuBackward : public ::testing::TestWithParam<Shape> {};

TEST_P(AttentionCpuBackward, MatchesCentralDifferences) {
  const Shape s = GetParam();
  const auto qf = normal(s.q_elements(), 11), kf = normal(s.kv_elements(), 12),
             vf = normal(s.kv_elements(), 13), dof = normal(s.q_elements(), 14);
  std::vector<float> dq(s.q_elements()), dk(s.kv_elements()), dv(s.kv_elements());
  kernels::attention::backward_cpu(s, qf.data(), kf.data(), vf.data(), dof.data(), dq.data(),
                                   dk.data(), dv.data(), 2);
  std::vector<double> q = widen(qf), k = widen(kf), v = widen(vf);
  const std::vector<double> d_o = widen(dof);
  // Central differences: error O(h^2) ~ 1e-10 for these smooth functions, roundoff
  // ~1e-16 / h ~ 1e-11; the float rounding of the reference's outputs dominates (~1e-7).
  const double h = 1e-5;
  auto check = [&](std::vector<double>& x, const std::vector<float>& grad, const char* name) {
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double x0 = x[i];
      x[i] = x0 + h;
      const double up = loss(s, q, k, v, d_o);
      x[i] = x0 - h;
      const double down = loss(s, q, k, v, d_o);
      x[i] = x0;
      const double fd = (up - down) / (2 * h);
      EXPECT_NEAR(grad[i], fd, 2e-6 * (1.0 + std::abs(fd)))
          << name << "[" << i << "] " << describe(s);
    }
  };
  check(q, dq, "dQ");
  check(k, dk, "dK");
  check(v, dv, "dV");
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, AttentionCpuBackward,
    ::testing::Values(shape(1, 1, 1, 1, 4, false), shape(1, 1, 1, 5, 4, false),
                      shape(1, 1, 1, 5, 4, true), shape(2, 2, 2, 4, 4, true, 0.7f),
                      shape(1, 4, 2, 4, 4, false),   // GQA: 2 query heads per kv head
                      shape(1, 4, 1, 5, 4, true),    // MQA
                      shape(1, 2, 1, 6, 8, true)));

TEST(AttentionShape, RejectsKvHeadsThatDoNotDivideHeads) {
  EXPECT_EQ(kernels::attention::shape_error(shape(1, 32, 3, 16, 64, false)), "kv_heads (3) must divide heads (32)");
  EXPECT_EQ(kernels::attention::shape_error(shape(1, 4, 0, 16, 64, false)), "kv_heads (0) must be >= 1");
  EXPECT_EQ(kernels::attention::shape_error(shape(1, 4, 4, 0, 64, false)), "seq_len (0) must be >= 1");
  EXPECT_EQ(kernels::attention::shape_error(shape(1, 4, 4, 16, 6, false)), "head_dim (6) must be a positive multiple of 4");
  EXPECT_EQ(kernels::attention::shape_error(shape(1, 32, 8, 16, 64, true)), "");
  EXPECT_FLOAT_EQ(shape(1, 1, 1, 1, 64, false).effective_scale(), 0.125f);
  EXPECT_FLOAT_EQ(shape(1, 1, 1, 1, 64, false, 0.5f).effective_scale(), 0.5f);
}

// ---- The plugin: registration, parameter rules, the sampled-check switch, and a full
// cpu run through the registry (the path `harness run` takes).

harness::Params params(int b, int h, int hkv, int n, int d, bool causal) {
  return harness::test::attention_params(b, h, hkv, n, d, causal);
}

TEST(AttentionPlugin, ProblemsAndVariantsAreRegistered) {
  const auto& reg = harness::Registry::instance();
  for (const char* problem : {"attention", "attention_backward"}) {
    ASSERT_NE(reg.find_problem(problem), nullptr) << problem;
    for (const char* v : {"naive", "flash", "flash_3xtf32", "flash_tc_r64", "flash_tc_r128", "flash_tc_w8", "cpu",
                          "cpu_sampled"})
      EXPECT_NE(reg.find_variant(problem, v), nullptr) << problem << "/" << v;
  }
  EXPECT_NE(reg.find_variant("attention", "naive")->workspace_bytes, nullptr);
}

TEST(AttentionPlugin, RejectsKvHeadsThatDoNotDivideHeadsAndFlashHeadDims) {
  const auto& reg = harness::Registry::instance();
  const harness::Problem* p = reg.find_problem("attention");
  EXPECT_TRUE(p->reject(params(1, 32, 3, 64, 64, false)).has_value());
  EXPECT_FALSE(p->reject(params(1, 32, 8, 64, 64, false)).has_value());
  EXPECT_FALSE(p->reject(params(1, 32, 0, 64, 64, false)).has_value());  // 0: kv_heads = heads
  const auto* flash = reg.find_variant("attention", "flash");
  EXPECT_TRUE(flash->constraint(params(1, 4, 4, 64, 96, false)).has_value());
  EXPECT_FALSE(flash->constraint(params(1, 4, 4, 64, 128, false)).has_value());
  // flash_3xtf32 is FP32 only (bf16/f16: `flash`), at the FP32 flash head dims.
  for (const char* problem : {"attention", "attention_backward"}) {
    const auto* v = reg.find_variant(problem, "flash_3xtf32");
    harness::Params prm = params(1, 4, 4, 64, 32, false);
    EXPECT_FALSE(v->constraint(prm).has_value()) << problem;
    prm.set("head_dim", std::int64_t{96});
    EXPECT_TRUE(v->constraint(prm).has_value()) << problem;
    prm.set("head_dim", std::int64_t{128});
    prm.set("dtype", std::string("bf16"));
    const auto why = v->constraint(prm);
    ASSERT_TRUE(why.has_value()) << problem;
    EXPECT_NE(why->find("f32 only"), std::string::npos) << *why;
  }
  // flash_tc_* run the tensor-core kernels only: f32 (the default dtype) is a skip, and
  // the backward's 2-m-tile shape has no d = 128 kernel.
  for (const char* problem : {"attention", "attention_backward"})
    for (const char* name : {"flash_tc_r64", "flash_tc_r128", "flash_tc_w8"}) {
      const auto* v = reg.find_variant(problem, name);
      harness::Params prm = params(1, 4, 4, 64, 64, false);
      EXPECT_TRUE(v->constraint(prm).has_value()) << problem << "/" << name;
      prm.set("dtype", std::string("bf16"));
      EXPECT_FALSE(v->constraint(prm).has_value()) << problem << "/" << name;
      prm.set("head_dim", std::int64_t{128});
      const bool refused = std::string(problem) == "attention_backward" && std::string(name) == "flash_tc_r128";
      EXPECT_EQ(v->constraint(prm).has_value(), refused) << problem << "/" << name;
      prm.set("head_dim", std::int64_t{96});
      EXPECT_TRUE(v->constraint(prm).has_value()) << problem << "/" << name;
    }
}

// Whether the assignments `set` ({variable, value}) are the only Hopper forward experiments in
// the environment (a config test below runs under ctest with exactly those).
bool only_experiments(const std::map<std::string, std::string>& set) {
  for (const char* name : {"HARNESS_FWD_D64_KEYS", "HARNESS_FWD_D64_CONSUMERS", "HARNESS_FWD_D64_CLUSTER",
                           "HARNESS_FWD_D256_KEYS", "HARNESS_FWD_LAZY_RESCALE"}) {
    const char* e = std::getenv(name);
    const auto want = set.find(name);
    if (want != set.end() ? e == nullptr || want->second != e : e != nullptr) return false;
  }
  return true;
}
bool only_experiment(const std::string& var, const std::string& value) { return only_experiments({{var, value}}); }
// The Hopper forward's config at B = 1, H = 4 (no GQA), N keys of head size d.
std::string hopper_config(int n, int d, bool causal) {
  return kernels::attention::flash_hopper_config(shape(1, 4, 4, n, d, causal));
}
// d = 128's config under every d = 64 experiment (none of them touches it).
const std::string kD128Config = "128 x 128 tiles (query rows x keys), lazy rescaling";

// HARNESS_FWD_D64_CLUSTER=2 (ctest AttentionCpuD64ClusterConfig sets it) takes the d = 64
// kernels in clusters of two, and the config says so; other head sizes are untouched.
// Skipped without the variable (the dispatch reads it once per process).
TEST(AttentionPlugin, HopperForwardConfigNamesTheClusterExperiment) {
  if (!only_experiment("HARNESS_FWD_D64_CLUSTER", "2"))
    GTEST_SKIP() << "runs with HARNESS_FWD_D64_CLUSTER=2 alone (ctest AttentionCpuD64ClusterConfig)";
  EXPECT_EQ(hopper_config(1024, 64, false),
            "128 x 128 tiles (query rows x keys), clusters of 2 sharing K/V (multicast), eager rescaling");
  EXPECT_EQ(hopper_config(2048, 64, true),
            "128 x 128 tiles (query rows x keys), clusters of 2 sharing K/V (multicast), eager rescaling");
  EXPECT_EQ(hopper_config(8192, 64, false),
            "128 x 192 tiles (query rows x keys), clusters of 2 sharing K/V (multicast), eager rescaling");
  EXPECT_EQ(hopper_config(999, 128, true), kD128Config);
}

// HARNESS_FWD_D64_KEYS=160 (ctest AttentionCpuD64Keys160Config sets it) takes 160-key tiles at
// d = 64 at every length, causal or not, and the config says so; other head sizes keep theirs.
TEST(AttentionPlugin, HopperForwardConfigNamesTheForcedKeyTile) {
  if (!only_experiment("HARNESS_FWD_D64_KEYS", "160"))
    GTEST_SKIP() << "runs with HARNESS_FWD_D64_KEYS=160 alone (ctest AttentionCpuD64Keys160Config)";
  EXPECT_EQ(hopper_config(1024, 64, false), "128 x 160 tiles (query rows x keys), eager rescaling");
  EXPECT_EQ(hopper_config(9000, 64, true), "128 x 160 tiles (query rows x keys), eager rescaling");
  EXPECT_EQ(hopper_config(999, 128, true), kD128Config);
}

// HARNESS_FWD_D256_KEYS=64 (ctest AttentionCpuD256Keys64Config): 128 x 64 tiles at d = 256 (the
// width before session 21), causal or not, at every length; d = 64 and 128 keep theirs.
TEST(AttentionPlugin, HopperForwardConfigNamesTheD256KeyTile) {
  if (!only_experiment("HARNESS_FWD_D256_KEYS", "64"))
    GTEST_SKIP() << "runs with HARNESS_FWD_D256_KEYS=64 alone (ctest AttentionCpuD256Keys64Config)";
  EXPECT_EQ(hopper_config(2048, 256, false), "128 x 64 tiles (query rows x keys), lazy rescaling");
  EXPECT_EQ(hopper_config(999, 256, true), "128 x 64 tiles (query rows x keys), lazy rescaling");
  EXPECT_EQ(hopper_config(999, 128, true), kD128Config);
  EXPECT_EQ(hopper_config(1024, 64, false), "128 x 128 tiles (query rows x keys), eager rescaling");
}

// HARNESS_FWD_D64_CONSUMERS=3 with HARNESS_FWD_D64_KEYS=160 (ctest
// AttentionCpuD64Consumers3Keys160Config sets both): 192 query rows x 160 keys at d = 64, at
// every length; the three consumers alone keep 192 keys (a forced 128 too).
TEST(AttentionPlugin, HopperForwardConfigNamesThreeConsumersAtAForcedKeyTile) {
  if (!only_experiments({{"HARNESS_FWD_D64_CONSUMERS", "3"}, {"HARNESS_FWD_D64_KEYS", "160"}}))
    GTEST_SKIP() << "runs with HARNESS_FWD_D64_CONSUMERS=3 and HARNESS_FWD_D64_KEYS=160 alone "
                    "(ctest AttentionCpuD64Consumers3Keys160Config)";
  EXPECT_EQ(hopper_config(1024, 64, false), "192 x 160 tiles (query rows x keys), eager rescaling");
  EXPECT_EQ(hopper_config(8192, 64, true), "192 x 160 tiles (query rows x keys), eager rescaling");
  EXPECT_EQ(hopper_config(999, 128, true), kD128Config);
}

// The Hopper backward's kernel: the default without HARNESS_BWD_* and under HARNESS_BWD_LEAN=15
// (AttentionCpuBackwardLean15Choice); "lean 0" (the session-15 kernel) under HARNESS_BWD_LEAN=0
// alone (ctest AttentionCpuBackwardLeanChoice sets it; AttentionCpuBackwardLeanRefusesOtherValues
// 3), "lean 7" under 7 at d = 64 and the default at d = 128 (AttentionCpuBackwardLean7Choice);
// "ping-pong" under HARNESS_BWD_PINGPONG=1 alone, and refusals of a mistyped lean value beside it
// and of a lean kernel asked of ping-pong, the default's 15 too (AttentionCpuBackwardPingPong*).
TEST(AttentionPlugin, HopperBackwardKernelChoiceFollowsTheEnvironment) {
  namespace attn = kernels::attention;
  const char* pp_env = std::getenv("HARNESS_BWD_PINGPONG");
  const char* lean_env = std::getenv("HARNESS_BWD_LEAN");
  const std::string pp = pp_env != nullptr ? pp_env : "", lean = lean_env != nullptr ? lean_env : "-";
  auto refused = [&](const std::string& message) {
    try {
      attn::flash_hopper_backward_kernel_choice();
      FAIL() << "HARNESS_BWD_PINGPONG='" << pp << "' HARNESS_BWD_LEAN='" << lean << "' was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(e.what(), message);
    }
  };
  const std::string lean_message = "attention: HARNESS_BWD_LEAN must be 0, 1, 2, 4, 7 or 15, not '" + lean + "'";
  if (pp.empty() && (lean == "-" || lean == "15")) {
    EXPECT_STREQ(attn::flash_hopper_backward_kernel_choice(), "default");
    EXPECT_STREQ(attn::flash_hopper_backward_kernel_at(64), "default (lean 15)");
    EXPECT_STREQ(attn::flash_hopper_backward_kernel_at(128), "default (lean 7)");
  } else if (pp.empty() && lean == "0") {
    EXPECT_STREQ(attn::flash_hopper_backward_kernel_choice(), "lean 0");
    EXPECT_STREQ(attn::flash_hopper_backward_kernel_at(128), "lean 0");
  } else if (pp.empty() && lean == "7") {
    EXPECT_STREQ(attn::flash_hopper_backward_kernel_choice(), "lean 7");
    EXPECT_STREQ(attn::flash_hopper_backward_kernel_at(64), "lean 7");
    EXPECT_STREQ(attn::flash_hopper_backward_kernel_at(128), "default (lean 7)");  // bit 8 is d = 64 only
  } else if ((pp.empty() || pp == "1") && lean == "3") {
    refused(lean_message);
  } else if (pp == "1" && lean == "-") {
    EXPECT_STREQ(attn::flash_hopper_backward_kernel_choice(), "ping-pong");
  } else if (pp == "1" && (lean == "7" || lean == "15")) {  // 15 names the default: still refused
    refused("attention: HARNESS_BWD_PINGPONG takes the ping-pong kernel, which has none of the lean changes; "
            "unset HARNESS_BWD_LEAN (or set it to 0), not '" + lean + "'");
  } else {
    GTEST_SKIP() << "runs without HARNESS_BWD_*, with HARNESS_BWD_LEAN=15, 0, 7 or 3 alone, or with "
                    "HARNESS_BWD_PINGPONG=1 alone or beside HARNESS_BWD_LEAN=3, 7 or 15";
  }
}

// Deterministic mode's dQ chains (HARNESS_BWD_DET_CHAINS, read once per process): 2 without the
// variable, 1 or 4 under =1 / =4 (ctest AttentionCpuBackwardDetChains1 / 4), with room for the
// partial sums and their counters in a deterministic run's workspace only; a mistyped value
// refused (AttentionCpuBackwardDetChainsRefused).
TEST(AttentionPlugin, HopperBackwardDqChainsFollowTheEnvironment) {
  namespace attn = kernels::attention;
  const char* env = std::getenv("HARNESS_BWD_DET_CHAINS");
  const std::string chains = env != nullptr ? env : "-";
  // B = 2, H = 4, kv heads 2, N = 300 (5 query tiles of 64, 3 key blocks of 128), d = 64:
  // dQ sums 2 x 4 x 300 x 64 floats each, GQA dK, dV sums 2 x (2 x 2 x 300 x 64), D 2 x 4 x 300,
  // counters 2 x (chains x 4 x 5 + 2 x 3).
  const auto s = shape(2, 4, 2, 300, 64, false);
  auto bytes = [](std::int64_t c) { return static_cast<std::size_t>(c * 153600 + 153600 + 2400 + 2 * (c * 20 + 6)) * 4; };
  const std::map<std::string, int> expected = {{"-", 2}, {"1", 1}, {"4", 4}};
  if (const auto it = expected.find(chains); it != expected.end()) {
    EXPECT_EQ(attn::flash_hopper_backward_dq_chains(), it->second);
    EXPECT_EQ(attn::flash_hopper_backward_workspace_bytes(s, true), bytes(it->second));
    EXPECT_EQ(attn::flash_hopper_backward_workspace_bytes(s), bytes(1));  // not deterministic: one sum
  } else if (chains == "3") {
    try {
      attn::flash_hopper_backward_dq_chains();
      FAIL() << "HARNESS_BWD_DET_CHAINS=3 was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_STREQ(e.what(), "attention: HARNESS_BWD_DET_CHAINS must be 1, 2 or 4, not '3'");
    }
  } else {
    GTEST_SKIP() << "runs without HARNESS_BWD_DET_CHAINS or with it 1, 3 or 4";
  }
}

// The Hopper forward's kernel choice, as the result's config: the dispatch's rules (192-key
// tiles at d = 64 from N = 2048, causal from 8192; 80-key tiles at d = 256; lazy rescaling
// at d = 128 and 256). flash_wgmma records it for bf16/f16 (fp8: its scales; f32: nothing);
// flash records the same where it takes the Hopper kernel, which needs an sm_90 device.
TEST(AttentionPlugin, HopperForwardConfigNamesTheKernel) {
  namespace attn = kernels::attention;
  if (!only_experiments({}))
    GTEST_SKIP() << "HARNESS_FWD_D64_KEYS / _CONSUMERS / _CLUSTER / HARNESS_FWD_D256_KEYS / HARNESS_FWD_LAZY_RESCALE "
                    "override the rules checked here";
  EXPECT_EQ(hopper_config(1024, 64, false), "128 x 128 tiles (query rows x keys), eager rescaling");
  EXPECT_EQ(hopper_config(2048, 64, false), "128 x 192 tiles (query rows x keys), eager rescaling");
  EXPECT_EQ(hopper_config(4096, 64, true), "128 x 128 tiles (query rows x keys), eager rescaling");
  EXPECT_EQ(hopper_config(8192, 64, true), "128 x 192 tiles (query rows x keys), eager rescaling");
  EXPECT_EQ(hopper_config(999, 128, true), kD128Config);
  EXPECT_EQ(hopper_config(2048, 256, false), "128 x 80 tiles (query rows x keys), lazy rescaling");
  EXPECT_EQ(hopper_config(64, 96, false), "");

  const auto& reg = harness::Registry::instance();
  const auto* wgmma = reg.find_variant("attention", "flash_wgmma");
  const auto* flash = reg.find_variant("attention", "flash");
  ASSERT_TRUE(wgmma != nullptr && wgmma->config && flash != nullptr && flash->config);
  harness::Params prm = params(1, 4, 4, 2048, 64, false);
  EXPECT_EQ(wgmma->config(prm), "") << "f32 does not run the Hopper kernel";
  for (const char* dtype : {"bf16", "f16"}) {
    prm.set("dtype", std::string(dtype));
    EXPECT_EQ(wgmma->config(prm), "128 x 192 tiles (query rows x keys), eager rescaling") << dtype;
    const bool hopper = attn::flash_hopper_unsupported(shape(1, 4, 4, 2048, 64, false)) == nullptr;
    EXPECT_EQ(flash->config(prm), hopper ? wgmma->config(prm) : "") << dtype << (hopper ? " (sm_90)" : " (no sm_90)");
  }
  prm.set("dtype", std::string("fp8_e4m3"));
  prm.set("head_dim", std::int64_t{128});
  EXPECT_NE(wgmma->config(prm).find("scale"), std::string::npos) << wgmma->config(prm);
}

TEST(AttentionPlugin, WorkAndReferenceSwitch) {
  const auto& reg = harness::Registry::instance();
  const harness::Problem* fwd = reg.find_problem("attention");
  const harness::Problem* bwd = reg.find_problem("attention_backward");
  const auto big = params(1, 32, 32, 4096, 64, false);
  EXPECT_DOUBLE_EQ(fwd->work(big).flops, 4.0 * 32 * 4096.0 * 4096.0 * 64);
  EXPECT_DOUBLE_EQ(fwd->work(params(1, 32, 32, 4096, 64, true)).flops, 2.0 * 32 * 4096.0 * 4096.0 * 64);
  EXPECT_DOUBLE_EQ(bwd->work(big).flops, 2.5 * fwd->work(big).flops);
  // Q, K, V read, O written (32 MiB each), LSE written (512 KiB).
  EXPECT_DOUBLE_EQ(fwd->work(big).bytes, 4.0 * (4 * 32 * 4096.0 * 64 + 32 * 4096.0));
  EXPECT_EQ(fwd->reference_variant(params(1, 32, 32, 1024, 64, false)), "cpu");  // 2^31
  EXPECT_EQ(fwd->reference_variant(params(1, 32, 32, 2048, 64, false)), "cpu_sampled");
  EXPECT_EQ(bwd->reference_variant(params(1, 16, 16, 1024, 64, false)), "cpu");  // 2^30
  EXPECT_EQ(bwd->reference_variant(params(1, 32, 32, 1024, 64, false)), "cpu_sampled");
  const auto* naive = reg.find_variant("attention", "naive");
  EXPECT_EQ(naive->workspace_bytes(params(1, 32, 32, 131072, 64, false)),
            std::size_t{32} * 131072 * 131072 * 4);  // 2 TiB: skipped before allocating
}

// The cpu variant through the registry, as the runner drives it: prepare, poison, launch,
// read. Its outputs are the reference's, so they must match the definition.
TEST(AttentionPlugin, CpuVariantThroughTheRegistry) {
  const auto& reg = harness::Registry::instance();
  for (const char* problem : {"attention", "attention_backward"}) {
    const harness::Problem* p = reg.find_problem(problem);
    const auto prm = params(2, 4, 2, 19, 8, true);
    auto inst = p->make_instance(prm, 42);
    const harness::Variant* cpu = reg.find_variant(problem, "cpu");
    ASSERT_FALSE(cpu->constraint(prm).has_value());
    inst->prepare(harness::Backend::cpu);
    inst->reset_outputs(harness::Backend::cpu, nullptr);
    harness::LaunchContext ctx{nullptr, nullptr, &prm};
    harness::launch_on(*cpu, *inst, ctx);
    const auto outs = inst->read_outputs(harness::Backend::cpu);
    ASSERT_EQ(outs.size(), std::string(problem) == "attention" ? 2u : 3u);
    for (const auto& o : outs)
      for (float x : o.floats()) ASSERT_TRUE(std::isfinite(x)) << problem << " " << o.name;
    // Deterministic inputs: a second instance gives the same outputs.
    auto again = p->make_instance(prm, 42);
    again->prepare(harness::Backend::cpu);
    again->reset_outputs(harness::Backend::cpu, nullptr);
    harness::launch_on(*cpu, *again, ctx);
    EXPECT_EQ(again->read_outputs(harness::Backend::cpu)[0].floats(), outs[0].floats());
  }
}

// ---- dtype (bf16 / f16): the param, operand dtypes, tolerances, constraints, and the
// host reference on the rounded inputs.

harness::Params with_dtype(harness::Params p, const char* dtype) {
  p.set("dtype", std::string(dtype));
  return p;
}

TEST(AttentionDtype, ParamDefaultsToF32AndOperandsFollowIt) {
  const auto& reg = harness::Registry::instance();
  for (const char* problem : {"attention", "attention_backward"}) {
    const harness::Problem* p = reg.find_problem(problem);
    const auto f32 = params(1, 4, 2, 33, 64, false);
    EXPECT_EQ(f32.get_string("dtype"), "f32");
    for (const char* dt : {"bf16", "f16"}) {
      const auto want = *harness::dtype_from_string(dt);
      for (const auto& op : p->operands(with_dtype(f32, dt)))
        EXPECT_EQ(op.dtype, op.name == "LSE" ? harness::DType::f32 : want) << problem << " " << op.name << " " << dt;
    }
    for (const auto& op : p->operands(f32)) EXPECT_EQ(op.dtype, harness::DType::f32) << op.name;
  }
  // Tensors at 2 bytes, LSE at 4: Q, K, V read and O written, 32 heads x 4096 x 64.
  const auto big = with_dtype(params(1, 32, 32, 4096, 64, false), "bf16");
  EXPECT_DOUBLE_EQ(reg.find_problem("attention")->work(big).bytes, 2.0 * 4 * 32 * 4096.0 * 64 + 4.0 * 32 * 4096);
  EXPECT_DOUBLE_EQ(reg.find_problem("attention")->work(big).flops, 4.0 * 32 * 4096.0 * 4096.0 * 64);
}

TEST(AttentionDtype, TolerancePerDtype) {
  namespace rules = plugins::attention;
  const Shape s = shape(1, 4, 4, 100, 64, false);
  const double u_bf16 = std::ldexp(1.0, -8), u_f16 = std::ldexp(1.0, -11);
  EXPECT_DOUBLE_EQ(rules::tolerance(s, false, harness::DType::bf16).abs, 4 * u_bf16);
  EXPECT_DOUBLE_EQ(rules::tolerance(s, false, harness::DType::bf16).rel, 2 * u_bf16);
  EXPECT_DOUBLE_EQ(rules::tolerance(s, true, harness::DType::f16).abs, 8 * u_f16);
  EXPECT_DOUBLE_EQ(rules::tolerance(s, true, harness::DType::f16).rel, 4 * u_f16);
  // f32 unchanged, and the default argument is f32.
  EXPECT_DOUBLE_EQ(rules::tolerance(s, false).abs, rules::tolerance(s, false, harness::DType::f32).abs);
  EXPECT_DOUBLE_EQ(rules::tolerance(s, false).abs, 4e-5);
  // The problems hand out the dtype's tolerance and state the rule.
  const auto& reg = harness::Registry::instance();
  const auto p = with_dtype(params(1, 4, 4, 100, 64, false), "bf16");
  EXPECT_DOUBLE_EQ(reg.find_problem("attention")->tolerance(p).abs, 4 * u_bf16);
  EXPECT_DOUBLE_EQ(reg.find_problem("attention_backward")->tolerance(p).rel, 4 * u_bf16);
  for (const char* problem : {"attention", "attention_backward"})
    EXPECT_NE(reg.find_problem(problem)->tolerance_rule().find("bf16/f16"), std::string::npos) << problem;
}

TEST(AttentionDtype, ConstraintsSayWhy) {
  const auto& reg = harness::Registry::instance();
  for (const char* problem : {"attention", "attention_backward"}) {
    const auto* naive = reg.find_variant(problem, "naive");
    const auto* flash = reg.find_variant(problem, "flash");
    const auto bf16_64 = with_dtype(params(1, 4, 4, 64, 64, false), "bf16");
    ASSERT_TRUE(naive->constraint(bf16_64).has_value());
    EXPECT_EQ(*naive->constraint(bf16_64), "naive: dtype f32 only, not bf16");
    EXPECT_FALSE(naive->constraint(params(1, 4, 4, 64, 64, false)).has_value());
    EXPECT_FALSE(flash->constraint(bf16_64).has_value());
    EXPECT_FALSE(flash->constraint(with_dtype(params(1, 4, 4, 64, 128, false), "f16")).has_value());
    const auto d32 = flash->constraint(with_dtype(params(1, 4, 4, 64, 32, false), "f16"));
    ASSERT_TRUE(d32.has_value());
    EXPECT_NE(d32->find("head_dim 64, 128, not 32"), std::string::npos) << *d32;
    EXPECT_FALSE(flash->constraint(params(1, 4, 4, 64, 32, false)).has_value());  // f32 has d = 32
    EXPECT_FALSE(kernels::attention::flash_tc_supported(32));
    EXPECT_TRUE(kernels::attention::flash_tc_supported(64) && kernels::attention::flash_tc_supported(128));
  }
  // Input errors come before any variant, whatever the dtype.
  EXPECT_TRUE(reg.find_problem("attention")->reject(with_dtype(params(1, 32, 3, 64, 64, false), "bf16")).has_value());
}

// The cpu variant with bf16/f16 operands: its outputs are the double reference on the
// instance's rounded inputs (widened exactly to float), rounded to the dtype.
TEST(AttentionDtype, CpuReferenceUsesTheRoundedInputs) {
  const auto& reg = harness::Registry::instance();
  for (const char* dt : {"bf16", "f16"})
    for (const char* problem : {"attention", "attention_backward"}) {
      const harness::Problem* p = reg.find_problem(problem);
      const auto prm = with_dtype(params(1, 4, 2, 13, 8, true), dt);
      const harness::DType type = *harness::dtype_from_string(dt);
      auto inst = p->make_instance(prm, 42);
      const harness::Variant* cpu = reg.find_variant(problem, "cpu");
      inst->prepare(harness::Backend::cpu);
      inst->reset_outputs(harness::Backend::cpu, nullptr);
      harness::LaunchContext ctx{nullptr, nullptr, &prm};
      harness::launch_on(*cpu, *inst, ctx);
      const auto outs = inst->read_outputs(harness::Backend::cpu);
      // The inputs as the instance holds them, widened here independently.
      const harness::Operands* io = inst->operands(harness::Backend::cpu);
      ASSERT_NE(io, nullptr);
      auto widened = [&](const char* name) {
        const auto& e = io->at(name);
        EXPECT_EQ(e.spec->dtype, type) << name;
        std::vector<float> x(e.spec->count());
        for (std::size_t i = 0; i < x.size(); ++i)
          x[i] = static_cast<float>(
              harness::load_as_double(static_cast<const unsigned char*>(e.data) + i * harness::size_of(type), type));
        return x;
      };
      const Shape s = shape(1, 4, 2, 13, 8, true);
      const auto q = widened("Q"), k = widened("K"), v = widened("V");
      std::vector<std::vector<float>> want;
      if (std::string(problem) == "attention") {
        std::vector<float> o(s.q_elements()), lse(s.lse_elements());
        kernels::attention::forward_cpu(s, q.data(), k.data(), v.data(), o.data(), lse.data(), 2);
        want = {o, lse};
      } else {
        const auto d_o = widened("dO");
        std::vector<float> dq(s.q_elements()), dk(s.kv_elements()), dv(s.kv_elements());
        kernels::attention::backward_cpu(s, q.data(), k.data(), v.data(), d_o.data(), dq.data(), dk.data(), dv.data(), 2);
        want = {dq, dk, dv};
      }
      ASSERT_EQ(outs.size(), want.size());
      for (std::size_t o = 0; o < outs.size(); ++o) {
        const bool is_lse = outs[o].name == "LSE";
        EXPECT_EQ(outs[o].dtype, is_lse ? harness::DType::f32 : type) << outs[o].name;
        ASSERT_EQ(outs[o].count(), want[o].size());
        for (std::size_t i = 0; i < want[o].size(); ++i) {
          std::byte rounded[8];
          harness::store_from_double(rounded, outs[o].dtype, want[o][i]);
          ASSERT_EQ(outs[o].value(i), harness::load_as_double(rounded, outs[o].dtype))
              << problem << " " << dt << " " << outs[o].name << "[" << i << "]";
        }
      }
    }
}

// flash_tc_deep (forward: 48-key tiles of the 128-row block; backward: 64-query steps of
// the 128-key block) is a d = 128 shape of both passes: f32 and d = 64 are skips that name
// the shape it would be there.
TEST(AttentionPlugin, FlashTcDeepIsAHeadDim128Shape) {
  const auto& reg = harness::Registry::instance();
  for (const char* problem : {"attention", "attention_backward"}) {
    const auto* v = reg.find_variant(problem, "flash_tc_deep");
    ASSERT_NE(v, nullptr) << problem;
    harness::Params prm = params(1, 4, 4, 64, 128, false);
    EXPECT_TRUE(v->constraint(prm).has_value()) << problem;  // f32
    prm.set("dtype", std::string("bf16"));
    EXPECT_FALSE(v->constraint(prm).has_value()) << problem;
    prm.set("head_dim", std::int64_t{64});
    const auto why = v->constraint(prm);
    ASSERT_TRUE(why.has_value()) << problem;
    const char* same = std::string(problem) == "attention" ? "flash_tc_r128" : "flash_tc_w8";
    EXPECT_NE(why->find(same), std::string::npos) << *why;
  }
}

}  // namespace
