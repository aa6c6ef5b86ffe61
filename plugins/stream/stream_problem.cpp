// The `stream` problem: STREAM's copy, scale, add and triad over n floats.
// Memory bound by construction, so its cuda variant measures the device's bandwidth roof
// and its cpu variant exercises the whole pipeline on a machine without a GPU.
#include <algorithm>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "harness/check.hpp"
#include "harness/checked.hpp"
#include "harness/device_buffer.hpp"
#include "harness/error.hpp"
#include "harness/random.hpp"
#include "harness/registry.hpp"
#include "stream/stream.hpp"

namespace {

using harness::Backend;
using kernels::stream::Op;

Op parse_op(const std::string& name) {
  if (name == "copy") return Op::copy;
  if (name == "scale") return Op::scale;
  if (name == "add") return Op::add;
  return Op::triad;
}

// Arrays an operation reads: copy and scale read x; add and triad read x and y.
int arrays_read(Op op) { return (op == Op::copy || op == Op::scale) ? 1 : 2; }

constexpr float kScalar = 3.0f;  // STREAM's q

class StreamInstance final : public harness::Instance {
 public:
  StreamInstance(const harness::Params& params, std::uint64_t seed)
      : op_(parse_op(params.get_string("op"))),
        n_(harness::size_product("stream n", params.get_int("n"))),
        x_(n_), y_(n_), out_cpu_(n_) {
    harness::fill_uniform(x_, seed, 1, -1.0f, 1.0f);
    harness::fill_uniform(y_, seed, 2, -1.0f, 1.0f);
  }

  void prepare(Backend backend) override {
    if (backend != Backend::cuda || d_out_.size() == n_) return;
    d_x_ = harness::DeviceBuffer<float>(n_);
    d_y_ = harness::DeviceBuffer<float>(n_);
    d_out_ = harness::DeviceBuffer<float>(n_);
    d_x_.upload(x_);
    d_y_.upload(y_);
  }

  void reset_outputs(Backend backend, cudaStream_t stream) override {
    if (backend == Backend::cpu) harness::poison_host(out_cpu_);
    else d_out_.poison(stream);
  }

  std::vector<harness::Output> read_outputs(Backend backend) override {
    harness::Output out{"out", {}};
    if (backend == Backend::cpu) {
      out.values = out_cpu_;
    } else {
      out.values.resize(n_);
      d_out_.download(out.values);
    }
    return {std::move(out)};
  }

  std::size_t device_bytes() const override { return d_x_.bytes() + d_y_.bytes() + d_out_.bytes(); }

  void run_cpu() {
    kernels::stream::run_cpu(op_, n_, kScalar, x_.data(), y_.data(), out_cpu_.data(),
                             std::max(1u, std::thread::hardware_concurrency()));
  }
  void run_cuda(cudaStream_t stream) {
    HARNESS_CUDA(kernels::stream::launch(op_, n_, kScalar, d_x_.data(), d_y_.data(),
                                         d_out_.data(), stream));
  }

 private:
  Op op_;
  std::size_t n_;
  std::vector<float> x_, y_, out_cpu_;
  harness::DeviceBuffer<float> d_x_, d_y_, d_out_;
};

class StreamProblem final : public harness::Problem {
 public:
  std::string name() const override { return "stream"; }
  std::string description() const override {
    return "STREAM copy/scale/add/triad over n floats (memory bound)";
  }
  std::vector<harness::ParamSpec> params() const override {
    return {
        harness::enum_param("op", "triad", {"copy", "scale", "add", "triad"},
                            "copy: out=x; scale: out=q*x; add: out=x+y; triad: out=x+q*y"),
        harness::int_param("n", 1 << 24, 1, std::int64_t{1} << 34, "elements per array"),
    };
  }
  std::unique_ptr<harness::Instance> make_instance(const harness::Params& params,
                                                   std::uint64_t seed) const override {
    return std::make_unique<StreamInstance>(params, seed);
  }
  harness::Work work(const harness::Params& params) const override {
    const Op op = parse_op(params.get_string("op"));
    const double n = static_cast<double>(params.get_int("n"));
    const double flops_per = op == Op::copy ? 0 : (op == Op::triad ? 2 : 1);
    return {flops_per * n, 4.0 * n * (arrays_read(op) + 1)};
  }
  // Each element is one or two float operations with the same rounding on both sides
  // (fmaf on the device, std::fma on the host), so results agree to the last bit.
  harness::Tolerance tolerance(const harness::Params&) const override { return {0.0, 0.0}; }
  std::string tolerance_rule() const override {
    return "exact: one rounding per element on both backends (fma for triad)";
  }
  std::string reference_variant(const harness::Params&) const override { return "cpu"; }
  std::size_t device_bytes(const harness::Params& params) const override {
    return harness::size_product("stream device bytes (3 arrays of n floats)", 3, sizeof(float),
                                 params.get_int("n"));
  }
  std::optional<std::string> reject(const harness::Params& params) const override {
    try {
      (void)device_bytes(params);
    } catch (const harness::InputError& e) {
      return e.what();
    }
    return std::nullopt;
  }
};

StreamInstance& as_stream(harness::Instance& instance) {
  return static_cast<StreamInstance&>(instance);
}

}  // namespace

HARNESS_REGISTER_PROBLEM(StreamProblem);
HARNESS_REGISTER_VARIANT(stream, cpu, cpu, "host loop over std::thread workers",
                         [](harness::Instance& i, harness::LaunchContext&) { as_stream(i).run_cpu(); });
HARNESS_REGISTER_VARIANT(stream, cuda, cuda, "grid-stride float4 kernel",
                         [](harness::Instance& i, harness::LaunchContext& ctx) {
                           as_stream(i).run_cuda(ctx.stream);
                         });
