// The `stream` problem: STREAM's copy, scale, add and triad over n floats. Memory bound
// by construction, so its cuda variant measures the device's bandwidth roof and its cpu
// variant exercises the whole pipeline on a machine without a GPU.
#include <algorithm>
#include <thread>

#include "harness/cuda_check.hpp"
#include "harness/registry.hpp"
#include "stream/stream.hpp"

namespace {

using harness::DType;
using kernels::stream::Op;

constexpr float kScalar = 3.0f;  // STREAM's q

Op op_of(const harness::Params& p) {
  const std::string& name = p.get_string("op");
  return name == "copy" ? Op::copy : name == "scale" ? Op::scale : name == "add" ? Op::add : Op::triad;
}

class StreamProblem final : public harness::Problem {
 public:
  std::string name() const override { return "stream"; }
  std::string description() const override { return "STREAM copy/scale/add/triad over n floats (memory bound)"; }
  std::vector<harness::ParamSpec> params() const override {
    return {harness::enum_param("op", "triad", {"copy", "scale", "add", "triad"},
                                "copy: out=x; scale: out=q*x; add: out=x+y; triad: out=x+q*y"),
            harness::int_param("n", 1 << 24, 1, std::int64_t{1} << 34, "elements per array")};
  }
  std::vector<harness::OperandSpec> operands(const harness::Params& p) const override {
    const std::int64_t n = p.get_int("n");
    return {harness::input("x", DType::f32, {n}, harness::uniform(-1, 1)),
            harness::input("y", DType::f32, {n}, harness::uniform(-1, 1)),
            harness::output("out", DType::f32, {n})};
  }
  // Arrays read: copy and scale read x; add and triad read x and y. One written.
  harness::Work work(const harness::Params& p) const override {
    const Op op = op_of(p);
    const double n = static_cast<double>(p.get_int("n"));
    const int reads = (op == Op::copy || op == Op::scale) ? 1 : 2;
    return {(op == Op::copy ? 0 : op == Op::triad ? 2 : 1) * n, 4.0 * n * (reads + 1)};
  }
  // One or two float operations per element with the same rounding on both sides (fmaf
  // on the device, std::fma on the host): results agree to the last bit.
  harness::Tolerance tolerance(const harness::Params&) const override { return {0.0, 0.0}; }
  std::string tolerance_rule() const override { return "exact: one rounding per element on both backends (fma for triad)"; }
  std::string reference_variant(const harness::Params&) const override { return "cpu"; }
};

void run(harness::LaunchContext& ctx) {
  const auto n = static_cast<std::size_t>(ctx.param_int("n"));
  const float *x = ctx.in<float>("x"), *y = ctx.in<float>("y");
  float* out = ctx.out<float>("out");
  if (ctx.operands->backend() == harness::Backend::cpu)
    kernels::stream::run_cpu(op_of(*ctx.params), n, kScalar, x, y, out, std::max(1u, std::thread::hardware_concurrency()));
  else
    HARNESS_CUDA(kernels::stream::launch(op_of(*ctx.params), n, kScalar, x, y, out, ctx.stream));
}

}  // namespace

HARNESS_REGISTER_PROBLEM(StreamProblem);
HARNESS_REGISTER_VARIANT(stream, cpu, cpu, "host loop over std::thread workers", run);
HARNESS_REGISTER_VARIANT(stream, cuda, cuda, "grid-stride float4 kernel", run);
