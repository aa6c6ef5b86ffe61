// Small plugins for the loader's tests (tests/plugin_loader_test.cpp), one library per
// HARNESS_FIXTURE value:
//   twin       problem `twin` + twin/cpu (built twice: twin_a.so, twin_b.so -> a clash
//              between two files)
//   twin_var   only a variant twin/cpu (clashes with twin_a's variant)
//   clash      a problem named `stream`, like the built-in one
//   throws     registers problem `half`, then throws (must be rolled back)
//   layout     ABI version 5 but a Variant of another size (hand-written entry points)
//   dir_probe  problem `dir_probe` + dir_probe/cpu (loaded through --plugin-dir)
#include <cstring>
#include <stdexcept>

#include "harness/plugin.hpp"

namespace {

class ProbeProblem final : public harness::Problem {
 public:
  explicit ProbeProblem(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  std::string description() const override { return "a loader test fixture: out = x"; }
  std::vector<harness::ParamSpec> params() const override {
    return {harness::int_param("n", 16, 1, 1 << 20, "elements")};
  }
  std::vector<harness::OperandSpec> operands(const harness::Params& p) const override {
    const std::int64_t n = p.get_int("n");
    return {harness::input("x", harness::DType::f32, {n}, harness::uniform(-1, 1)),
            harness::output("out", harness::DType::f32, {n})};
  }
  harness::Work work(const harness::Params& p) const override {
    return {0, 8.0 * static_cast<double>(p.get_int("n"))};
  }
  harness::Tolerance tolerance(const harness::Params&) const override { return {0, 0}; }
  std::string reference_variant(const harness::Params&) const override { return "cpu"; }

 private:
  std::string name_;
};

// out = x
void copy(harness::LaunchContext& ctx) {
  const float* x = ctx.in<float>("x");
  float* out = ctx.out<float>("out");
  std::memcpy(out, x, ctx.operands->count("out") * sizeof(float));
}

harness::Variant cpu_variant(const char* problem) {
  return harness::make_variant(problem, "cpu", harness::Backend::cpu, copy).description("memcpy");
}

[[maybe_unused]] void register_all(harness::Registry& registry) {
#if HARNESS_FIXTURE_twin
  registry.add_problem(std::make_unique<ProbeProblem>("twin"));
  registry.add_variant(cpu_variant("twin"));
#elif HARNESS_FIXTURE_twin_var
  registry.add_variant(cpu_variant("twin"));
#elif HARNESS_FIXTURE_clash
  registry.add_problem(std::make_unique<ProbeProblem>("stream"));
#elif HARNESS_FIXTURE_throws
  registry.add_problem(std::make_unique<ProbeProblem>("half"));
  registry.add_variant(cpu_variant("half"));
  throw std::runtime_error("cannot open my_config.yaml\n(the fixture always throws)");
#elif HARNESS_FIXTURE_dir_probe
  registry.add_problem(std::make_unique<ProbeProblem>("dir_probe"));
  registry.add_variant(cpu_variant("dir_probe"));
#elif HARNESS_FIXTURE_layout
  registry.add_problem(std::make_unique<ProbeProblem>("skewed"));
#else
#error "HARNESS_FIXTURE_<kind> must be defined"
#endif
}

}  // namespace

#if HARNESS_FIXTURE_layout
// What a plugin compiled against headers whose Variant had one more pointer member would
// export: the right ABI number, another layout.
namespace {
harness::detail::TypeLayout skewed[harness::detail::kPluginLayoutCount];
}
extern "C" __attribute__((visibility("default"))) int harness_plugin_abi_version() { return HARNESS_PLUGIN_ABI_VERSION; }
extern "C" __attribute__((visibility("default"))) int harness_plugin_layout(const harness::detail::TypeLayout** table) {
  for (int i = 0; i < harness::detail::kPluginLayoutCount; ++i) skewed[i] = harness::detail::kPluginLayout[i];
  skewed[0].size += 8;  // harness::Variant
  *table = skewed;
  return harness::detail::kPluginLayoutCount;
}
extern "C" __attribute__((visibility("default"))) void harness_plugin_register(harness::Registry* registry) {
  register_all(*registry);
}
#else
HARNESS_PLUGIN(register_all)
#endif
