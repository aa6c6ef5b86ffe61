// The `gemm` problem: C = alpha * op(A) op(B) + beta * C, C (M, N) row-major, in dtype
// f32 | tf32 | bf16 | f16 | fp8_e4m3 and layout nn | nt | tn | tt (gemm_params.hpp,
// kernels/gemm/gemm_types.hpp; fp8's scales and rules: gemm_fp8.hpp), and its variants:
// every FP32 kernel of kernels/gemm's table (f32 nn only), the tensor-core `mma` kernel,
// `wgmma`, cuBLAS (cuBLASLt for fp8) and the host reference in every dtype and layout.
#include <cstdint>
#include <optional>
#include <string>

#include <cublas_v2.h>
#include <fmt/format.h>

#include "gemm/gemm.hpp"
#include "gemm/gemm_auto.hpp"
#include "gemm/gemm_cublas.hpp"
#include "gemm/gemm_mma.hpp"
#include "gemm/gemm_wgmma.hpp"
#include "gemm/gemm_reference.hpp"
#include "gemm/gemm_table.hpp"
#include "gemm_fp8.hpp"
#include "gemm_params.hpp"
#include "gemm_tc_variants.hpp"
#include "gemm_tolerance.hpp"
#include "harness/cuda_check.hpp"
#include "harness/error.hpp"
#include "harness/registry.hpp"

namespace {

using harness::DType;
using plugins::gemm::dtype_param;
using plugins::gemm::layout_param;
using plugins::gemm::TcDType;

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
    return "C = alpha*op(A)*op(B) + beta*C, C (M,N) row-major; dtype f32|tf32|bf16|f16|fp8_e4m3, layout "
           "nn|nt|tn|tt (A 't': stored (K,M); B 't': stored (N,K))";
  }
  std::vector<harness::ParamSpec> params() const override {
    constexpr std::int64_t kMaxDim = std::int64_t{1} << 17;
    return {
        harness::int_param("M", 1024, 1, kMaxDim, "rows of A and C"),
        harness::int_param("N", 1024, 1, kMaxDim, "columns of B and C"),
        harness::int_param("K", 1024, 1, kMaxDim, "columns of A, rows of B (reduction length)"),
        harness::float_param("alpha", 1.0, -1e6, 1e6, "scale of A*B"),
        harness::float_param("beta", 0.0, -1e6, 1e6, "scale of the old C; 0: C is output only and never read"),
        harness::enum_param("dtype", "f32", {"f32", "tf32", "bf16", "f16", "fp8_e4m3"},
                            "f32: FP32; tf32: float storage, TF32 math; bf16/f16: A, B, C in the type, FP32 "
                            "accumulation; fp8_e4m3: A, B e4m3 with per-tensor scales 1/448, 1/384, bf16 C, FP32 "
                            "accumulation, alpha 1 and beta 0 only (GPU variants: layout nt)"),
        harness::enum_param("layout", "nn", {"nn", "nt", "tn", "tt"},
                            "op(A) op(B) as cuBLAS: A 'n' stored (M,K), 't' stored (K,M); B 'n' stored (K,N), "
                            "'t' stored (N,K); all row-major"),
    };
  }
  std::optional<std::string> reject(const harness::Params& p) const override {
    const Shape s(p);
    if (s.M < 1 || s.N < 1 || s.K < 1) return fmt::format("M, N, K must be >= 1 (M={} N={} K={})", s.M, s.N, s.K);
    constexpr double kMaxElements = 17179869184.0;  // 2^34 floats: 64 GiB per matrix
    const double m = static_cast<double>(s.M), n = static_cast<double>(s.N), k = static_cast<double>(s.K);
    if (m * k > kMaxElements || k * n > kMaxElements || m * n > kMaxElements)
      return "a matrix would exceed 2^34 elements (64 GiB)";
    return plugins::gemm::fp8_rejects(p);
  }
  // C is an input too when beta != 0 (restored before every run); with beta == 0 it is
  // output only: poisoned, so a kernel that reads it or skips an element shows.
  std::vector<harness::OperandSpec> operands(const harness::Params& p) const override {
  // A and B are stored in the layout's shapes; every operand in the dtype's storage
  // (tf32: f32), filled with U[-1, 1] rounded to it (fp8: quantized with its scale, C bf16).
    const Shape s(p);
    const TcDType d = dtype_param(p);
    const DType t = plugins::gemm::storage_dtype(d), tc = plugins::gemm::output_dtype(d);
    const bool fp8 = d == TcDType::fp8_e4m3;
    const auto a = kernels::gemm::stored_a(layout_param(p), s.M, s.K);
    const auto b = kernels::gemm::stored_b(layout_param(p), s.K, s.N);
    std::vector<harness::OperandSpec> ops = {
        harness::input("A", t, {a.rows, a.cols},
                       fp8 ? plugins::gemm::fp8_fill(plugins::gemm::kFp8ScaleA, 1) : harness::uniform(-1, 1)),
        harness::input("B", t, {b.rows, b.cols},
                       fp8 ? plugins::gemm::fp8_fill(plugins::gemm::kFp8ScaleB, 2) : harness::uniform(-1, 1))};
    ops.push_back(s.beta != 0.0f ? harness::inout("C", tc, {s.M, s.N}, harness::uniform(-1, 1))
                                 : harness::output("C", tc, {s.M, s.N}));
    return ops;
  }
  // FLOPs: the 2 M N K of the products and sums (the M N epilogue operations are not
  // counted, as is customary). Bytes: A, B read and C written once (elements of the
  // dtype's storage: 4 bytes f32/tf32, 2 bf16/f16, 1 fp8 with a 2-byte bf16 C); C read too
  // when beta != 0.
  harness::Work work(const harness::Params& p) const override {
    const Shape s(p);
    const double m = static_cast<double>(s.M), n = static_cast<double>(s.N), k = static_cast<double>(s.K);
    const double e = kernels::gemm::element_bytes(dtype_param(p)), ec = kernels::gemm::output_bytes(dtype_param(p));
    return {2.0 * s.macs(), e * (m * k + k * n) + ec * m * n * (s.beta != 0.0f ? 2 : 1)};
  }
  harness::Tolerance tolerance(const harness::Params& p) const override {
    const Shape s(p);
    return plugins::gemm::tolerance_for(dtype_param(p), s.K, s.alpha, s.beta);
  }
  std::string tolerance_rule() const override { return plugins::gemm::kToleranceRule; }
  // The double-accumulating host reference while it takes seconds (M N K <= 2^30, e.g.
  // 1024^3: ~1 s on 16 cores); cuBLAS in the same dtype and layout above.
  std::string reference_variant(const harness::Params& p) const override {
    return Shape(p).macs() <= plugins::gemm::kCpuReferenceMaxMacs ? "cpu" : "cublas";
  }
};

// The operands of a launch in the dtype's storage, untyped (the dtype travels beside them).
struct AnyArgs {
  TcDType dtype;
  kernels::gemm::Layout layout;
  int M, N, K;
  float alpha, beta;
  const void *A, *B;
  void* C;
  explicit AnyArgs(const harness::LaunchContext& ctx)
      : dtype(dtype_param(*ctx.params)), layout(layout_param(*ctx.params)),
        M(static_cast<int>(ctx.param_int("M"))), N(static_cast<int>(ctx.param_int("N"))),
        K(static_cast<int>(ctx.param_int("K"))), alpha(static_cast<float>(ctx.param_float("alpha"))),
        beta(static_cast<float>(ctx.param_float("beta"))) {
    switch (plugins::gemm::storage_dtype(dtype)) {
      case DType::bf16: bind<__nv_bfloat16>(ctx); break;
      case DType::f16: bind<__half>(ctx); break;
      case DType::u8: bind<std::uint8_t, __nv_bfloat16>(ctx); break;  // fp8 e4m3 bytes, bf16 C
      default: bind<float>(ctx); break;
    }
  }

 private:
  template <class T, class TC = T>
  void bind(const harness::LaunchContext& ctx) {
    A = ctx.in<T>("A");
    B = ctx.in<T>("B");
    C = ctx.out<TC>("C");
  }
};

// The operands of an FP32 nn launch, as kernels/gemm's FP32 launch functions take them.
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
  const AnyArgs a(ctx);
  void* workspace = ctx.workspace->get(0, kernels::gemm::kCublasWorkspaceBytes);
  if (a.dtype == TcDType::fp8_e4m3) {
    GEMM_CUBLAS(plugins::gemm::launch_cublas_fp8(ctx, workspace, kernels::gemm::kCublasWorkspaceBytes));
    return;
  }
  GEMM_CUBLAS(kernels::gemm::gemm_cublas_ex(cublas_handle(), a.dtype, a.layout, a.M, a.N, a.K, a.alpha, a.A, a.B,
                                            a.beta, a.C, ctx.stream, workspace,
                                            kernels::gemm::kCublasWorkspaceBytes));
}

void launch_mma(harness::LaunchContext& ctx) {
  const AnyArgs a(ctx);
  HARNESS_CUDA(kernels::gemm::gemm_mma(a.dtype, a.layout, a.M, a.N, a.K, a.alpha, a.A, a.B, a.beta, a.C, ctx.stream));
}

// wgmma's workspace (kernels/gemm/gemm_wgmma.hpp): the split-K sums where the shape has few
// output tiles and a long K; for tf32 first the operands it rewrites K-major (layouts other
// than nt, or K % 4 != 0).
std::size_t wgmma_workspace(const harness::Params& p) {
  if (dtype_param(p) == TcDType::fp8_e4m3) return plugins::gemm::fp8_wgmma_workspace(p);
  const Shape s(p);
  const int M = static_cast<int>(s.M), N = static_cast<int>(s.N), K = static_cast<int>(s.K);
  if (dtype_param(p) != TcDType::tf32) return kernels::gemm::gemm_wgmma_splitk_workspace_bytes(M, N, K, 2);
  const kernels::gemm::Layout l = layout_param(p);
  return kernels::gemm::gemm_wgmma_tf32_workspace_bytes(kernels::gemm::a_transposed(l), kernels::gemm::b_transposed(l),
                                                        M, N, K);
}

// wgmma's config: fp8's scales, and how the call runs on this device (tiles, split-K; kernels'
// gemm_wgmma_plan), so a result says whether it split and how. Without a device: fp8's part only.
std::string wgmma_config(const harness::Params& p) {
  const std::string fp8 = plugins::gemm::fp8_config(p);
  const int sms = kernels::gemm::current_sm_count();
  if (sms <= 0) return fp8;
  const Shape s(p);
  const TcDType d = dtype_param(p);
  const int elem = d == TcDType::fp8_e4m3 ? 1 : d == TcDType::tf32 ? 4 : 2;
  const int M = static_cast<int>(s.M), N = static_cast<int>(s.N), K = static_cast<int>(s.K);
  const std::string plan =
      kernels::gemm::gemm_wgmma_plan(M, N, K, elem, sms, kernels::gemm::gemm_wgmma_cluster(M, N, 1, sms));
  return fp8.empty() ? plan : plan.empty() ? fp8 : plan + "; " + fp8;
}

void launch_wgmma(harness::LaunchContext& ctx) {
  const AnyArgs a(ctx);
  if (a.dtype == TcDType::fp8_e4m3) {
    plugins::gemm::launch_wgmma_fp8(ctx);
    return;
  }
  const bool at = kernels::gemm::a_transposed(a.layout), bt = kernels::gemm::b_transposed(a.layout);
  if (a.dtype == TcDType::tf32) {
    const auto* A = static_cast<const float*>(a.A);
    const auto* B = static_cast<const float*>(a.B);
    const std::size_t bytes = kernels::gemm::gemm_wgmma_tf32_workspace_bytes(at, bt, a.M, a.N, a.K, A, B);
    void* workspace = bytes > 0 ? ctx.workspace->get(0, bytes) : nullptr;
    HARNESS_CUDA(kernels::gemm::gemm_wgmma_tf32(at, bt, a.M, a.N, a.K, a.alpha, A, B, a.beta,
                                                static_cast<float*>(a.C), workspace, bytes, ctx.stream));
    return;
  }
  const std::size_t bytes = kernels::gemm::gemm_wgmma_splitk_workspace_bytes(a.M, a.N, a.K, 2);
  void* workspace = bytes > 0 ? ctx.workspace->get(0, bytes) : nullptr;
  if (a.dtype == TcDType::bf16)
    HARNESS_CUDA(kernels::gemm::gemm_wgmma_bf16(at, bt, a.M, a.N, a.K, a.alpha, static_cast<const __nv_bfloat16*>(a.A),
                                                static_cast<const __nv_bfloat16*>(a.B), a.beta,
                                                static_cast<__nv_bfloat16*>(a.C), ctx.stream, {}, workspace, bytes));
  else
    HARNESS_CUDA(kernels::gemm::gemm_wgmma_f16(at, bt, a.M, a.N, a.K, a.alpha, static_cast<const __half*>(a.A),
                                               static_cast<const __half*>(a.B), a.beta, static_cast<__half*>(a.C),
                                               ctx.stream, {}, workspace, bytes));
}

void launch_cpu(harness::LaunchContext& ctx) {
  const AnyArgs a(ctx);
  if (a.dtype == TcDType::fp8_e4m3) {
    plugins::gemm::launch_cpu_fp8(ctx);
    return;
  }
  kernels::gemm::gemm_cpu_ex(a.dtype, a.layout, a.M, a.N, a.K, a.alpha, a.A, a.B, a.beta, a.C);
}

// cuBLAS: bf16 and tf32 need compute capability 8.0, f16 7.0 (cublasGemmEx's tensor-core types);
// fp8 runs cuBLASLt (8.9, layout nt, aligned rows: gemm_fp8.hpp).
std::optional<std::string> cublas_constraint(const harness::Params& p) {
  if (dtype_param(p) == TcDType::fp8_e4m3) return plugins::gemm::fp8_cublas_constraint(p);
  return plugins::gemm::dtype_supported(p, 70);
}

// mma: m16n8k16 / m16n8k8 with bf16, f16, tf32 are sm_80 instructions; no FP32 path.
std::optional<std::string> mma_constraint(const harness::Params& p) {
  if (dtype_param(p) == TcDType::f32)
    return std::string("mma: tensor cores have no FP32 path (use dtype tf32 for FP32 storage)");
  if (dtype_param(p) == TcDType::fp8_e4m3) return std::string("mma: no fp8 path (fp8_e4m3 runs on wgmma and cublas)");
  return plugins::gemm::dtype_supported(p, kernels::gemm::kMmaMinComputeCapability);
}

// wgmma: Hopper only (sm_90a machine code); bf16/f16 (TMA's 16-byte row strides) or tf32
// (any shape: operands that are not K-major are rewritten first); the kernel says which
// condition fails (kernels/gemm/gemm_wgmma.hpp).
std::optional<std::string> wgmma_constraint(const harness::Params& p) {
  const TcDType d = dtype_param(p);
  if (d == TcDType::f32)
    return std::string("wgmma: tensor cores have no FP32 path (use dtype tf32 for FP32 storage)");
  if (d == TcDType::fp8_e4m3) return plugins::gemm::fp8_wgmma_constraint(p);
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return std::nullopt;  // no device: the run reports that, not this variant
  }
  const Shape s(p);
  const kernels::gemm::Layout l = layout_param(p);
  if (const char* why = kernels::gemm::gemm_wgmma_unsupported(device, kernels::gemm::a_transposed(l),
                                                               kernels::gemm::b_transposed(l), static_cast<int>(s.M),
                                                               static_cast<int>(s.N), static_cast<int>(s.K),
                                                               kernels::gemm::element_bytes(d)))
    return fmt::format("wgmma: {}", why);
  return std::nullopt;
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
    harness::Registry::instance().add_variant(
        harness::make_variant("gemm", std::string(k.name), harness::Backend::cuda,
                              [launch = k.launch](harness::LaunchContext& ctx) {
                                const Args a(ctx);
                                HARNESS_CUDA(launch(a.M, a.N, a.K, a.alpha, a.A, a.B, a.beta, a.C, ctx.stream));
                              })
            .description(std::string(k.description))
            .constraint(plugins::gemm::fp32_nn_only));
  return true;
}();

std::size_t no_workspace(const harness::Params&) { return 0; }
std::string no_config(const harness::Params&) { return {}; }

}  // namespace

namespace plugins::gemm {
const TcVariant& wgmma_variant() {
  static const TcVariant v{launch_wgmma, wgmma_constraint, wgmma_workspace, wgmma_config};
  return v;
}
const TcVariant& mma_variant() {
  static const TcVariant v{launch_mma, mma_constraint, no_workspace, no_config};
  return v;
}
}  // namespace plugins::gemm

HARNESS_REGISTER_PROBLEM(GemmProblem);
// cublas and cpu record fp8's scales as the result's config (plugins::gemm::fp8_config); wgmma
// those and its plan (wgmma_config).
HARNESS_REGISTER_VARIANT_WITH(harness::make_variant("gemm", "cublas", harness::Backend::cuda, launch_cublas)
                                  .description("cuBLAS in the dtype: f32 cublasSgemm (no TF32); tf32/bf16/f16 "
                                               "cublasGemmEx, FP32 accumulation (COMPUTE_32F_FAST_TF32 / COMPUTE_32F); "
                                               "every layout; fp8_e4m3: cuBLASLt FP8 matmul (TN = row-major nt, "
                                               "device scale pointers, bf16 D, no fast accumulation)")
                                  .constraint(cublas_constraint)
                                  .workspace(cublas_workspace)
                                  .config(plugins::gemm::fp8_config));
HARNESS_REGISTER_VARIANT_IF(gemm, mma, cuda,
                            "tensor cores, mma.sync m16n8k16 (bf16/f16) / m16n8k8 (tf32), ldmatrix, swizzled smem, "
                            "cp.async stages of 128 B of K, double-buffered fragments; tile by shape: 128x256 "
                            "(64x64 warps), 128x128 or 64x64; every layout, any size",
                            launch_mma, mma_constraint);
HARNESS_REGISTER_VARIANT_WITH(
    harness::make_variant("gemm", "wgmma", harness::Backend::cuda, launch_wgmma)
        .description("Hopper: TMA loads into 128B-swizzled smem, wgmma m64n256k16 (tf32: k8), 1 producer + 2 "
                     "consumer warpgroups, 4-stage mbarrier ring, persistent grid, TMA-store epilogue; bf16/f16: "
                     "128x128 tiles (m64n128k16, 6 stages) where few 128x256 tiles exist, split-K summed in the "
                     "kernel where few tiles meet a long K (the plan: the result's config); bf16/f16 "
                     "every layout, row strides multiple of 8; tf32 any shape, nt in place, other layouts "
                     "transpose the non-K-major operand into the workspace first (timed with the GEMM); fp8_e4m3 "
                     "nt with K % 16 == 0: 2 x m64n128k32 per 128-k step, promoted to FP32 every step, bf16 C")
        .constraint(wgmma_constraint)
        .workspace(wgmma_workspace)
        .config(wgmma_config));
HARNESS_REGISTER_VARIANT_WITH(harness::make_variant("gemm", "cpu", harness::Backend::cpu, launch_cpu)
                                  .description("host reference: double accumulation on the rounded inputs (tf32: "
                                               "rounded to TF32; fp8: dequantized), blocked, all hardware threads; "
                                               "every dtype and layout")
                                  .constraint(cpu_constraint)
                                  .config(plugins::gemm::fp8_config));
