// The optimizer family without a GPU: the seed Transformer's parameter list, the double
// references on hand-computed steps, the fused launch's descriptor table, the plugin's cpu
// variant through the registry (each element against the update formula), and bad
// parameters as input errors at suite load.
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "family_support.hpp"
#include "harness/error.hpp"
#include "optimizer/optimizer.hpp"
#include "suite/suite.hpp"

namespace {

namespace opt = kernels::optimizer;

TEST(OptimizerLayout, SeedTransformerParameterCount) {
  const auto s = opt::seed_transformer_sizes();
  const std::int64_t d = 512, h = 2048, V = 6880;
  const std::int64_t attention = 4 * (d * d + d), ffn = d * h + h + h * d + d, norm = 2 * d;
  const std::int64_t want = 2 * V * d + 6 * (attention + ffn + 2 * norm) + 6 * (2 * attention + ffn + 3 * norm) +
                            2 * norm + d * V + V;
  EXPECT_EQ(want, 54715104);
  EXPECT_EQ(std::accumulate(s.begin(), s.end(), std::int64_t{0}), want);
  EXPECT_EQ(s.size(), 2u + 6 * 16 + 6 * 26 + 4 + 2);
  EXPECT_EQ(s.front(), V * d);
  EXPECT_EQ(s.back(), V);
}

TEST(OptimizerReference, HandComputedSteps) {
  float w = 0.5f, g = 0.1f, m = 0.0f, v = 0.0f;
  // Step 1 with bias correction: m^ = g, v^ = g^2, so w moves by lr g / (|g| + eps) ~ lr.
  opt::cpu_adam(&w, &g, &m, &v, 1, 1e-3, 0.9, 0.999, 1e-8, 1, true);
  EXPECT_NEAR(m, 0.1 * 0.1f, 1e-9);
  EXPECT_NEAR(v, 0.001 * 0.1f * 0.1f, 1e-12);
  EXPECT_NEAR(w, 0.5 - 1e-3 * 0.1f / (0.1f + 1e-8), 3e-8);
  // The slides' form (no bias correction): w -= lr m / (sqrt(v) + eps).
  w = 0.5f, m = 0.0f, v = 0.0f;
  opt::cpu_adam(&w, &g, &m, &v, 1, 1e-3, 0.9, 0.999, 1e-8, 1, false);
  const double mm = 0.1 * 0.1f, vv = 0.001 * 0.1f * 0.1f;
  EXPECT_NEAR(w, 0.5 - 1e-3 * mm / (std::sqrt(vv) + 1e-8), 3e-8);
  w = 0.5f;
  opt::cpu_sgd(&w, &g, 1, 1e-3);
  EXPECT_NEAR(w, 0.5 - 1e-3 * 0.1f, 3e-8);
}

TEST(OptimizerFused, DescriptorTableCoversEveryElementOnce) {
  std::vector<float> w(1 + 8192 + 8193 + 5), g(w.size()), m(w.size()), v(w.size());
  std::int64_t chunks = -1;
  const auto d = opt::fused_descriptors({1, 8192, 8193, 0, 5}, w.data(), g.data(), m.data(), v.data(), chunks);
  ASSERT_EQ(d.size(), 4u);  // the empty tensor owns no descriptor and no block
  EXPECT_EQ(chunks, 1 + 1 + 2 + 1);
  const std::int64_t first[] = {0, 1, 2, 4}, offset[] = {0, 1, 8193, 16386}, n[] = {1, 8192, 8193, 5};
  for (std::size_t i = 0; i < d.size(); ++i) {
    EXPECT_EQ(d[i].first_chunk, first[i]);
    EXPECT_EQ(d[i].n, n[i]);
    EXPECT_EQ(d[i].w, w.data() + offset[i]);
    EXPECT_EQ(d[i].g, g.data() + offset[i]);
    EXPECT_EQ(d[i].m, m.data() + offset[i]);
    EXPECT_EQ(d[i].v, v.data() + offset[i]);
  }
}

harness::Params optimizer_params(const std::string& update, const std::string& layout, std::int64_t n,
                                 bool bias_correction = true) {
  harness::Params p;
  p.set("update", update);
  p.set("layout", layout);
  p.set("n", n);
  p.set("bias_correction", bias_correction);
  return harness::test::params_of(harness::test::problem_named("optimizer"), p);
}

// The cpu variant through the registry: inputs are read back from the instance and every
// element is checked against the update formula evaluated here, independently.
TEST(OptimizerPlugin, CpuVariantMatchesTheFormulaOnOddLayouts) {
  const harness::Problem& problem = harness::test::problem_named("optimizer");
  const harness::Variant* cpu = harness::Registry::instance().find_variant("optimizer", "cpu");
  ASSERT_NE(cpu, nullptr);
  struct Case {
    const char* update;
    const char* layout;
    std::int64_t n;
    bool bc;
  };
  for (const Case c : {Case{"adam", "single", 1, true}, Case{"adam", "single", 4099, false},
                       Case{"adam", "odd_tensors", 1, true}, Case{"sgd", "single", 7, true},
                       Case{"sgd", "odd_tensors", 1, true}}) {
    const auto p = optimizer_params(c.update, c.layout, c.n, c.bc);
    auto inst = problem.make_instance(p, 5);
    inst->prepare(harness::Backend::cpu);
    inst->reset_outputs(harness::Backend::cpu, nullptr);  // in/out operands hold their filled values
    const bool adam = std::string(c.update) == "adam";
    const auto* ops = inst->operands(harness::Backend::cpu);
    const std::size_t n = ops->count("w");
    const std::vector<float> w0(ops->in<float>("w"), ops->in<float>("w") + n), g(ops->in<float>("g"), ops->in<float>("g") + n);
    std::vector<float> m0, v0;
    if (adam) {
      m0.assign(ops->in<float>("m"), ops->in<float>("m") + n);
      v0.assign(ops->in<float>("v"), ops->in<float>("v") + n);
    }
    for (int run = 0; run < 2; ++run) {  // the second run starts from the restored inputs
      const auto out = harness::test::run_once(*cpu, *inst, p);
      ASSERT_EQ(out.size(), adam ? 3u : 1u);
      const double lr = 1e-3, b1 = 0.9, b2 = 0.999, t = 10;
      const double c1 = c.bc ? 1 - std::pow(b1, t) : 1, c2 = c.bc ? 1 - std::pow(b2, t) : 1;
      for (std::size_t i = 0; i < n; ++i) {
        if (!adam) {
          EXPECT_NEAR(out[0].value(i), w0[i] - lr * g[i], 1e-7) << i;
          continue;
        }
        ASSERT_GE(v0[i], 0.5f);
        const double m = b1 * m0[i] + (1 - b1) * g[i], v = b2 * v0[i] + (1 - b2) * g[i] * g[i];
        EXPECT_NEAR(out[0].value(i), w0[i] - lr * (m / c1) / (std::sqrt(v / c2) + 1e-8), 1e-7) << i;
        EXPECT_NEAR(out[1].value(i), m, 1e-7) << i;
        EXPECT_NEAR(out[2].value(i), v, 1e-7) << i;
      }
    }
  }
}

TEST(OptimizerPlugin, WorkToleranceAndVariants) {
  const harness::Problem& problem = harness::test::problem_named("optimizer");
  const auto adam = optimizer_params("adam", "seed_transformer", 1);
  EXPECT_DOUBLE_EQ(problem.work(adam).bytes, 28.0 * 54715104);
  EXPECT_DOUBLE_EQ(problem.work(optimizer_params("sgd", "single", 1000)).bytes, 12.0 * 1000);
  const auto tol = problem.tolerance(adam);
  EXPECT_GT(tol.abs, 0.0);
  EXPECT_LT(tol.abs, 1e-5);  // a few roundings: far below a wrong update (~lr)
  const auto names = harness::Registry::instance().variant_names("optimizer");
  for (const char* want : {"cpu", "sgd", "adam", "adam_vectorized", "adam_fused"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  // Variants of the other update are skipped with a reason.
  const harness::Variant* sgd = harness::Registry::instance().find_variant("optimizer", "sgd");
  ASSERT_NE(sgd, nullptr);
  EXPECT_TRUE(sgd->constraint(adam).has_value());
  EXPECT_FALSE(sgd->constraint(optimizer_params("sgd", "single", 5)).has_value());
}

std::string load_error(const std::string& params) {
  const std::string yaml = "cases:\n  - problem: optimizer\n    params: " + params + "\n";
  try {
    harness::parse_suite(yaml, "t.yaml", harness::Registry::instance());
  } catch (const harness::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(OptimizerPlugin, BadInputIsAnInputErrorAtLoad) {
  EXPECT_NE(load_error("{n: 0}").find("out of range"), std::string::npos) << load_error("{n: 0}");
  EXPECT_NE(load_error("{n: 268435457}").find("out of range"), std::string::npos);
  EXPECT_NE(load_error("{beta2: 1.0}").find("out of range"), std::string::npos);
  EXPECT_NE(load_error("{update: adamw}").find("must be one of"), std::string::npos);
  EXPECT_NE(load_error("{layout: resnet}").find("must be one of"), std::string::npos);
  EXPECT_EQ(load_error("{update: [sgd, adam], n: [1, 2, 3, 268435456]}"), "(no error)");
}

}  // namespace
