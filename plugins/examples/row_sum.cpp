// The `row_sum` family: the worked example of docs/adding-a-family.md. Two inputs of
// different dtypes, two outputs checked in their own dtype:
//   xi (rows, cols) i32, integers in [-1000, 1000] -> isum (rows) i32: exact
//   xb (rows, cols) bf16, uniform in [-1, 1)       -> bsum (rows) bf16: within tolerance
#include "row_sum.hpp"

#include <cstdint>
#include <vector>

#include "harness/cuda_check.hpp"
#include "row_sum_kernel.cuh"

namespace examples {
namespace {

using harness::DType;

class RowSumProblem final : public harness::Problem {
 public:
  std::string name() const override { return "row_sum"; }
  std::string description() const override { return "row sums of an i32 and a bf16 (rows, cols) matrix (example family)"; }
  std::vector<harness::ParamSpec> params() const override {
    return {harness::int_param("rows", 1024, 1, 1 << 20, "rows of both matrices"),
            harness::int_param("cols", 1000, 1, 1 << 20, "columns: the length of each sum")};
  }
  std::vector<harness::OperandSpec> operands(const harness::Params& p) const override {
    const std::int64_t rows = p.get_int("rows"), cols = p.get_int("cols");
    return {harness::input("xi", DType::i32, {rows, cols}, harness::integers(-1000, 1000)),
            harness::input("xb", DType::bf16, {rows, cols}, harness::uniform(-1, 1)),
            harness::output("isum", DType::i32, {rows}),
            harness::output("bsum", DType::bf16, {rows})};
  }
  harness::Work work(const harness::Params& p) const override {
    const double n = static_cast<double>(p.get_int("rows")) * static_cast<double>(p.get_int("cols"));
    return {2 * n, 6 * n};  // one add per element and matrix; 4 + 2 bytes read per element
  }
  // bsum: the reference rounds the exact sum once to bf16; a variant accumulates in f32
  // (error <= cols * 2^-24 * sum|x|, and sum|x| <= cols) and rounds once more, so two
  // correct results differ by at most one bf16 ulp (2^-7 relative) plus the f32 error.
  harness::Tolerance tolerance(const harness::Params& p) const override {
    const double cols = static_cast<double>(p.get_int("cols"));
    return {2.0 * cols * cols * harness::unit_roundoff(DType::f32), 2.0 * harness::unit_roundoff(DType::bf16)};
  }
  std::string tolerance_rule() const override {
    return "isum exact; bsum abs = 2 cols^2 2^-24 (f32 accumulation), rel = 2^-7 (one bf16 ulp)";
  }
  std::string reference_variant(const harness::Params&) const override { return "cpu"; }
};

struct Args {
  int rows, cols;
  const std::int32_t* xi;
  const __nv_bfloat16* xb;
  std::int32_t* isum;
  __nv_bfloat16* bsum;
  explicit Args(const harness::LaunchContext& ctx)
      : rows(static_cast<int>(ctx.param_int("rows"))), cols(static_cast<int>(ctx.param_int("cols"))),
        xi(ctx.in<std::int32_t>("xi")), xb(ctx.in<__nv_bfloat16>("xb")), isum(ctx.out<std::int32_t>("isum")),
        bsum(ctx.out<__nv_bfloat16>("bsum")) {}
};

// The reference: integers summed with wrap-around (as int32 hardware does), bf16 values
// summed exactly in double and rounded once.
void cpu(harness::LaunchContext& ctx) {
  const Args a(ctx);
  for (int r = 0; r < a.rows; ++r) {
    std::uint32_t si = 0;
    double sb = 0;
    for (int c = 0; c < a.cols; ++c) {
      const std::size_t i = static_cast<std::size_t>(r) * a.cols + c;
      si += static_cast<std::uint32_t>(a.xi[i]);
      sb += static_cast<double>(__bfloat162float(a.xb[i]));
    }
    a.isum[r] = static_cast<std::int32_t>(si);
    a.bsum[r] = __float2bfloat16_rn(static_cast<float>(sb));
  }
}

// Another order and f32 accumulation: integers still exact, bf16 within the tolerance.
void cpu_reversed(harness::LaunchContext& ctx) {
  const Args a(ctx);
  for (int r = 0; r < a.rows; ++r) {
    std::uint32_t si = 0;
    float sb = 0;
    for (int c = a.cols - 1; c >= 0; --c) {
      const std::size_t i = static_cast<std::size_t>(r) * a.cols + c;
      si += static_cast<std::uint32_t>(a.xi[i]);
      sb += __bfloat162float(a.xb[i]);
    }
    a.isum[r] = static_cast<std::int32_t>(si);
    a.bsum[r] = __float2bfloat16_rn(sb);
  }
}

void cuda(harness::LaunchContext& ctx) {
  const Args a(ctx);
  HARNESS_CUDA(row_sum_cuda(a.rows, a.cols, a.xi, a.xb, a.isum, a.bsum, ctx.stream));
}

}  // namespace

void register_row_sum(harness::Registry& registry) {
  registry.add_problem(std::make_unique<RowSumProblem>());
  using harness::make_variant, harness::Backend;
  registry.add_variant(make_variant("row_sum", "cpu", Backend::cpu, cpu).description("host loop, exact sums rounded once"));
  registry.add_variant(make_variant("row_sum", "cpu_reversed", Backend::cpu, cpu_reversed)
                           .description("host loop backwards, f32 accumulation"));
  registry.add_variant(make_variant("row_sum", "cuda", Backend::cuda, cuda).description("a warp per row, shuffle reduction"));
}

}  // namespace examples
