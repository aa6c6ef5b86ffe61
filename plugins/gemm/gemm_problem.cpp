// The `gemm` problem: FP32 C = alpha * A * B + beta * C, row-major, A (M, K), B (K, N),
// C (M, N), and its variants: the kernels of kernels/gemm, cuBLAS and the host reference.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <cublas_v2.h>
#include <fmt/format.h>

#include "gemm/gemm.hpp"
#include "gemm/gemm_cublas.hpp"
#include "gemm_tolerance.hpp"
#include "harness/check.hpp"
#include "harness/checked.hpp"
#include "harness/device_buffer.hpp"
#include "harness/error.hpp"
#include "harness/random.hpp"
#include "harness/registry.hpp"

namespace {

using harness::Backend;

// Stream ids of harness::fill_uniform: each operand its own independent sequence.
constexpr std::uint64_t kStreamA = 1;
constexpr std::uint64_t kStreamB = 2;
constexpr std::uint64_t kStreamC = 3;

struct Shape {
  int M, N, K;
  float alpha, beta;

  explicit Shape(const harness::Params& p)
      : M(static_cast<int>(p.get_int("M"))),
        N(static_cast<int>(p.get_int("N"))),
        K(static_cast<int>(p.get_int("K"))),
        alpha(static_cast<float>(p.get_float("alpha"))),
        beta(static_cast<float>(p.get_float("beta"))) {}

  // Element counts: checked (InputError "size overflows ...") rather than wrapped.
  std::size_t a_size() const { return harness::size_product("gemm A (M*K elements)", M, K); }
  std::size_t b_size() const { return harness::size_product("gemm B (K*N elements)", K, N); }
  std::size_t c_size() const { return harness::size_product("gemm C (M*N elements)", M, N); }
  double macs() const { return static_cast<double>(M) * N * K; }
  // Device memory: A, B, C, and the pristine copy of C that reset_outputs restores from
  // when C is an input (beta != 0).
  std::size_t device_bytes() const {
    constexpr const char* what = "gemm device bytes (4 * (M*K + K*N + M*N))";
    const std::size_t c_copies = harness::size_product(what, c_size(), beta != 0.0f ? 2 : 1);
    return harness::size_product(what, harness::size_sum(what, harness::size_sum(what, a_size(), b_size()), c_copies),
                                 sizeof(float));
  }
};

[[noreturn]] void throw_cublas(cublasStatus_t status, const char* what, const char* file, int line) {
  const std::string message = fmt::format("{}:{}: {} failed: {} ({})", file, line, what,
                                          cublasGetStatusString(status), cublasGetStatusName(status));
  if (status == CUBLAS_STATUS_ALLOC_FAILED) throw harness::OutOfMemory(message);
  // An execution failure may stem from a CUDA error that poisons the context: report that.
  if (status == CUBLAS_STATUS_EXECUTION_FAILED) HARNESS_CUDA_LAST_ERROR();
  throw harness::CudaError(message, static_cast<int>(status), false);
}

// A checked cuBLAS call, with its call site (the core has HARNESS_CUDA for the runtime only).
#define GEMM_CUBLAS(expr)                                                       \
  do {                                                                          \
    const cublasStatus_t gemm_cublas_status_ = (expr);                          \
    if (gemm_cublas_status_ != CUBLAS_STATUS_SUCCESS)                           \
      throw_cublas(gemm_cublas_status_, #expr, __FILE__, __LINE__);             \
  } while (0)

class GemmInstance final : public harness::Instance {
 public:
  GemmInstance(const Shape& shape, std::uint64_t seed)
      : s_(shape), a_(s_.a_size()), b_(s_.b_size()) {
    harness::fill_uniform(a_, seed, kStreamA, -1.0f, 1.0f);
    harness::fill_uniform(b_, seed, kStreamB, -1.0f, 1.0f);
    // C is an input only when beta != 0; with beta == 0 it is never read, so no values.
    if (s_.beta != 0.0f) {
      c_in_.resize(s_.c_size());
      harness::fill_uniform(c_in_, seed, kStreamC, -1.0f, 1.0f);
    }
  }
  GemmInstance(const GemmInstance&) = delete;
  GemmInstance& operator=(const GemmInstance&) = delete;
  ~GemmInstance() override {
    if (cublas_ != nullptr) cublasDestroy(cublas_);  // before the buffers it may use
  }

  void prepare(Backend backend) override {
    if (backend == Backend::cpu) {
      c_cpu_.resize(s_.c_size());
      return;
    }
    if (d_c_.size() == s_.c_size()) return;  // already resident
    d_a_ = harness::DeviceBuffer<float>(s_.a_size());
    d_b_ = harness::DeviceBuffer<float>(s_.b_size());
    d_c_ = harness::DeviceBuffer<float>(s_.c_size());
    d_a_.upload(a_);
    d_b_.upload(b_);
    if (s_.beta != 0.0f) {
      d_c_in_ = harness::DeviceBuffer<float>(s_.c_size());
      d_c_in_.upload(c_in_);
    }
  }

  // beta == 0: C is output only, so it is poisoned (a kernel that reads it or leaves
  // elements unwritten shows NaN / poison). beta != 0: C is also an input, restored to
  // C_in; an unwritten element then keeps C_in, which fails the check unless
  // alpha * (A B) happens to be within tolerance of (1 - beta) * C_in there.
  void reset_outputs(Backend backend, cudaStream_t stream) override {
    if (backend == Backend::cpu) {
      if (s_.beta == 0.0f) harness::poison_host(c_cpu_);
      else c_cpu_ = c_in_;
    } else {
      if (s_.beta == 0.0f) d_c_.poison(stream);
      else d_c_.copy_from_async(d_c_in_, stream);
    }
  }

  std::vector<harness::Output> read_outputs(Backend backend) override {
    harness::Output out{"C", {}};
    if (backend == Backend::cpu) {
      out.values = c_cpu_;
    } else {
      // The launch stream may be a non-blocking one, which cudaMemcpy does not wait for.
      HARNESS_CUDA(cudaDeviceSynchronize());
      out.values.resize(s_.c_size());
      d_c_.download(out.values);
    }
    return {std::move(out)};
  }

  std::size_t device_bytes() const override {
    return d_a_.bytes() + d_b_.bytes() + d_c_.bytes() + d_c_in_.bytes();
  }

  // One CUDA kernel of kernels/gemm on the device operands.
  template <typename Launch>
  void run_cuda(Launch&& launch, cudaStream_t stream) {
    HARNESS_CUDA(launch(s_.M, s_.N, s_.K, s_.alpha, d_a_.data(), d_b_.data(), s_.beta,
                        d_c_.data(), stream));
  }

  void run_cublas(harness::LaunchContext& ctx) {
    if (cublas_ == nullptr) {  // lazily: the first launch, never at static init
      cublasHandle_t handle = nullptr;
      GEMM_CUBLAS(cublasCreate(&handle));
      cublas_ = handle;
    }
    void* workspace = nullptr;
    std::size_t workspace_bytes = 0;
    if (ctx.workspace != nullptr) {
      workspace_bytes = kernels::gemm::kCublasWorkspaceBytes;
      workspace = ctx.workspace->get(0, workspace_bytes);
    }
    GEMM_CUBLAS(kernels::gemm::gemm_cublas(cublas_, s_.M, s_.N, s_.K, s_.alpha, d_a_.data(),
                                           d_b_.data(), s_.beta, d_c_.data(), ctx.stream,
                                           workspace, workspace_bytes));
  }

  void run_cpu() {
    kernels::gemm::gemm_cpu(s_.M, s_.N, s_.K, s_.alpha, a_.data(), b_.data(), s_.beta,
                            c_cpu_.data());
  }

 private:
  Shape s_;
  std::vector<float> a_, b_, c_in_;  // host inputs: A (M, K), B (K, N), C_in (M, N)
  std::vector<float> c_cpu_;         // the cpu backend's C (M, N)
  harness::DeviceBuffer<float> d_a_, d_b_, d_c_, d_c_in_;
  cublasHandle_t cublas_ = nullptr;
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
        harness::float_param("beta", 0.0, -1e6, 1e6,
                             "scale of the old C; 0: C is output only and never read"),
    };
  }
  std::optional<std::string> reject(const harness::Params& p) const override {
    // Every matrix must be indexable by the kernels (size_t offsets) and, above all,
    // fit: say so here rather than fail an allocation later.
    const Shape s(p);
    if (s.M < 1 || s.N < 1 || s.K < 1) return fmt::format("M, N, K must be >= 1 (M={} N={} K={})", s.M, s.N, s.K);
    constexpr std::size_t kMaxElements = std::size_t{1} << 34;  // 64 GiB of floats
    try {
      if (s.a_size() > kMaxElements || s.b_size() > kMaxElements || s.c_size() > kMaxElements)
        return "a matrix would exceed 2^34 elements (64 GiB)";
      (void)s.device_bytes();
    } catch (const harness::InputError& e) {
      return e.what();
    }
    return std::nullopt;
  }
  std::unique_ptr<harness::Instance> make_instance(const harness::Params& params,
                                                   std::uint64_t seed) const override {
    return std::make_unique<GemmInstance>(Shape(params), seed);
  }
  // FLOPs: the 2 M N K of the products and sums (the M N epilogue operations are not
  // counted, as is customary). Bytes: A, B read and C written once; C read too when
  // beta != 0.
  harness::Work work(const harness::Params& params) const override {
    const Shape s(params);
    const double c_bytes = 4.0 * static_cast<double>(s.c_size()) * (s.beta != 0.0f ? 2 : 1);
    return {2.0 * s.macs(),
            4.0 * static_cast<double>(s.a_size() + s.b_size()) + c_bytes};
  }
  harness::Tolerance tolerance(const harness::Params& params) const override {
    const Shape s(params);
    return plugins::gemm::tolerance_for(s.K, s.alpha, s.beta);
  }
  std::string tolerance_rule() const override { return plugins::gemm::kToleranceRule; }
  // The double-accumulating host reference while it takes seconds (M N K <= 2^30, e.g.
  // 1024^3: ~1 s on 16 cores); cuBLAS above.
  std::string reference_variant(const harness::Params& params) const override {
    return Shape(params).macs() <= plugins::gemm::kCpuReferenceMaxMacs ? "cpu" : "cublas";
  }
  std::size_t device_bytes(const harness::Params& params) const override {
    return Shape(params).device_bytes();
  }
};

GemmInstance& as_gemm(harness::Instance& instance) { return static_cast<GemmInstance&>(instance); }

// A launch function of kernels/gemm as a harness LaunchFn.
template <auto kLaunch>
void launch_kernel(harness::Instance& instance, harness::LaunchContext& ctx) {
  as_gemm(instance).run_cuda(kLaunch, ctx.stream);
}

void launch_cublas(harness::Instance& instance, harness::LaunchContext& ctx) {
  as_gemm(instance).run_cublas(ctx);
}

void launch_cpu(harness::Instance& instance, harness::LaunchContext&) { as_gemm(instance).run_cpu(); }

std::optional<std::string> cpu_constraint(const harness::Params& params) {
  const double macs = Shape(params).macs();
  if (macs > plugins::gemm::kCpuVariantMaxMacs)
    return fmt::format("cpu: {:.3g} multiply-adds exceed the host limit of 2^34 (minutes per run)",
                       macs);
  return std::nullopt;
}

std::size_t cublas_workspace(const harness::Params&) { return kernels::gemm::kCublasWorkspaceBytes; }

// Non-template overloads and default arguments cannot be template arguments directly.
cudaError_t atomic_auto(int M, int N, int K, float alpha, const float* A, const float* B,
                        float beta, float* C, cudaStream_t stream) {
  return kernels::gemm::gemm_atomic(M, N, K, alpha, A, B, beta, C, stream);
}
cudaError_t coarsened_default(int M, int N, int K, float alpha, const float* A,
                              const float* B, float beta, float* C, cudaStream_t stream) {
  return kernels::gemm::gemm_coarsened(M, N, K, alpha, A, B, beta, C, stream);
}

}  // namespace

HARNESS_REGISTER_PROBLEM(GemmProblem);
HARNESS_REGISTER_VARIANT(gemm, naive, cuda, "one thread per element of C, operands from global memory",
                         launch_kernel<&kernels::gemm::gemm_naive>);
HARNESS_REGISTER_VARIANT(gemm, atomic, cuda, "split-K over 32x32 smem tiles, partial sums atomicAdd'ed into beta*C",
                         launch_kernel<&atomic_auto>);
HARNESS_REGISTER_VARIANT(gemm, tiled, cuda, "32x32 shared-memory tiles, one element of C per thread",
                         launch_kernel<&kernels::gemm::gemm_tiled<32>>);
HARNESS_REGISTER_VARIANT(gemm, vectorized, cuda, "32x32x32 tiles, float4 loads/stores, 1x4 outputs per thread (scalar loads unless K%4 == N%4 == 0)",
                         launch_kernel<&kernels::gemm::gemm_vectorized>);
HARNESS_REGISTER_VARIANT(gemm, coarsened, cuda, "128x128x8 tiles, 8x8 outputs per thread, warp-tiled, double-buffered smem, cp.async",
                         launch_kernel<&coarsened_default>);
HARNESS_REGISTER_VARIANT(gemm, coarsened_k16, cuda, "coarsened with 128x128x16 tiles (fewer barriers, ~64 B register spills)",
                         launch_kernel<&kernels::gemm::gemm_coarsened<16>>);
HARNESS_REGISTER_VARIANT_FULL(gemm, cublas, cuda, "cublasSgemm, FP32 (CUBLAS_DEFAULT_MATH: no TF32)",
                              launch_cublas, nullptr, cublas_workspace);
HARNESS_REGISTER_VARIANT_IF(gemm, cpu, cpu, "host reference: double accumulation, blocked, all hardware threads",
                            launch_cpu, cpu_constraint);
