// An out-of-tree plugin: a new problem (`saxpy`, y = a*x + y) with a CPU variant, and an
// extra variant of the built-in `stream` problem. Build it as a shared library against
// harness_core and load it with `harness run --plugin example_plugin.so suite.yaml`.
#include <cmath>
#include <vector>

#include "harness/check.hpp"
#include "harness/plugin.hpp"
#include "harness/random.hpp"

#ifdef HARNESS_EXAMPLE_WRONG_ABI
// Pretend to be built against another version of the API (the tests load this one).
#undef HARNESS_PLUGIN_ABI_VERSION
#define HARNESS_PLUGIN_ABI_VERSION 999
#endif

namespace {

class SaxpyInstance final : public harness::Instance {
 public:
  SaxpyInstance(std::size_t n, std::uint64_t seed) : x_(n), y_(n), out_(n) {
    harness::fill_uniform(x_, seed, 1, -1.0f, 1.0f);
    harness::fill_uniform(y_, seed, 2, -1.0f, 1.0f);
  }
  void prepare(harness::Backend) override {}
  void reset_outputs(harness::Backend, cudaStream_t) override { harness::poison_host(out_); }
  std::vector<harness::Output> read_outputs(harness::Backend) override { return {{"y", out_}}; }

  // out = a*x + y, one fma per element.
  void run(float a) {
    for (std::size_t i = 0; i < out_.size(); ++i) out_[i] = std::fma(a, x_[i], y_[i]);
  }
  // The same through a two-step multiply-add: another rounding, inside the tolerance.
  void run_unfused(float a) {
    for (std::size_t i = 0; i < out_.size(); ++i) {
      volatile float ax = a * x_[i];
      out_[i] = ax + y_[i];
    }
  }

 private:
  std::vector<float> x_, y_, out_;
};

class SaxpyProblem final : public harness::Problem {
 public:
  std::string name() const override { return "saxpy"; }
  std::string description() const override { return "y = a*x + y over n floats (example plugin)"; }
  std::vector<harness::ParamSpec> params() const override {
    return {harness::int_param("n", 1 << 16, 1, 1 << 28, "elements"),
            harness::float_param("a", 2.0, std::nullopt, std::nullopt, "the scalar a")};
  }
  std::unique_ptr<harness::Instance> make_instance(const harness::Params& p, std::uint64_t seed) const override {
    return std::make_unique<SaxpyInstance>(static_cast<std::size_t>(p.get_int("n")), seed);
  }
  harness::Work work(const harness::Params& p) const override {
    const double n = static_cast<double>(p.get_int("n"));
    return {2 * n, 12 * n};
  }
  harness::Tolerance tolerance(const harness::Params&) const override { return {1e-6, 1e-6}; }
  std::string tolerance_rule() const override { return "1e-6 abs + 1e-6 rel: one extra rounding at most"; }
  std::string reference_variant(const harness::Params&) const override { return "fused"; }
};

float scalar(const harness::LaunchContext& ctx) { return static_cast<float>(ctx.params->get_float("a")); }

void register_all(harness::Registry& registry) {
  registry.add_problem(std::make_unique<SaxpyProblem>());
  registry.add_variant({"saxpy", "fused", harness::Backend::cpu, "std::fma per element",
                        [](harness::Instance& i, harness::LaunchContext& ctx) {
                          static_cast<SaxpyInstance&>(i).run(scalar(ctx));
                        },
                        nullptr, nullptr});
  registry.add_variant({"saxpy", "unfused", harness::Backend::cpu, "multiply, then add",
                        [](harness::Instance& i, harness::LaunchContext& ctx) {
                          static_cast<SaxpyInstance&>(i).run_unfused(scalar(ctx));
                        },
                        nullptr, nullptr});
}

}  // namespace

HARNESS_PLUGIN(register_all)
