// The softmax family without a GPU: the double reference on known values and hostile rows,
// the plugin's cpu variant through the registry on small odd shapes (every input kind),
// and bad parameters as input errors at suite load.
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "family_support.hpp"
#include "harness/error.hpp"
#include "softmax/softmax.hpp"
#include "suite/suite.hpp"

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> softmax(std::vector<float> x, std::int64_t rows) {
  std::vector<float> y(x.size(), -1.0f);
  kernels::softmax::cpu(rows, static_cast<std::int64_t>(x.size()) / rows, x.data(), y.data());
  return y;
}

TEST(SoftmaxReference, KnownValues) {
  const auto y = softmax({0.0f, std::log(2.0f), 5.0f}, 1);  // 1 : 2 : e^5
  const double s = 3.0 + std::exp(5.0);
  EXPECT_NEAR(y[0], 1 / s, 1e-7);
  EXPECT_NEAR(y[1], std::exp(static_cast<double>(std::log(2.0f))) / s, 1e-7);
  EXPECT_NEAR(y[2], std::exp(5.0) / s, 1e-7);
  EXPECT_EQ(softmax({-3.5f}, 1)[0], 1.0f);  // a row of one element
  const auto two = softmax({1, 2, 3, 3, 2, 1}, 2);  // rows are independent
  EXPECT_EQ(two[0], two[5]);
  EXPECT_EQ(two[2], two[3]);
}

TEST(SoftmaxReference, HugeValuesDoNotOverflow) {
  const auto y = softmax({1e38f, 0.0f, 1e38f, -1e38f, 3e38f, -3e38f}, 2);
  EXPECT_EQ(y[0], 0.5f);
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_EQ(y[2], 0.5f);
  EXPECT_EQ(y[3], 0.0f);
  EXPECT_EQ(y[4], 1.0f);
  EXPECT_EQ(y[5], 0.0f);
}

TEST(SoftmaxReference, AllNegInfRowIsNanOtherMinusInfAreZero) {
  const auto y = softmax({-kInf, -kInf, -kInf, -kInf, 0.0f, -kInf}, 2);
  for (int j = 0; j < 3; ++j) EXPECT_TRUE(std::isnan(y[j])) << j;
  EXPECT_EQ(y[3], 0.0f);
  EXPECT_EQ(y[4], 1.0f);
  EXPECT_EQ(y[5], 0.0f);
}

harness::Params softmax_params(std::int64_t rows, std::int64_t cols, const std::string& inputs) {
  harness::Params p;
  p.set("rows", rows);
  p.set("cols", cols);
  p.set("inputs", inputs);
  return harness::test::params_of(harness::test::problem_named("softmax"), p);
}

// The cpu variant through the registry: outputs poisoned, then every element written;
// each row sums to 1 (or is NaN where the contract says so), and the hostile inputs
// look as documented (huge: 1/k on a row's k copies of 1e38).
TEST(SoftmaxPlugin, CpuVariantOnOddShapesAndHostileInputs) {
  const harness::Problem& problem = harness::test::problem_named("softmax");
  const harness::Variant* cpu = harness::Registry::instance().find_variant("softmax", "cpu");
  ASSERT_NE(cpu, nullptr);
  for (const char* inputs : {"uniform", "huge", "neg_inf"}) {
    for (const std::int64_t cols : {1, 2, 13, 33, 257}) {
      const std::int64_t rows = 7;
      const auto p = softmax_params(rows, cols, inputs);
      auto inst = problem.make_instance(p, 99);
      inst->prepare(harness::Backend::cpu);
      const float* x = inst->operands(harness::Backend::cpu)->in<float>("x");
      const auto out = harness::test::run_once(*cpu, *inst, p);
      ASSERT_EQ(out.size(), 1u);
      ASSERT_EQ(out[0].count(), static_cast<std::size_t>(rows * cols));
      const std::string at = std::string(inputs) + " cols=" + std::to_string(cols);
      for (std::int64_t r = 0; r < rows; ++r) {
        // All -inf: the rows r % 3 == 0 of neg_inf, and r % 3 == 1 when cols == 1.
        bool nan_row = true;
        int huge = 0;
        for (std::int64_t c = 0; c < cols; ++c) {
          huge += x[r * cols + c] == 1e38f;
          nan_row = nan_row && x[r * cols + c] == -kInf;
        }
        if (std::string(inputs) == "neg_inf" && r % 3 == 0) {
          EXPECT_TRUE(nan_row) << at << " r=" << r;
        }
        double sum = 0;
        for (std::int64_t c = 0; c < cols; ++c) {
          const std::size_t i = static_cast<std::size_t>(r * cols + c);
          ASSERT_FALSE(out[0].poisoned(i)) << at;
          const double y = out[0].value(i);
          if (nan_row) {
            EXPECT_EQ(x[i], -kInf) << at;
            EXPECT_TRUE(std::isnan(y)) << at << " r=" << r;
            continue;
          }
          ASSERT_TRUE(std::isfinite(y)) << at << " r=" << r << " c=" << c;
          EXPECT_GE(y, 0.0);
          if (x[i] == -kInf) {
            EXPECT_EQ(y, 0.0) << at;
          }
          if (huge > 0) {
            EXPECT_EQ(y, x[i] == 1e38f ? static_cast<double>(1.0f / static_cast<float>(huge)) : 0.0) << at;
          }
          sum += y;
        }
        if (!nan_row) {
          EXPECT_NEAR(sum, 1.0, 1e-6 * static_cast<double>(cols)) << at << " r=" << r;
        }
      }
    }
  }
}

TEST(SoftmaxPlugin, WorkToleranceAndVariants) {
  const harness::Problem& problem = harness::test::problem_named("softmax");
  const auto p = softmax_params(1300, 6880, "uniform");
  EXPECT_DOUBLE_EQ(problem.work(p).bytes, 8.0 * 1300 * 6880);
  EXPECT_DOUBLE_EQ(problem.tolerance(p).rel, (6880 + 128) * std::ldexp(1.0, -24));
  EXPECT_EQ(problem.reference_variant(p), "cpu");
  const auto names = harness::Registry::instance().variant_names("softmax");
  for (const char* want : {"cpu", "naive", "smem_max", "online", "warp_per_row", "block_per_row", "cudnn"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
}

std::string load_error(const std::string& params) {
  const std::string yaml = "cases:\n  - problem: softmax\n    params: " + params + "\n";
  try {
    harness::parse_suite(yaml, "t.yaml", harness::Registry::instance());
  } catch (const harness::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SoftmaxPlugin, BadInputIsAnInputErrorAtLoad) {
  EXPECT_NE(load_error("{rows: 0, cols: 13}").find("out of range"), std::string::npos) << load_error("{rows: 0}");
  EXPECT_NE(load_error("{rows: 3, cols: 0}").find("out of range"), std::string::npos);
  EXPECT_NE(load_error("{rows: 3, cols: 65537}").find("out of range"), std::string::npos);
  EXPECT_NE(load_error("{rows: 3, inputs: nan}").find("must be one of"), std::string::npos);
  EXPECT_NE(load_error("{rows: 16777216, cols: 65536}").find("more than 2^32"), std::string::npos)
      << load_error("{rows: 16777216, cols: 65536}");
  EXPECT_EQ(load_error("{rows: [1, 10400], cols: [1, 13, 6880, 65536]}"), "(no error)");
}

// bf16: the reference rounds the double result once to bf16; the plugin's dtype switches
// operands, bytes and tolerance, and the f32-only rungs say why they skip.
TEST(SoftmaxReference, Bf16RoundsTheDoubleResultOnce) {
  const float in[] = {0.0f, 1.0f, 5.0f, -kInf};
  std::vector<__nv_bfloat16> x(4), y(4);
  for (int i = 0; i < 4; ++i) x[i] = __float2bfloat16_rn(in[i]);
  kernels::softmax::cpu_bf16(1, 4, x.data(), y.data());
  const double s = 1.0 + std::exp(1.0) + std::exp(5.0);
  EXPECT_EQ(__bfloat162float(y[0]), __bfloat162float(__double2bfloat16(1.0 / s)));
  EXPECT_EQ(__bfloat162float(y[1]), __bfloat162float(__double2bfloat16(std::exp(1.0) / s)));
  EXPECT_EQ(__bfloat162float(y[2]), __bfloat162float(__double2bfloat16(std::exp(5.0) / s)));
  EXPECT_EQ(__bfloat162float(y[3]), 0.0f);
  const __nv_bfloat16 ninf[2] = {__float2bfloat16_rn(-kInf), __float2bfloat16_rn(-kInf)};
  __nv_bfloat16 out[2];
  kernels::softmax::cpu_bf16(1, 2, ninf, out);
  EXPECT_TRUE(std::isnan(__bfloat162float(out[0])));
}

TEST(SoftmaxPlugin, Bf16DtypeBytesToleranceAndConstraints) {
  const harness::Problem& problem = harness::test::problem_named("softmax");
  harness::Params q;
  q.set("rows", std::int64_t{1300});
  q.set("cols", std::int64_t{6880});
  q.set("dtype", std::string("bf16"));
  const auto p = harness::test::params_of(problem, q);
  EXPECT_DOUBLE_EQ(problem.work(p).bytes, 4.0 * 1300 * 6880);
  EXPECT_DOUBLE_EQ(problem.tolerance(p).rel, (6880 + 128) * std::ldexp(1.0, -24) + std::ldexp(1.0, -7));
  EXPECT_EQ(problem.operands(p)[0].dtype, harness::DType::bf16);
  EXPECT_EQ(problem.operands(p)[1].dtype, harness::DType::bf16);
  for (const char* f32_only : {"naive", "smem_max", "online", "warp_per_row", "block_per_row"}) {
    const harness::Variant* v = harness::Registry::instance().find_variant("softmax", f32_only);
    ASSERT_NE(v, nullptr) << f32_only;
    ASSERT_TRUE(v->constraint) << f32_only;
    const auto why = v->constraint(p);
    ASSERT_TRUE(why.has_value()) << f32_only;
    EXPECT_NE(why->find("f32 only"), std::string::npos) << *why;
    EXPECT_FALSE(v->constraint(softmax_params(1300, 6880, "uniform")).has_value()) << f32_only;
  }
  const harness::Variant* top = harness::Registry::instance().find_variant("softmax", "register_row");
  ASSERT_NE(top, nullptr);
  EXPECT_FALSE(top->constraint && top->constraint(p).has_value());
  // The cpu variant on bf16 huge values: 1/k on a row's k copies of the bf16 of 1e38.
  harness::Params h = q;
  h.set("rows", std::int64_t{5});
  h.set("cols", std::int64_t{33});
  h.set("inputs", std::string("huge"));
  const auto ph = harness::test::params_of(problem, h);
  auto inst = problem.make_instance(ph, 5);
  inst->prepare(harness::Backend::cpu);
  const auto* xb = inst->operands(harness::Backend::cpu)->in<__nv_bfloat16>("x");
  const harness::Variant* cpu = harness::Registry::instance().find_variant("softmax", "cpu");
  const auto out = harness::test::run_once(*cpu, *inst, ph);
  const float big = __bfloat162float(__float2bfloat16_rn(1e38f));
  for (std::int64_t r = 0; r < 5; ++r) {
    int k = 0;
    for (std::int64_t c = 0; c < 33; ++c) k += __bfloat162float(xb[r * 33 + c]) == big;
    for (std::int64_t c = 0; c < 33; ++c) {
      const double want = __bfloat162float(xb[r * 33 + c]) == big
                              ? static_cast<double>(__bfloat162float(__double2bfloat16(1.0 / k)))
                              : 0.0;
      if (k > 0) {
        EXPECT_EQ(out[0].value(static_cast<std::size_t>(r * 33 + c)), want) << r << " " << c;
      }
    }
  }
  EXPECT_NE(load_error("{rows: 3, dtype: f16}").find("must be one of"), std::string::npos);
}

}  // namespace
