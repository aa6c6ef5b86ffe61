// The row_sum family of docs/adding-a-family.md, written on the operand API in the
// example plugin: loaded like any out-of-tree plugin, its i32 output is checked exactly
// and its bf16 output within its tolerance, and variants that break either fail.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include <cuda_bf16.h>

#include "harness/registry.hpp"
#include "plugin/plugin_loader.hpp"
#include "types/environment.hpp"
#include "run/runner.hpp"
#include "suite/suite.hpp"
#include "test_support.hpp"

namespace {

using namespace harness;

const std::string kPlugin = std::string(HARNESS_BINARY_DIR) + "/plugins/example_plugin.so";

// Runs the registered reference first, then spoils one output.
void off_by_one_integer(LaunchContext& ctx) {
  Registry::instance().find_variant("row_sum", "cpu")->launch(ctx);
  ctx.out<std::int32_t>("isum")[0] += 1;
}

// Accumulates in bf16 (rounding after every add): integers stay exact, the bf16 sums
// drift far beyond one ulp on long rows.
void bf16_accumulation(LaunchContext& ctx) {
  Registry::instance().find_variant("row_sum", "cpu")->launch(ctx);
  const auto rows = ctx.param_int("rows"), cols = ctx.param_int("cols");
  const __nv_bfloat16* xb = ctx.in<__nv_bfloat16>("xb");
  __nv_bfloat16* bsum = ctx.out<__nv_bfloat16>("bsum");
  for (std::int64_t r = 0; r < rows; ++r) {
    __nv_bfloat16 s = __float2bfloat16_rn(0.0f);
    for (std::int64_t c = 0; c < cols; ++c)
      s = __float2bfloat16_rn(__bfloat162float(s) + __bfloat162float(xb[r * cols + c]));
    bsum[r] = s;
  }
}

class RowSum : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    Registry& reg = Registry::instance();
    if (reg.find_problem("row_sum")) return;
    load_plugin(kPlugin, reg);
    reg.add_variant(make_variant("row_sum", "int_off_by_one", Backend::cpu, off_by_one_integer).description("test: isum[0] + 1"));
    reg.add_variant(make_variant("row_sum", "bf16_accumulation", Backend::cpu, bf16_accumulation)
                        .description("test: sums rounded to bf16 per add"));
  }

  static std::vector<Result> run(const std::string& variants) {
    const Suite suite = load_suite(std::string(HARNESS_SOURCE_DIR) + "/tests/data/suites/row_sum.yaml", Registry::instance());
    RunOptions options;
    options.suite_name = suite.name;
    options.profile = false;
    options.variants = {variants};
    Runner runner(options, probe_device(0));
    return runner.run(plan(suite, options), {});
  }
};

TEST_F(RowSum, OperandsAreDeclaredWithTheirDtypes) {
  const Problem* p = Registry::instance().find_problem("row_sum");
  ASSERT_NE(p, nullptr);
  const auto ops = p->operands(with_defaults(p->params(), {}));
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[0].dtype, DType::i32);
  EXPECT_EQ(ops[1].dtype, DType::bf16);
  EXPECT_EQ(ops[2].role, Role::output);
  EXPECT_EQ(ops[3].count(), 1024u);
}

TEST_F(RowSum, TheReversedSumPassesBothChecks) {
  const auto results = run("cpu_reversed");
  ASSERT_EQ(results.size(), 9u);
  for (const auto& r : results) {
    EXPECT_EQ(r.status, Status::passed) << r.name << ": " << r.reason;
    ASSERT_TRUE(r.check.has_value());
    EXPECT_EQ(r.check->elements, 2 * static_cast<std::size_t>(r.params.get_int("rows")));  // isum and bsum
    EXPECT_EQ(r.check->unwritten, 0u);
  }
}

TEST_F(RowSum, AnIntegerOffByOneFailsTheExactCheck) {
  for (const auto& r : run("int_off_by_one")) {
    EXPECT_EQ(r.status, Status::failed) << r.name;
    ASSERT_TRUE(r.check.has_value());
    EXPECT_EQ(r.check->mismatches, 1u) << r.check->summary();
    EXPECT_NE(r.check->worst.find("isum[0]"), std::string::npos) << r.check->worst;
    EXPECT_FALSE(r.timing.has_value());  // a failing variant is never timed
  }
}

TEST_F(RowSum, Bf16AccumulationFailsTheBf16ToleranceOnLongRows) {
  for (const auto& r : run("bf16_accumulation")) {
    // One long row may land within the tolerance by chance; 37 of them do not.
    const bool long_rows = r.params.get_int("cols") >= 999 && r.params.get_int("rows") >= 37;
    const bool single_values = r.params.get_int("cols") == 1;  // nothing to accumulate
    if (long_rows) {
      EXPECT_EQ(r.status, Status::failed) << r.name;
      EXPECT_NE(r.check->worst.find("bsum["), std::string::npos) << r.check->worst;
    }
    if (single_values) {
      EXPECT_EQ(r.status, Status::passed) << r.name << " " << r.reason;
    }
  }
}

TEST_F(RowSum, TheCudaVariantRunsOrIsSkippedWithTheReason) {
  for (const auto& r : run("cuda")) {
    if (test::have_device()) {
      EXPECT_EQ(r.status, Status::passed) << r.name << ": " << r.reason;
    } else {
      EXPECT_EQ(r.status, Status::skipped) << r.name;
    }
  }
}

}  // namespace
