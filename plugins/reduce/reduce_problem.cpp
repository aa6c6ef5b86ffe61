// The `reduce` problem: out = op over x[0..n). sum over f32 or i32, max over f32.
//   x (n) f32 or i32 -> out (1) of the same dtype
// i32 sums wrap modulo 2^32 (the device adds the bits as uint32; the reference too), so
// they are exact and defined for every input; the fill spans the whole int32 range, so
// wrap-around happens at every size beyond a handful of elements.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "harness/cuda_check.hpp"
#include "harness/dtype.hpp"
#include "harness/registry.hpp"
#include "reduce/reduce.hpp"

namespace {

using harness::DType;
namespace kr = kernels::reduce;

kr::Op op_of(const harness::Params& p) { return p.get_string("op") == "max" ? kr::Op::max : kr::Op::sum; }
bool is_int(const harness::Params& p) { return p.get_string("dtype") == "i32"; }
kr::Elem elem_of(const harness::Params& p) { return is_int(p) ? kr::Elem::u32 : kr::Elem::f32; }

// The height of the deepest chain of additions any variant uses for one result: a
// thread's serial strided loop (<= ceil(n / 2^16): every variant here keeps >= 2^16
// threads in flight once n is that large, or takes <= 16 elements per thread below),
// the trees (<= 2 ceil(log2 n) levels over all launches), and a serial fold of up to
// 1024 block results (atomic_blocks). CUB's DeviceReduce is a tree over threads with a
// serial loop per thread of the same kind (an assumption stated, not derived from its
// source); the 1024 + 64 term gives it room. `vectorized` chains at most n / (16 threads) + 5
// per accumulator with 8 x 256 threads per SM (within n / 2^16 from 2 SMs on).
// Never more than n - 1.
double chain(double n) {
  const double log2n = n > 1 ? std::ceil(std::log2(n)) : 0;
  return std::min(n - 1, std::ceil(n / 65536.0) + 2 * log2n + 1024 + 64);
}

class ReduceProblem final : public harness::Problem {
 public:
  std::string name() const override { return "reduce"; }
  std::string description() const override { return "out = sum (f32, i32 wrapping) or max (f32) of n elements"; }
  std::vector<harness::ParamSpec> params() const override {
    return {harness::enum_param("op", "sum", {"sum", "max"}, "sum: f32 or i32; max: f32 only"),
            harness::enum_param("dtype", "f32", {"f32", "i32"}, "element type of x and out"),
            harness::int_param("n", 1 << 24, 1, 2147483647, "elements (cub takes an int count)")};
  }
  std::optional<std::string> reject(const harness::Params& p) const override {
    if (op_of(p) == kr::Op::max && is_int(p)) return "op max is offered for dtype f32 only";
    return std::nullopt;
  }
  // f32 sum: x in [0, 1): no cancellation, so the relative bound below is a real check
  // (a lost block or element shows); f32 max: x in [-1, 1); i32: the full int32 range.
  std::vector<harness::OperandSpec> operands(const harness::Params& p) const override {
    const std::int64_t n = p.get_int("n");
    if (is_int(p))
      return {harness::input("x", DType::i32, {n}, harness::integers(INT32_MIN, INT32_MAX)),
              harness::output("out", DType::i32, {1})};
    return {harness::input("x", DType::f32, {n},
                           op_of(p) == kr::Op::sum ? harness::uniform(0, 1) : harness::uniform(-1, 1)),
            harness::output("out", DType::f32, {1})};
  }
  // n - 1 operations; x read once (4 bytes per element), one element written.
  harness::Work work(const harness::Params& p) const override {
    const double n = static_cast<double>(p.get_int("n"));
    return {n - 1, 4.0 * n + 4.0};
  }
  // Sum of x >= 0 in float with additions chained at most h deep (any tree order):
  // |got - s| <= gamma_h * s, gamma_h = h u / (1 - h u), u = 2^-24 (Higham, ch. 4), and
  // the reference (pairwise in double, rounded once) is within u of s. So
  // rel = gamma_h + 2u with h = chain(n). Max is exact (no rounding); i32 exact (wrap).
  harness::Tolerance tolerance(const harness::Params& p) const override {
    if (op_of(p) == kr::Op::max || is_int(p)) return {0, 0};
    const double u = harness::unit_roundoff(DType::f32), hu = chain(static_cast<double>(p.get_int("n"))) * u;
    return {0, hu / (1 - hu) + 2 * u};
  }
  std::string tolerance_rule() const override {
    return "i32 sum and f32 max exact; f32 sum of x in [0,1): rel = gamma_h + 2u, u = 2^-24, "
           "h = min(n-1, ceil(n/2^16) + 2 ceil(log2 n) + 1088) (deepest addition chain)";
  }
  std::string reference_variant(const harness::Params&) const override { return "cpu"; }
};

template <kr::Algo kAlgo>
void run_ladder(harness::LaunchContext& ctx) {
  const harness::Params& p = *ctx.params;
  const auto n = static_cast<std::size_t>(p.get_int("n"));
  const kr::Elem elem = elem_of(p);
  const std::size_t bytes = kr::workspace_bytes(kAlgo, n, elem);
  void* scratch = bytes ? ctx.workspace->get(0, bytes) : nullptr;
  const void* x = is_int(p) ? static_cast<const void*>(ctx.in<std::int32_t>("x")) : ctx.in<float>("x");
  void* out = is_int(p) ? static_cast<void*>(ctx.out<std::int32_t>("out")) : ctx.out<float>("out");
  HARNESS_CUDA(kr::launch(kAlgo, op_of(p), elem, x, out, n, scratch, ctx.stream));
}

template <kr::Algo kAlgo>
std::size_t ladder_bytes(const harness::Params& p) {
  return kr::workspace_bytes(kAlgo, static_cast<std::size_t>(p.get_int("n")), elem_of(p));
}

void run_cub(harness::LaunchContext& ctx) {
  const harness::Params& p = *ctx.params;
  const auto n = static_cast<std::size_t>(p.get_int("n"));
  const void* x = is_int(p) ? static_cast<const void*>(ctx.in<std::int32_t>("x")) : ctx.in<float>("x");
  void* out = is_int(p) ? static_cast<void*>(ctx.out<std::int32_t>("out")) : ctx.out<float>("out");
  std::size_t bytes = 0;
  HARNESS_CUDA(kr::launch_cub(op_of(p), elem_of(p), x, out, n, nullptr, &bytes, ctx.stream));
  void* scratch = ctx.workspace->get(0, bytes > 0 ? bytes : 1);
  HARNESS_CUDA(kr::launch_cub(op_of(p), elem_of(p), x, out, n, scratch, &bytes, ctx.stream));
}

void run_cpu(harness::LaunchContext& ctx) {
  const harness::Params& p = *ctx.params;
  const auto n = static_cast<std::size_t>(p.get_int("n"));
  if (is_int(p)) {
    const auto* x = reinterpret_cast<const unsigned*>(ctx.in<std::int32_t>("x"));
    *ctx.out<std::int32_t>("out") = static_cast<std::int32_t>(kr::reduce_cpu_u32_sum(x, n));
  } else {
    *ctx.out<float>("out") = kr::reduce_cpu_f32(op_of(p), ctx.in<float>("x"), n);
  }
}

using kr::Algo;

}  // namespace

HARNESS_REGISTER_PROBLEM(ReduceProblem);
HARNESS_REGISTER_VARIANT(reduce, cpu, cpu, "host: pairwise sum in double / uint32 wrap / max loop", run_cpu);
HARNESS_REGISTER_VARIANT_FULL(reduce, interleaved, cuda, "rung 1: stride-doubling shared tree (divergent), levels",
                              run_ladder<Algo::interleaved>, nullptr, ladder_bytes<Algo::interleaved>);
HARNESS_REGISTER_VARIANT_FULL(reduce, sequential, cuda, "rung 2: contiguous halving tree, levels",
                              run_ladder<Algo::sequential>, nullptr, ladder_bytes<Algo::sequential>);
HARNESS_REGISTER_VARIANT_FULL(reduce, first_add, cuda, "rung 3: add two elements during the load, levels",
                              run_ladder<Algo::first_add>, nullptr, ladder_bytes<Algo::first_add>);
HARNESS_REGISTER_VARIANT_FULL(reduce, coarsened, cuda, "rung 4: 16 block-strided elements per thread, levels",
                              run_ladder<Algo::coarsened>, nullptr, ladder_bytes<Algo::coarsened>);
HARNESS_REGISTER_VARIANT_FULL(reduce, warp_shuffle, cuda, "rung 5: warp shuffles instead of the last tree levels",
                              run_ladder<Algo::warp_shuffle>, nullptr, ladder_bytes<Algo::warp_shuffle>);
HARNESS_REGISTER_VARIANT_FULL(reduce, atomic_blocks, cuda, "rung 5 blocks (<= 1024) folded by atomics into out",
                              run_ladder<Algo::atomic_blocks>, nullptr, ladder_bytes<Algo::atomic_blocks>);
HARNESS_REGISTER_VARIANT_FULL(reduce, two_pass, cuda, "rung 5 blocks (<= 1024) to partials, one block reduces them",
                              run_ladder<Algo::two_pass>, nullptr, ladder_bytes<Algo::two_pass>);
HARNESS_REGISTER_VARIANT_FULL(reduce, vectorized, cuda,
                              "rung 6: float4 x4 in flight, grid 8 x SMs, shuffles, 2nd kernel folds partials",
                              run_ladder<Algo::vectorized>, nullptr, ladder_bytes<Algo::vectorized>);
HARNESS_REGISTER_VARIANT(reduce, cub, cuda, "cub::DeviceReduce::Sum / Max (vendor reference)", run_cub);
