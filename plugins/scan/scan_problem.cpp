// The `scan` problem: inclusive prefix sum y[i] = x[0] + ... + x[i].
//   x (n) f32 or i32 -> y (n) of the same dtype
// i32 scans wrap modulo 2^32 (uint32 bits on both sides): exact.
#include <cmath>
#include <cstdint>
#include <string>

#include "harness/cuda_check.hpp"
#include "harness/dtype.hpp"
#include "harness/registry.hpp"
#include "scan/scan.hpp"

namespace {

using harness::DType;
namespace ks = kernels::scan;

bool is_int(const harness::Params& p) { return p.get_string("dtype") == "i32"; }
ks::Elem elem_of(const harness::Params& p) { return is_int(p) ? ks::Elem::u32 : ks::Elem::f32; }

// The deepest chain of float additions behind one output y[i] (i < n), over every
// variant: within a block <= 2 log2(2048) + 16 (Brent-Kung's two sweeps; the coarsened
// scan's 16 serial adds + shuffle levels), the hierarchy adds <= 2 per level; the
// single pass chains the found prefix with two additions per hop of >= 1 tile of 4096
// elements (+ the other values, + the tile's aggregate; kernels/scan/scan.cu), inside
// one per 1024 elements, and CUB one addition per predecessor tile, up to ceil(n / 1024)
// tiles (CUB's tiles are >= 1024 elements: an assumption about its tile policy, not
// derived from its source). Never more than n - 1.
double chain(double n) {
  const double log2n = n > 1 ? std::ceil(std::log2(n)) : 0;
  return std::min(n - 1, std::ceil(n / 1024.0) + 3 * log2n + 64);
}

class ScanProblem final : public harness::Problem {
 public:
  std::string name() const override { return "scan"; }
  std::string description() const override { return "inclusive prefix sum of n elements (f32, i32 wrapping)"; }
  std::vector<harness::ParamSpec> params() const override {
    return {harness::enum_param("dtype", "f32", {"f32", "i32"}, "element type of x and y"),
            harness::int_param("n", 1 << 24, 1, 2147483647, "elements (cub takes an int count)")};
  }
  // f32: x in [0, 1), so every prefix is a sum of nonnegative terms (relative bound);
  // i32: the full int32 range (wrap-around at once).
  std::vector<harness::OperandSpec> operands(const harness::Params& p) const override {
    const std::int64_t n = p.get_int("n");
    if (is_int(p))
      return {harness::input("x", DType::i32, {n}, harness::integers(INT32_MIN, INT32_MAX)),
              harness::output("y", DType::i32, {n})};
    return {harness::input("x", DType::f32, {n}, harness::uniform(0, 1)), harness::output("y", DType::f32, {n})};
  }
  // n - 1 additions (the sequential, work-efficient minimum); x read and y written once.
  harness::Work work(const harness::Params& p) const override {
    const double n = static_cast<double>(p.get_int("n"));
    return {n - 1, 8.0 * n};
  }
  // y[i] = s_i, a sum of nonnegative terms: any order with addition chains <= h deep
  // gives |got - s_i| <= gamma_h s_i (u = 2^-24). The reference accumulates in double
  // (error <= n 2^-53 s_i) and rounds once (u s_i). rel = gamma_h + u + n 2^-53.
  harness::Tolerance tolerance(const harness::Params& p) const override {
    if (is_int(p)) return {0, 0};
    const double n = static_cast<double>(p.get_int("n"));
    const double u = harness::unit_roundoff(DType::f32), hu = chain(n) * u;
    return {0, hu / (1 - hu) + u + n * std::ldexp(1.0, -53)};
  }
  std::string tolerance_rule() const override {
    return "i32 exact (wraps mod 2^32); f32 of x in [0,1): per element rel = gamma_h + u + n 2^-53, u = 2^-24, "
           "h = min(n-1, ceil(n/1024) + 3 ceil(log2 n) + 64) (look-back chains one add per tile)";
  }
  std::string reference_variant(const harness::Params&) const override { return "cpu"; }
};

const void* x_of(const harness::LaunchContext& ctx) {
  return is_int(*ctx.params) ? static_cast<const void*>(ctx.in<std::int32_t>("x")) : ctx.in<float>("x");
}
void* y_of(const harness::LaunchContext& ctx) {
  return is_int(*ctx.params) ? static_cast<void*>(ctx.out<std::int32_t>("y")) : ctx.out<float>("y");
}

template <ks::Algo kAlgo>
std::size_t scan_bytes(const harness::Params& p) {
  return ks::workspace_bytes(kAlgo, static_cast<std::size_t>(p.get_int("n")));
}

template <ks::Algo kAlgo>
void run_ladder(harness::LaunchContext& ctx) {
  const auto n = static_cast<std::size_t>(ctx.param_int("n"));
  const std::size_t bytes = ks::workspace_bytes(kAlgo, n);
  void* scratch = bytes ? ctx.workspace->get(0, bytes) : nullptr;
  HARNESS_CUDA(ks::launch(kAlgo, elem_of(*ctx.params), x_of(ctx), y_of(ctx), n, scratch, ctx.stream));
}

void run_cub(harness::LaunchContext& ctx) {
  const auto n = static_cast<std::size_t>(ctx.param_int("n"));
  std::size_t bytes = 0;
  HARNESS_CUDA(ks::launch_cub(elem_of(*ctx.params), x_of(ctx), y_of(ctx), n, nullptr, &bytes, ctx.stream));
  void* scratch = ctx.workspace->get(0, bytes > 0 ? bytes : 1);
  HARNESS_CUDA(ks::launch_cub(elem_of(*ctx.params), x_of(ctx), y_of(ctx), n, scratch, &bytes, ctx.stream));
}

void run_cpu(harness::LaunchContext& ctx) {
  const auto n = static_cast<std::size_t>(ctx.param_int("n"));
  if (is_int(*ctx.params))
    ks::scan_cpu_u32(reinterpret_cast<const unsigned*>(ctx.in<std::int32_t>("x")),
                     reinterpret_cast<unsigned*>(ctx.out<std::int32_t>("y")), n);
  else
    ks::scan_cpu_f32(ctx.in<float>("x"), ctx.out<float>("y"), n);
}

using ks::Algo;

}  // namespace

HARNESS_REGISTER_PROBLEM(ScanProblem);
HARNESS_REGISTER_VARIANT(scan, cpu, cpu, "host: running sum in double / uint32 wrap", run_cpu);
HARNESS_REGISTER_VARIANT_FULL(scan, kogge_stone, cuda,
                              "rung 1: double-buffered Kogge-Stone, 1024 per block; multi-block hierarchical",
                              run_ladder<Algo::kogge_stone>, nullptr, scan_bytes<Algo::kogge_stone>);
HARNESS_REGISTER_VARIANT_FULL(scan, brent_kung, cuda,
                              "rung 2: Brent-Kung up/down sweeps, 2048 per block; multi-block hierarchical",
                              run_ladder<Algo::brent_kung>, nullptr, scan_bytes<Algo::brent_kung>);
HARNESS_REGISTER_VARIANT_FULL(scan, hierarchical, cuda,
                              "rung 3: the notes' three kernels, coarsened block scan (256 x 16, 16-byte loads), any n",
                              run_ladder<Algo::hierarchical>, nullptr, scan_bytes<Algo::hierarchical>);
HARNESS_REGISTER_VARIANT_FULL(scan, decoupled_lookback, cuda,
                              "rung 4: single pass, dynamic tile index, warp-parallel status-word look-back",
                              run_ladder<Algo::decoupled_lookback>, nullptr, scan_bytes<Algo::decoupled_lookback>);
HARNESS_REGISTER_VARIANT(scan, cub, cuda, "cub::DeviceScan::InclusiveSum (vendor reference)", run_cub);
