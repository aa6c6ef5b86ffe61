// libFuzzer target: the suite loader on arbitrary bytes, against the real registry (every
// built-in problem and variant is linked in). The contract: parse_suite either returns a
// suite or throws harness::InputError; anything else (another exception, a crash, UB, a
// leak, runaway memory) is a bug. For a suite that loads, what the runner derives from it
// before any GPU work (result names, work, tolerances, memory, constraints) must hold too.
//
//   build/fuzz/tests/fuzz/fuzz_suite -max_total_time=60 CORPUS_DIR suites tests/data/suites
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/error.hpp"
#include "harness/registry.hpp"
#include "suite/suite.hpp"

namespace {

// Besides the built-in problems (all bounded), one with unbounded parameters, as a plugin
// may declare them: sweeps over it reach the ends of int64 and double.
class UnboundedProblem final : public harness::Problem {
 public:
  std::string name() const override { return "fuzz_unbounded"; }
  std::string description() const override { return "unbounded parameters (fuzz_suite)"; }
  std::vector<harness::ParamSpec> params() const override {
    return {harness::int_param("i", 1, std::nullopt, std::nullopt, "any integer"),
            harness::float_param("x", 1.0, std::nullopt, std::nullopt, "any number"),
            harness::string_param("s", "", "any string")};
  }
  std::unique_ptr<harness::Instance> make_instance(const harness::Params&, std::uint64_t) const override {
    return nullptr;
  }
  harness::Work work(const harness::Params&) const override { return {}; }
  harness::Tolerance tolerance(const harness::Params&) const override { return {}; }
  std::string reference_variant(const harness::Params&) const override { return "cpu"; }
};
HARNESS_REGISTER_PROBLEM(UnboundedProblem);
HARNESS_REGISTER_VARIANT(fuzz_unbounded, cpu, cpu, "never runs", [](harness::Instance&, harness::LaunchContext&) {});

// Everything the runner asks of a loaded case before it allocates anything.
void derive(const harness::Suite& suite) {
  for (const auto& c : suite.cases) {
    (void)c.id();
    (void)c.problem->work(c.params);
    (void)c.problem->tolerance(c.params);
    (void)c.problem->reference_variant(c.params);
    (void)c.problem->device_bytes(c.params);
    for (const harness::Variant* v : c.variants) {
      (void)harness::result_name(c, *v);
      if (v->constraint) (void)v->constraint(c.params);
      if (v->workspace_bytes && !(v->constraint && v->constraint(c.params))) (void)v->workspace_bytes(c.params);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  harness::Suite suite;
  try {
    suite = harness::parse_suite(text, "fuzz.yaml", harness::Registry::instance());
  } catch (const harness::InputError&) {
    return 0;  // the one way to refuse input
  }
  derive(suite);  // a loaded suite must not make these throw
  return 0;
}
