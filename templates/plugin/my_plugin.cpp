// The plugin: one problem, `my_axpy` (out = a*x + y over n floats), and two variants:
//   my_axpy/cpu   a host loop (the reference)
//   my_axpy/cuda  the kernel of my_axpy_kernel.cu
// The harness allocates, fills (uniform in [-1, 1)), uploads, poisons and checks the
// operands declared below; the launch functions only compute.
#include <cmath>
#include <memory>

#include "harness/cuda_check.hpp"
#include "harness/plugin.hpp"
#include "my_axpy_kernel.cuh"

namespace {

using harness::DType;

class MyAxpy final : public harness::Problem {
 public:
  std::string name() const override { return "my_axpy"; }
  std::string description() const override { return "out = a*x + y over n floats (plugin template)"; }
  std::vector<harness::ParamSpec> params() const override {
    return {harness::int_param("n", 1 << 20, 1, std::int64_t{1} << 30, "elements"),
            harness::float_param("a", 1.5, std::nullopt, std::nullopt, "the scalar a")};
  }
  std::vector<harness::OperandSpec> operands(const harness::Params& p) const override {
    const std::int64_t n = p.get_int("n");
    return {harness::input("x", DType::f32, {n}, harness::uniform(-1, 1)),
            harness::input("y", DType::f32, {n}, harness::uniform(-1, 1)),
            harness::output("out", DType::f32, {n})};
  }
  // 2 flops per element; x and y read, out written: 12 bytes.
  harness::Work work(const harness::Params& p) const override {
    const double n = static_cast<double>(p.get_int("n"));
    return {2 * n, 12 * n};
  }
  // The reference rounds a*x + y (computed in double) to float; the kernel's fmaf rounds
  // the exact value once: they differ by at most one float ulp (2^-23 relative).
  harness::Tolerance tolerance(const harness::Params&) const override { return {1e-6, 1e-6}; }
  std::string tolerance_rule() const override { return "1e-6 abs + 1e-6 rel: one float rounding apart at most"; }
  std::string reference_variant(const harness::Params&) const override { return "cpu"; }
};

// The reference: double arithmetic, one rounding to float at the end.
void cpu(harness::LaunchContext& ctx) {
  const double a = ctx.param_float("a");
  const float *x = ctx.in<float>("x"), *y = ctx.in<float>("y");
  float* out = ctx.out<float>("out");
  const std::int64_t n = ctx.param_int("n");
  for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(a * x[i] + y[i]);
}

// The kernel on the harness's stream (device pointers: ctx.in/out give the operands of
// the variant's backend).
void cuda(harness::LaunchContext& ctx) {
  HARNESS_CUDA(my_plugin::my_axpy_cuda(ctx.param_int("n"), static_cast<float>(ctx.param_float("a")),
                                       ctx.in<float>("x"), ctx.in<float>("y"), ctx.out<float>("out"), ctx.stream));
}


void register_all(harness::Registry& registry) {
  registry.add_problem(std::make_unique<MyAxpy>());
  using harness::make_variant, harness::Backend;
  registry.add_variant(make_variant("my_axpy", "cpu", Backend::cpu, cpu).description("host loop in double (reference)"));
  registry.add_variant(make_variant("my_axpy", "cuda", Backend::cuda, cuda).description("grid-stride fmaf kernel"));
}

}  // namespace

HARNESS_PLUGIN(register_all)
