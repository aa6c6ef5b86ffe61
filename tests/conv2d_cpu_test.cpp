// The conv2d family without a GPU: the double references against a brute-force sum on tiny
// images (borders included: images smaller than the mask, shifted-delta and all-ones masks
// whose answers are known exactly), the plugins' cpu variants through the registry, the
// work and tolerance figures, and bad parameters as input errors at load and through the
// harness executable (exit code 2, the message naming the parameter).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "conv2d/conv2d.hpp"
#include "family_support.hpp"
#include "harness/error.hpp"
#include "suite/suite.hpp"
#include "test_support.hpp"

namespace {

namespace kc = kernels::conv2d;

std::vector<float> random_values(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& e : v) e = d(gen);
  return v;
}

// The definition, written independently of kernels/conv2d: every (output, tap) pair, the
// tap taken only when it lies inside the image.
std::vector<double> brute_force(const kc::LayerShape& s, const std::vector<float>& x, const std::vector<float>& f) {
  const int side = 2 * s.r + 1;
  std::vector<double> y(static_cast<std::size_t>(s.n) * s.k * s.h * s.w, 0.0);
  for (int n = 0; n < s.n; ++n)
    for (int k = 0; k < s.k; ++k)
      for (int i = 0; i < s.h; ++i)
        for (int j = 0; j < s.w; ++j) {
          double acc = 0;
          for (int c = 0; c < s.c; ++c)
            for (int a = 0; a < side; ++a)
              for (int b = 0; b < side; ++b) {
                const int ii = i + a - s.r, jj = j + b - s.r;
                if (ii < 0 || ii >= s.h || jj < 0 || jj >= s.w) continue;
                acc += static_cast<double>(f[((static_cast<std::size_t>(k) * s.c + c) * side + a) * side + b]) *
                       static_cast<double>(x[((static_cast<std::size_t>(n) * s.c + c) * s.h + ii) * s.w + jj]);
              }
          y[((static_cast<std::size_t>(n) * s.k + k) * s.h + i) * s.w + j] = acc;
        }
  return y;
}

TEST(Conv2dReference, SingleChannelMatchesBruteForceIncludingBorders) {
  // Images smaller than the mask (1x1, 2x3), odd ones, and one with an interior.
  const std::pair<int, int> sizes[] = {{1, 1}, {2, 3}, {5, 7}, {9, 4}, {13, 11}};
  for (int r = 1; r <= kc::kMaxRadius; ++r)
    for (const auto& [h, w] : sizes) {
      const int side = 2 * r + 1;
      const auto x = random_values(static_cast<std::size_t>(h) * w, 7u * h + w);
      const auto m = random_values(static_cast<std::size_t>(side) * side, 100u + r);
      std::vector<float> y(x.size(), std::nanf(""));
      kc::cpu(h, w, r, x.data(), m.data(), y.data());
      const auto want = brute_force({1, 1, h, w, 1, r}, x, m);
      for (std::size_t e = 0; e < y.size(); ++e)
        ASSERT_NEAR(y[e], want[e], 1e-6 * std::max(1.0, std::abs(want[e])))
            << "r=" << r << " " << h << "x" << w << " at " << e;
    }
}

// A mask that is 1 at (a, b) and 0 elsewhere shifts the image by (a - r, b - r): y[i][j] =
// x[i + a - r][j + b - r], and exactly 0 where that position is outside the image.
TEST(Conv2dReference, ShiftedDeltaMaskGivesZerosOutsideTheImage) {
  const int h = 6, w = 5;
  std::vector<float> x(h * w);
  for (int e = 0; e < h * w; ++e) x[e] = static_cast<float>(e + 1);
  for (int r = 1; r <= kc::kMaxRadius; ++r) {
    const int side = 2 * r + 1;
    for (const auto& [a, b] :
         {std::pair{0, 0}, std::pair{side - 1, side - 1}, std::pair{0, side - 1}, std::pair{r, r}}) {
      std::vector<float> m(side * side, 0.0f), y(h * w, -1.0f);
      m[a * side + b] = 1.0f;
      kc::cpu(h, w, r, x.data(), m.data(), y.data());
      for (int i = 0; i < h; ++i)
        for (int j = 0; j < w; ++j) {
          const int ii = i + a - r, jj = j + b - r;
          const float want = (ii >= 0 && ii < h && jj >= 0 && jj < w) ? x[ii * w + jj] : 0.0f;
          EXPECT_EQ(y[i * w + j], want) << "r=" << r << " a=" << a << " b=" << b << " at (" << i << "," << j << ")";
        }
    }
  }
}

// All ones: each output counts the taps inside the image, (r+1)^2 at a corner of a large
// enough image, S^2 inside.
TEST(Conv2dReference, AllOnesCountsTheTapsInsideTheImage) {
  const int h = 12, w = 10, r = 2, side = 5;
  std::vector<float> x(h * w, 1.0f), m(side * side, 1.0f), y(h * w);
  kc::cpu(h, w, r, x.data(), m.data(), y.data());
  EXPECT_EQ(y[0], 9.0f);                      // corner: 3 x 3 taps
  EXPECT_EQ(y[1], 12.0f);                     // next to it: 3 rows x 4 columns
  EXPECT_EQ(y[5 * w + 5], 25.0f);             // interior
  EXPECT_EQ(y[(h - 1) * w + (w - 1)], 9.0f);  // the opposite corner
}

TEST(Conv2dReference, LayerMatchesBruteForce) {
  for (const kc::LayerShape s : {kc::LayerShape{2, 3, 5, 4, 2, 1}, kc::LayerShape{1, 5, 3, 7, 3, 2},
                                 kc::LayerShape{3, 2, 9, 9, 5, 4}, kc::LayerShape{1, 1, 1, 1, 1, 3}}) {
    const int side = 2 * s.r + 1;
    const auto x = random_values(static_cast<std::size_t>(s.n) * s.c * s.h * s.w, 11u * s.c);
    const auto f = random_values(static_cast<std::size_t>(s.k) * s.c * side * side, 13u * s.k);
    std::vector<float> y(static_cast<std::size_t>(s.n) * s.k * s.h * s.w, std::nanf(""));
    kc::layer_cpu(s, x.data(), f.data(), y.data());
    const auto want = brute_force(s, x, f);
    for (std::size_t e = 0; e < y.size(); ++e)
      ASSERT_NEAR(y[e], want[e], 1e-6 * std::max(1.0, std::abs(want[e]))) << "C=" << s.c << " r=" << s.r << " at " << e;
  }
}

TEST(Conv2dReference, RejectsBadArguments) {
  float v = 0;
  EXPECT_THROW(kc::cpu(0, 3, 1, &v, &v, &v), std::invalid_argument);
  EXPECT_THROW(kc::cpu(3, 3, 0, &v, &v, &v), std::invalid_argument);
  EXPECT_THROW(kc::cpu(3, 3, 5, &v, &v, &v), std::invalid_argument);
  EXPECT_THROW(kc::layer_cpu({1, 0, 3, 3, 1, 1}, &v, &v, &v), std::invalid_argument);
}

harness::Params single_params(std::int64_t h, std::int64_t w, std::int64_t r) {
  harness::Params p;
  p.set("H", h);
  p.set("W", w);
  p.set("radius", r);
  return harness::test::params_of(harness::test::problem_named("conv2d"), p);
}

harness::Params layer_params(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w, std::int64_t k,
                             std::int64_t r) {
  harness::Params p;
  p.set("N", n);
  p.set("C", c);
  p.set("H", h);
  p.set("W", w);
  p.set("K", k);
  p.set("radius", r);
  return harness::test::params_of(harness::test::problem_named("conv2d_layer"), p);
}

// The cpu variants through the registry: outputs poisoned first, then every element
// written, and equal to the brute force on the problem's own inputs.
TEST(Conv2dPlugin, CpuVariantsWriteEveryOutputAndMatchTheDefinition) {
  const harness::Variant* cpu = harness::Registry::instance().find_variant("conv2d", "cpu");
  ASSERT_NE(cpu, nullptr);
  for (int r = 1; r <= 4; ++r) {
    const auto p = single_params(7, 13, r);
    auto inst = harness::test::problem_named("conv2d").make_instance(p, 5);
    inst->prepare(harness::Backend::cpu);
    const auto* ops = inst->operands(harness::Backend::cpu);
    const int side = 2 * r + 1;
    const std::vector<float> x(ops->in<float>("x"), ops->in<float>("x") + 7 * 13);
    const std::vector<float> m(ops->in<float>("mask"), ops->in<float>("mask") + side * side);
    const auto out = harness::test::run_once(*cpu, *inst, p);
    ASSERT_EQ(out.size(), 1u);
    const auto want = brute_force({1, 1, 7, 13, 1, r}, x, m);
    for (std::size_t e = 0; e < want.size(); ++e) {
      ASSERT_FALSE(out[0].poisoned(e)) << "r=" << r;
      EXPECT_NEAR(out[0].value(e), want[e], 1e-6) << "r=" << r << " at " << e;
    }
  }
  const harness::Variant* lcpu = harness::Registry::instance().find_variant("conv2d_layer", "cpu");
  ASSERT_NE(lcpu, nullptr);
  const auto p = layer_params(2, 3, 5, 6, 4, 2);
  auto inst = harness::test::problem_named("conv2d_layer").make_instance(p, 5);
  inst->prepare(harness::Backend::cpu);
  const auto* ops = inst->operands(harness::Backend::cpu);
  const std::vector<float> x(ops->in<float>("x"), ops->in<float>("x") + 2 * 3 * 5 * 6);
  const std::vector<float> f(ops->in<float>("w"), ops->in<float>("w") + 4 * 3 * 25);
  const auto out = harness::test::run_once(*lcpu, *inst, p);
  const auto want = brute_force({2, 3, 5, 6, 4, 2}, x, f);
  ASSERT_EQ(out[0].count(), want.size());
  for (std::size_t e = 0; e < want.size(); ++e) {
    ASSERT_FALSE(out[0].poisoned(e));
    EXPECT_NEAR(out[0].value(e), want[e], 1e-5) << e;
  }
}

TEST(Conv2dPlugin, WorkToleranceAndVariants) {
  const auto& single = harness::test::problem_named("conv2d");
  const auto p = single_params(8192, 8192, 2);
  EXPECT_DOUBLE_EQ(single.work(p).flops, 2.0 * 25 * 8192 * 8192);
  EXPECT_DOUBLE_EQ(single.work(p).bytes, 4.0 * (2.0 * 8192 * 8192 + 25));
  const double u = std::ldexp(1.0, -24);
  EXPECT_DOUBLE_EQ(single.tolerance(p).abs, u * (4 * 25 + 8 * 5));
  EXPECT_DOUBLE_EQ(single.tolerance(p).rel, 4 * u);
  EXPECT_EQ(single.reference_variant(p), "cpu");

  const auto& layer = harness::test::problem_named("conv2d_layer");
  const auto q = layer_params(8, 64, 56, 56, 64, 1);
  const double outputs = 8.0 * 64 * 56 * 56, n = 64.0 * 9;
  EXPECT_DOUBLE_EQ(layer.work(q).flops, 2.0 * n * outputs);
  EXPECT_DOUBLE_EQ(layer.work(q).bytes, 4.0 * (8.0 * 64 * 56 * 56 + outputs + 64 * n));
  EXPECT_DOUBLE_EQ(layer.tolerance(q).abs, u * (4 * n + 8 * 24));

  auto has = [](const char* problem, std::vector<std::string> want) {
    const auto names = harness::Registry::instance().variant_names(problem);
    for (const auto& v : want) EXPECT_NE(std::find(names.begin(), names.end(), v), names.end()) << problem << "/" << v;
  };
  has("conv2d", {"cpu", "naive", "constant_mask", "tiled_out", "tiled_in", "tiled_cached_halo", "cudnn"});
  has("conv2d_layer", {"cpu", "naive", "tiled", "cudnn"});
}

std::string load_error(const std::string& problem, const std::string& params) {
  const std::string yaml = "cases:\n  - problem: " + problem + "\n    params: " + params + "\n";
  try {
    harness::parse_suite(yaml, "t.yaml", harness::Registry::instance());
  } catch (const harness::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Conv2dPlugin, BadInputIsAnInputErrorAtLoad) {
  for (const char* bad : {"{radius: 0}", "{radius: 5}", "{H: 0}", "{W: 0}", "{H: 65537}"}) {
    const std::string e = load_error("conv2d", bad);
    EXPECT_NE(e.find("out of range"), std::string::npos) << bad << ": " << e;
  }
  EXPECT_NE(load_error("conv2d", "{radius: 5}").find("radius"), std::string::npos);
  EXPECT_NE(load_error("conv2d", "{H: 65536, W: 65536}").find("more than 2^30"), std::string::npos);
  for (const char* bad : {"{N: 0}", "{C: 0}", "{K: 0}", "{H: 0}", "{radius: 9}"}) {
    const std::string e = load_error("conv2d_layer", bad);
    EXPECT_NE(e.find("out of range"), std::string::npos) << bad << ": " << e;
  }
  EXPECT_NE(load_error("conv2d_layer", "{N: 4096, C: 4096, H: 256, W: 256}").find("N * C * H * W"), std::string::npos);
  EXPECT_NE(load_error("conv2d_layer", "{N: 4096, C: 1, K: 4096, H: 256, W: 256}").find("N * K * H * W"),
            std::string::npos);
  EXPECT_NE(load_error("conv2d", "{cudnn_algo: fft}").find("must be one of"), std::string::npos);
  EXPECT_EQ(load_error("conv2d", "{H: [1, 8191], W: [1, 8193], radius: [1, 2, 3, 4]}"), "(no error)");
  EXPECT_EQ(load_error("conv2d_layer", "{N: [1, 8], C: [1, 3, 64], H: 56, W: 56, K: [1, 64], radius: [1, 4]}"),
            "(no error)");
}

// What a user sees: `harness run` on a small suite (cpu results pass, cuda ones run or
// skip), then on a suite with radius 5 and H 0: exit code 2 and the parameter named.
TEST(Conv2dPlugin, HarnessCliRunsAndRejectsBadParameters) {
  const std::string suite = harness::test::temp_path("conv2d.yaml"), out = harness::test::temp_path("conv2d.json");
  {
    std::ofstream f(suite);
    f << "suite: conv2d-cpu\nsettings: {warmup: 0, min_samples: 1, min_time: 0, max_time: 0.001, noise: 1.0}\n"
         "cases:\n"
         "  - {name: s, problem: conv2d, params: {H: [1, 37], W: 29, radius: [1, 4]}, variants: [cpu]}\n"
         "  - {name: l, problem: conv2d_layer, params: {N: 2, C: 3, H: 9, W: 7, K: 5, radius: 2}, variants: [cpu]}\n";
  }
  auto r = harness::test::run_command(std::string(HARNESS_EXE) + " run " + suite + " --quiet --out " + out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("5 results: 5 passed"), std::string::npos) << r.output;
  for (const auto& [params, word] : {std::pair<std::string, std::string>{"{radius: 5}", "radius"},
                                     std::pair<std::string, std::string>{"{H: 0}", "H"}}) {
    {
      std::ofstream f(suite);
      f << "suite: bad\ncases:\n  - {name: z, problem: conv2d, params: " << params << ", variants: all}\n";
    }
    r = harness::test::run_command(std::string(HARNESS_EXE) + " run " + suite + " --quiet --out " + out);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("out of range"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(word), std::string::npos) << r.output;
  }
  {
    std::ofstream f(suite);
    f << "suite: bad\ncases:\n  - {name: z, problem: conv2d_layer, params: {N: 0}, variants: all}\n";
  }
  r = harness::test::run_command(std::string(HARNESS_EXE) + " run " + suite + " --quiet --out " + out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("out of range"), std::string::npos) << r.output;
  std::remove(suite.c_str());
  std::remove(out.c_str());
}

}  // namespace
