// Problems that cannot fit device memory are skipped before anything is allocated
// (label gpu; skipped with the reason where no CUDA device exists). The runner asks
// Problem::device_bytes before it builds an instance, and Variant::workspace_bytes before
// a variant runs.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>

#include "types/environment.hpp"
#include "harness/error.hpp"
#include "harness/registry.hpp"
#include "run/runner.hpp"
#include "suite/suite.hpp"

namespace harness {
namespace {

std::atomic<int> g_instances{0};
std::atomic<int> g_launches{0};

class TinyInstance final : public Instance {
 public:
  TinyInstance() { ++g_instances; }
  void prepare(Backend) override {}
  void reset_outputs(Backend, cudaStream_t) override {}
  std::vector<Output> read_outputs(Backend) override { return {{"x", {1.0f}}}; }
};

// `huge`: inputs and outputs of 2^60 bytes. Reference: a cuda variant, so the check is
// the one before the instance is built.
class HugeProblem final : public Problem {
 public:
  std::string name() const override { return "hostile_huge"; }
  std::string description() const override { return "needs 2^60 bytes of device memory (hostile_gpu_test)"; }
  std::vector<ParamSpec> params() const override { return {int_param("n", 1, 1, 10, "unused")}; }
  std::unique_ptr<Instance> make_instance(const Params&, std::uint64_t) const override {
    return std::make_unique<TinyInstance>();
  }
  Work work(const Params&) const override { return {1, 1}; }
  Tolerance tolerance(const Params&) const override { return {}; }
  std::string reference_variant(const Params&) const override { return "cuda"; }
  std::size_t device_bytes(const Params&) const override { return std::size_t{1} << 60; }
};

// `small`: tiny inputs, a cpu reference, and cuda variants whose workspace is 2^60 bytes
// or overflows 64-bit arithmetic.
class SmallProblem final : public Problem {
 public:
  std::string name() const override { return "hostile_small"; }
  std::string description() const override { return "a cuda variant wants a 2^60-byte workspace (hostile_gpu_test)"; }
  std::vector<ParamSpec> params() const override { return {int_param("n", 1, 1, 10, "unused")}; }
  std::unique_ptr<Instance> make_instance(const Params&, std::uint64_t) const override {
    return std::make_unique<TinyInstance>();
  }
  Work work(const Params&) const override { return {1, 1}; }
  Tolerance tolerance(const Params&) const override { return {}; }
  std::string reference_variant(const Params&) const override { return "cpu"; }
  std::size_t device_bytes(const Params&) const override { return 64; }
};

void count_launch(Instance&, LaunchContext&) { ++g_launches; }
std::size_t huge_workspace(const Params&) { return std::size_t{1} << 60; }

HARNESS_REGISTER_PROBLEM(HugeProblem);
HARNESS_REGISTER_VARIANT(hostile_huge, cuda, cuda, "counts launches", count_launch);
HARNESS_REGISTER_PROBLEM(SmallProblem);
HARNESS_REGISTER_VARIANT(hostile_small, cpu, cpu, "the reference", [](Instance&, LaunchContext&) {});
HARNESS_REGISTER_VARIANT_FULL(hostile_small, greedy, cuda, "declares a 2^60-byte workspace", count_launch, nullptr,
                              huge_workspace);

std::vector<Result> run(const std::string& yaml) {
  const Suite suite = parse_suite(yaml, "hostile.yaml", Registry::instance());
  RunOptions options;
  options.suite_name = "hostile";
  options.profile = false;
  Runner runner(options, probe_device(0));
  return runner.run(plan(suite, options), {});
}

TEST(DeviceMemory, AProblemLargerThanTheDeviceIsSkippedBeforeAllocating) {
  const DeviceInfo device = probe_device(0);
  if (!device.available) GTEST_SKIP() << device.unavailable_reason;
  g_instances = 0;
  g_launches = 0;
  const auto results = run(R"(
settings: {warmup: 0, min_samples: 1, min_time: 0, max_time: 0.01}
cases: [{problem: hostile_huge}]
)");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, Status::skipped);
  EXPECT_EQ(results[0].reason.rfind("out of memory (needs 1073741824.00 GiB, free ", 0), 0u) << results[0].reason;
  EXPECT_EQ(g_instances.load(), 0);  // no inputs were built
  EXPECT_EQ(g_launches.load(), 0);
}

TEST(DeviceMemory, AVariantWhoseWorkspaceCannotFitIsSkippedBeforeItRuns) {
  const DeviceInfo device = probe_device(0);
  if (!device.available) GTEST_SKIP() << device.unavailable_reason;
  g_launches = 0;
  const auto results = run(R"(
settings: {warmup: 0, min_samples: 1, min_time: 0, max_time: 0.01}
cases: [{problem: hostile_small, variants: [greedy]}]
)");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, Status::skipped);
  EXPECT_EQ(results[0].reason.rfind("out of memory (needs 1073741824.00 GiB, free ", 0), 0u) << results[0].reason;
  EXPECT_EQ(g_launches.load(), 0);
}

}  // namespace
}  // namespace harness
