// A plugin of broken variants for the reliability tests: problem `broken` (out = 2 * x)
// with one correct variant per backend and one variant per failure the harness must
// contain. Loaded with --plugin broken_plugin.so; never part of the built-in registry.
#include <csignal>
#include <cstdlib>
#include <stdexcept>
#include <thread>
#include <vector>

#include "broken_kernels.cuh"
#include "harness/check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/plugin.hpp"
#include "harness/random.hpp"

namespace {

using harness::Backend;

class BrokenInstance final : public harness::Instance {
 public:
  BrokenInstance(std::size_t n, std::uint64_t seed) : n_(n), x_(n), out_(n) { harness::fill_uniform(x_, seed, 1, -1, 1); }
  void prepare(Backend b) override {
    if (b != Backend::cuda || d_out_.size() == n_) return;
    d_x_ = harness::DeviceBuffer<float>(n_);
    d_out_ = harness::DeviceBuffer<float>(n_);
    d_x_.upload(x_);
  }
  void reset_outputs(Backend b, cudaStream_t s) override {
    if (b == Backend::cpu) harness::poison_host(out_);
    else d_out_.poison(s);
  }
  std::vector<harness::Output> read_outputs(Backend b) override {
    if (b == Backend::cpu) return {{"out", out_}};
    std::vector<float> v(n_);
    d_out_.download(v);
    return {{"out", v}};
  }
  std::size_t n_;
  std::vector<float> x_, out_;
  harness::DeviceBuffer<float> d_x_, d_out_;
};

class BrokenProblem final : public harness::Problem {
 public:
  std::string name() const override { return "broken"; }
  std::string description() const override { return "out = 2*x, with variants that fail on purpose (tests only)"; }
  std::vector<harness::ParamSpec> params() const override { return {harness::int_param("n", 4096, 1, 1 << 24, "elements")}; }
  std::unique_ptr<harness::Instance> make_instance(const harness::Params& p, std::uint64_t seed) const override {
    return std::make_unique<BrokenInstance>(static_cast<std::size_t>(p.get_int("n")), seed);
  }
  harness::Work work(const harness::Params& p) const override {
    const double n = static_cast<double>(p.get_int("n"));
    return {n, 8 * n};
  }
  harness::Tolerance tolerance(const harness::Params&) const override { return {0, 0}; }
  std::string reference_variant(const harness::Params&) const override { return "cpu"; }
};

BrokenInstance& as(harness::Instance& i) { return static_cast<BrokenInstance&>(i); }

// HARNESS_BROKEN_SLOWDOWN=N makes the correct variants (cpu, cuda) do their work N times:
// a deliberately slowed build, for showing that `harness compare` flags it.
int slowdown() {
  const char* env = std::getenv("HARNESS_BROKEN_SLOWDOWN");
  const int n = env ? std::atoi(env) : 1;
  return n > 1 ? n : 1;
}

void check(cudaError_t e) {
  if (e != cudaSuccess) HARNESS_CUDA(e);
}

void add(harness::Registry& reg, const char* name, Backend b, const char* what, harness::LaunchFn fn) {
  reg.add_variant(harness::make_variant("broken", name, b, std::move(fn)).description(what));
}

void register_all(harness::Registry& reg) {
  reg.add_problem(std::make_unique<BrokenProblem>());
  add(reg, "cpu", Backend::cpu, "correct host loop", [](harness::Instance& i, harness::LaunchContext&) {
    auto& s = as(i);
    for (int rep = slowdown(); rep > 0; --rep) {
      for (std::size_t k = 0; k < s.n_; ++k) s.out_[k] = 2.0f * s.x_[k];
      asm volatile("" ::: "memory");  // keep every repetition
    }
  });
  add(reg, "cpu_wrong", Backend::cpu, "off by one in every element", [](harness::Instance& i, harness::LaunchContext&) {
    auto& s = as(i);
    for (std::size_t k = 0; k < s.n_; ++k) s.out_[k] = 2.0f * s.x_[k] + 1.0f;
  });
  add(reg, "cpu_throws", Backend::cpu, "throws an exception", [](harness::Instance&, harness::LaunchContext&) {
    throw std::runtime_error("broken/cpu_throws throws on purpose");
  });
  add(reg, "cpu_abort", Backend::cpu, "calls abort()", [](harness::Instance&, harness::LaunchContext&) { std::abort(); });
  add(reg, "cpu_segfault", Backend::cpu, "writes through a null pointer", [](harness::Instance&, harness::LaunchContext&) {
    std::raise(SIGSEGV);
  });
  add(reg, "cpu_hang", Backend::cpu, "never returns", [](harness::Instance&, harness::LaunchContext&) {
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  });
  add(reg, "cuda", Backend::cuda, "correct kernel", [](harness::Instance& i, harness::LaunchContext& c) {
    auto& s = as(i);
    for (int rep = slowdown(); rep > 0; --rep) check(broken::launch_good(s.d_x_.data(), s.d_out_.data(), s.n_, c.stream));
  });
  add(reg, "cuda_oob", Backend::cuda, "writes 1 GiB past its output", [](harness::Instance& i, harness::LaunchContext& c) {
    auto& s = as(i);
    check(broken::launch_out_of_bounds(s.d_out_.data(), s.n_, c.stream));
  });
  add(reg, "cuda_hang", Backend::cuda, "a kernel that spins forever", [](harness::Instance& i, harness::LaunchContext& c) {
    auto& s = as(i);
    check(broken::launch_infinite_loop(s.d_out_.data(), s.n_, c.stream));
  });
  add(reg, "cuda_assert", Backend::cuda, "a failing device assert", [](harness::Instance& i, harness::LaunchContext& c) {
    auto& s = as(i);
    check(broken::launch_device_assert(s.d_out_.data(), s.n_, c.stream));
  });
  add(reg, "cuda_nan", Backend::cuda, "NaN everywhere", [](harness::Instance& i, harness::LaunchContext& c) {
    auto& s = as(i);
    check(broken::launch_nan(s.d_out_.data(), s.n_, c.stream));
  });
}

}  // namespace

HARNESS_PLUGIN(register_all)
