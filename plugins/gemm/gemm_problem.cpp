// The `gemm` problem: FP32 C = alpha * A * B + beta * C, row-major, A (M, K), B (K, N),
// C (M, N), and its variants: every kernel of kernels/gemm's table, cuBLAS and the host
// reference.
#include <cstdint>
#include <optional>
#include <string>

#include <cublas_v2.h>
#include <fmt/format.h>

#include "gemm/gemm.hpp"
#include "gemm/gemm_cublas.hpp"
#include "gemm/gemm_table.hpp"
#include "gemm_tolerance.hpp"
#include "harness/cuda_check.hpp"
#include "harness/error.hpp"
#include "harness/registry.hpp"

namespace {

using harness::DType;

struct Shape {
  std::int64_t M, N, K;
  float alpha, beta;
  explicit Shape(const harness::Params& p)
      : M(p.get_int("M")), N(p.get_int("N")), K(p.get_int("K")),
        alpha(static_cast<float>(p.get_float("alpha"))), beta(static_cast<float>(p.get_float("beta"))) {}
  double macs() const { return static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K); }
};

class GemmProblem final : public harness::Problem {
 public:
  std::string name() const override { return "gemm"; }
  std::string description() const override {
    return "FP32 C = alpha*A*B + beta*C, row-major A (M,K), B (K,N), C (M,N)";
  }
  std::vector<harness::ParamSpec> params() const override {
    constexpr std::int64_t kMaxDim = std::int64_t{1} << 17;
    return {
        harness::int_param("M", 1024, 1, kMaxDim, "rows of A and C"),
        harness::int_param("N", 1024, 1, kMaxDim, "columns of B and C"),
        harness::int_param("K", 1024, 1, kMaxDim, "columns of A, rows of B (reduction length)"),
        harness::float_param("alpha", 1.0, -1e6, 1e6, "scale of A*B"),
        harness::float_param("beta", 0.0, -1e6, 1e6, "scale of the old C; 0: C is output only and never read"),
    };
  }
  std::optional<std::string> reject(const harness::Params& p) const override {
    const Shape s(p);
    if (s.M < 1 || s.N < 1 || s.K < 1) return fmt::format("M, N, K must be >= 1 (M={} N={} K={})", s.M, s.N, s.K);
    constexpr double kMaxElements = 17179869184.0;  // 2^34 floats: 64 GiB per matrix
    const double m = static_cast<double>(s.M), n = static_cast<double>(s.N), k = static_cast<double>(s.K);
    if (m * k > kMaxElements || k * n > kMaxElements || m * n > kMaxElements)
      return "a matrix would exceed 2^34 elements (64 GiB)";
    return std::nullopt;
  }
  // C is an input too when beta != 0 (restored before every run); with beta == 0 it is
  // output only: poisoned, so a kernel that reads it or skips an element shows.
  std::vector<harness::OperandSpec> operands(const harness::Params& p) const override {
    const Shape s(p);
    std::vector<harness::OperandSpec> ops = {harness::input("A", DType::f32, {s.M, s.K}, harness::uniform(-1, 1)),
                                             harness::input("B", DType::f32, {s.K, s.N}, harness::uniform(-1, 1))};
    ops.push_back(s.beta != 0.0f ? harness::inout("C", DType::f32, {s.M, s.N}, harness::uniform(-1, 1))
                                 : harness::output("C", DType::f32, {s.M, s.N}));
    return ops;
  }
  // FLOPs: the 2 M N K of the products and sums (the M N epilogue operations are not
  // counted, as is customary). Bytes: A, B read and C written once; C read too when
  // beta != 0.
  harness::Work work(const harness::Params& p) const override {
    const Shape s(p);
    const double m = static_cast<double>(s.M), n = static_cast<double>(s.N), k = static_cast<double>(s.K);
    return {2.0 * s.macs(), 4.0 * (m * k + k * n) + 4.0 * m * n * (s.beta != 0.0f ? 2 : 1)};
  }
  harness::Tolerance tolerance(const harness::Params& p) const override {
    const Shape s(p);
    return plugins::gemm::tolerance_for(s.K, s.alpha, s.beta);
  }
  std::string tolerance_rule() const override { return plugins::gemm::kToleranceRule; }
  // The double-accumulating host reference while it takes seconds (M N K <= 2^30, e.g.
  // 1024^3: ~1 s on 16 cores); cuBLAS above.
  std::string reference_variant(const harness::Params& p) const override {
    return Shape(p).macs() <= plugins::gemm::kCpuReferenceMaxMacs ? "cpu" : "cublas";
  }
};

// The operands of a launch, as kernels/gemm's launch functions take them.
struct Args {
  int M, N, K;
  float alpha, beta;
  const float *A, *B;
  float* C;
  explicit Args(const harness::LaunchContext& ctx)
      : M(static_cast<int>(ctx.param_int("M"))), N(static_cast<int>(ctx.param_int("N"))),
        K(static_cast<int>(ctx.param_int("K"))), alpha(static_cast<float>(ctx.param_float("alpha"))),
        beta(static_cast<float>(ctx.param_float("beta"))), A(ctx.in<float>("A")), B(ctx.in<float>("B")),
        C(ctx.out<float>("C")) {}
};

[[noreturn]] void throw_cublas(cublasStatus_t status, const char* what, const char* file, int line) {
  const std::string message = fmt::format("{}:{}: {} failed: {} ({})", file, line, what,
                                          cublasGetStatusString(status), cublasGetStatusName(status));
  if (status == CUBLAS_STATUS_ALLOC_FAILED) throw harness::OutOfMemory(message);
  // An execution failure may stem from a CUDA error that poisons the context: report that.
  if (status == CUBLAS_STATUS_EXECUTION_FAILED) HARNESS_CUDA_LAST_ERROR();
  throw harness::CudaError(message, static_cast<int>(status), false);
}

#define GEMM_CUBLAS(expr)                                                                      \
  do {                                                                                         \
    const cublasStatus_t gemm_cublas_status_ = (expr);                                         \
    if (gemm_cublas_status_ != CUBLAS_STATUS_SUCCESS) throw_cublas(gemm_cublas_status_, #expr, __FILE__, __LINE__); \
  } while (0)

// One handle for the process, created at the first launch (never at static-init time)
// on the run's device; it lives until the process ends.
cublasHandle_t cublas_handle() {
  static const cublasHandle_t handle = [] {
    cublasHandle_t h = nullptr;
    GEMM_CUBLAS(cublasCreate(&h));
    return h;
  }();
  return handle;
}

void launch_cublas(harness::LaunchContext& ctx) {
  const Args a(ctx);
  void* workspace = ctx.workspace->get(0, kernels::gemm::kCublasWorkspaceBytes);
  GEMM_CUBLAS(kernels::gemm::gemm_cublas(cublas_handle(), a.M, a.N, a.K, a.alpha, a.A, a.B, a.beta, a.C, ctx.stream,
                                         workspace, kernels::gemm::kCublasWorkspaceBytes));
}

void launch_cpu(harness::LaunchContext& ctx) {
  const Args a(ctx);
  kernels::gemm::gemm_cpu(a.M, a.N, a.K, a.alpha, a.A, a.B, a.beta, a.C);
}

std::optional<std::string> cpu_constraint(const harness::Params& p) {
  const double macs = Shape(p).macs();
  if (macs > plugins::gemm::kCpuVariantMaxMacs)
    return fmt::format("cpu: {:.3g} multiply-adds exceed the host limit of 2^34 (minutes per run)", macs);
  return std::nullopt;
}

std::size_t cublas_workspace(const harness::Params&) { return kernels::gemm::kCublasWorkspaceBytes; }

// Every kernel of kernels/gemm's table is a cuda variant of the same name.
const bool kTableRegistered = [] {
  for (const auto& k : kernels::gemm::fp32_kernels())
    harness::Registry::instance().add_variant({"gemm", std::string(k.name), harness::Backend::cuda,
                                            std::string(k.description), [launch = k.launch](harness::LaunchContext& ctx) {
                                              const Args a(ctx);
                                              HARNESS_CUDA(launch(a.M, a.N, a.K, a.alpha, a.A, a.B, a.beta, a.C, ctx.stream));
                                            },
                                            nullptr, nullptr});
  return true;
}();

}  // namespace

HARNESS_REGISTER_PROBLEM(GemmProblem);
HARNESS_REGISTER_VARIANT_FULL(gemm, cublas, cuda, "cublasSgemm, FP32 (CUBLAS_DEFAULT_MATH: no TF32)", launch_cublas,
                              nullptr, cublas_workspace);
HARNESS_REGISTER_VARIANT_IF(gemm, cpu, cpu, "host reference: double accumulation, blocked, all hardware threads",
                            launch_cpu, cpu_constraint);
