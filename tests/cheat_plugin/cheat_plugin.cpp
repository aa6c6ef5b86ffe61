// A plugin of cheating variants (issue 33, "kernels that cheat"): problem `cheat`
// (out = 2 * x) with one honest variant per backend and one variant per cheat the
// harness must catch. Every cheater passes the check before timing; what gives it away:
//   cpu_cache, cuda_cache   remember their first output and hand it back: the re-check
//                           on fresh inputs after timing fails
//   claim: N (a parameter)  declares N flops per element, so any honest time is faster
//                           than the device's roof for the declared work: `suspicious`
//   cuda_side_stream        works on a stream of its own that the timing never waits
//                           for: `work outside the timed region`
// Loaded with --plugin cheat_plugin.so by tests/cheat_test.cpp; never built in.
#include <cstring>
#include <vector>

#include "cheat_kernels.cuh"
#include "harness/cuda_check.hpp"
#include "harness/plugin.hpp"

namespace {

using harness::Backend;

class CheatProblem final : public harness::Problem {
 public:
  std::string name() const override { return "cheat"; }
  std::string description() const override { return "out = 2*x, with variants that cheat on purpose (tests only)"; }
  std::vector<harness::ParamSpec> params() const override {
    return {harness::int_param("n", 4096, 1, 1 << 24, "elements"),
            harness::int_param("claim", 1, 1, std::int64_t{1} << 40, "flops declared per element (large: an impossible claim)"),
            harness::int_param("spin_us", 50, 0, 100000, "cuda_side_stream: microseconds each launch spins")};
  }
  std::vector<harness::OperandSpec> operands(const harness::Params& p) const override {
    const std::int64_t n = p.get_int("n");
    return {harness::input("x", harness::DType::f32, {n}, harness::uniform(-1, 1)),
            harness::output("out", harness::DType::f32, {n})};
  }
  harness::Work work(const harness::Params& p) const override {
    const double n = static_cast<double>(p.get_int("n"));
    return {n * static_cast<double>(p.get_int("claim")), 8 * n};
  }
  harness::Tolerance tolerance(const harness::Params&) const override { return {0, 0}; }
  std::string reference_variant(const harness::Params&) const override { return "cpu"; }
};

void check(cudaError_t e) {
  if (e != cudaSuccess) HARNESS_CUDA(e);
}

void add(harness::Registry& reg, const char* name, Backend b, const char* what, harness::LaunchFn fn) {
  reg.add_variant(harness::make_variant("cheat", name, b, std::move(fn)).description(what));
}

void honest_cpu(harness::LaunchContext& c) {
  const float* x = c.in<float>("x");
  float* out = c.out<float>("out");
  const std::size_t n = c.operands->count("x");
  for (std::size_t k = 0; k < n; ++k) out[k] = 2.0f * x[k];
}

void register_all(harness::Registry& reg) {
  reg.add_problem(std::make_unique<CheatProblem>());
  add(reg, "cpu", Backend::cpu, "honest host loop (the reference)", honest_cpu);
  add(reg, "cpu_cache", Backend::cpu, "computes once, then copies its first output back (a result cache)",
      [](harness::LaunchContext& c) {
        static std::vector<float> cache;  // one case per test run: no key needed to cheat
        const std::size_t n = c.operands->count("out");
        if (cache.size() != n) {
          honest_cpu(c);
          cache.assign(c.out<float>("out"), c.out<float>("out") + n);
        } else {
          std::memcpy(c.out<float>("out"), cache.data(), n * sizeof(float));
        }
      });
  add(reg, "cuda", Backend::cuda, "honest kernel", [](harness::LaunchContext& c) {
    check(cheat::launch_double(c.in<float>("x"), c.out<float>("out"), c.operands->count("x"), c.stream));
  });
  add(reg, "cuda_cache", Backend::cuda, "launches once per output buffer, then leaves the previous output in place",
      [](harness::LaunchContext& c) {
        static const float* done = nullptr;
        float* out = c.out<float>("out");
        if (out == done) return;
        check(cheat::launch_double(c.in<float>("x"), out, c.operands->count("x"), c.stream));
        done = out;
      });
  add(reg, "cuda_side_stream", Backend::cuda, "works on a stream of its own, never joined to the launch stream",
      [](harness::LaunchContext& c) {
        // Forked from the launch stream (it starts after the harness poisoned the output)
        // and never joined back: the bug of a variant that forgets the join. A blocking
        // stream, so the harness's synchronous read-back waits for it and the check passes;
        // the timing's end event on the launch stream does not wait.
        static cudaStream_t side = [] {
          cudaStream_t s = nullptr;
          check(cudaStreamCreate(&s));
          return s;
        }();
        static cudaEvent_t fork = [] {
          cudaEvent_t e = nullptr;
          check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
          return e;
        }();
        check(cudaEventRecord(fork, c.stream));
        check(cudaStreamWaitEvent(side, fork, 0));
        check(cheat::launch_double_slow(c.in<float>("x"), c.out<float>("out"), c.operands->count("x"),
                                        c.param_int("spin_us") * 1000, side));
      });
}

}  // namespace

HARNESS_PLUGIN(register_all)
