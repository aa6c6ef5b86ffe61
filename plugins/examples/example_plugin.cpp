// An out-of-tree plugin: a new problem (`saxpy`, y = a*x + y) with two CPU variants, and
// the `row_sum` family of docs/adding-a-family.md (row_sum.cpp). Build it as a shared
// library against the harness's public API and load it with
// `harness run --plugin example_plugin.so suite.yaml`.
#include <cmath>

#include "harness/plugin.hpp"
#include "row_sum.hpp"

#ifdef HARNESS_EXAMPLE_WRONG_ABI
// Pretend to be built against another version of the API (the tests load this one).
#undef HARNESS_PLUGIN_ABI_VERSION
#define HARNESS_PLUGIN_ABI_VERSION 999
#endif

namespace {

using harness::DType;

class SaxpyProblem final : public harness::Problem {
 public:
  std::string name() const override { return "saxpy"; }
  std::string description() const override { return "y = a*x + y over n floats (example plugin)"; }
  std::vector<harness::ParamSpec> params() const override {
    return {harness::int_param("n", 1 << 16, 1, 1 << 28, "elements"),
            harness::float_param("a", 2.0, std::nullopt, std::nullopt, "the scalar a")};
  }
  std::vector<harness::OperandSpec> operands(const harness::Params& p) const override {
    const std::int64_t n = p.get_int("n");
    return {harness::input("x", DType::f32, {n}, harness::uniform(-1, 1)),
            harness::input("y", DType::f32, {n}, harness::uniform(-1, 1)),
            harness::output("out", DType::f32, {n})};
  }
  harness::Work work(const harness::Params& p) const override {
    const double n = static_cast<double>(p.get_int("n"));
    return {2 * n, 12 * n};
  }
  harness::Tolerance tolerance(const harness::Params&) const override { return {1e-6, 1e-6}; }
  std::string tolerance_rule() const override { return "1e-6 abs + 1e-6 rel: one extra rounding at most"; }
  std::string reference_variant(const harness::Params&) const override { return "fused"; }
};

// out = a*x + y, one fma per element.
void fused(harness::LaunchContext& ctx) {
  const auto a = static_cast<float>(ctx.param_float("a"));
  const float *x = ctx.in<float>("x"), *y = ctx.in<float>("y");
  float* out = ctx.out<float>("out");
  for (std::size_t i = 0, n = ctx.operands->count("out"); i < n; ++i) out[i] = std::fma(a, x[i], y[i]);
}

// The same through a two-step multiply-add: another rounding, inside the tolerance.
void unfused(harness::LaunchContext& ctx) {
  const auto a = static_cast<float>(ctx.param_float("a"));
  const float *x = ctx.in<float>("x"), *y = ctx.in<float>("y");
  float* out = ctx.out<float>("out");
  for (std::size_t i = 0, n = ctx.operands->count("out"); i < n; ++i) {
    volatile float ax = a * x[i];
    out[i] = ax + y[i];
  }
}

void register_all(harness::Registry& registry) {
  registry.add_problem(std::make_unique<SaxpyProblem>());
  using harness::make_variant, harness::Backend;
  registry.add_variant(make_variant("saxpy", "fused", Backend::cpu, fused).description("std::fma per element"));
  registry.add_variant(make_variant("saxpy", "unfused", Backend::cpu, unfused).description("multiply, then add"));
  examples::register_row_sum(registry);
}

}  // namespace

HARNESS_PLUGIN(register_all)
