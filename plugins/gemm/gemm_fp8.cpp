// dtype fp8_e4m3 of the gemm problem: the quantizing fill, the alpha/beta rule, and the fp8
// paths of the wgmma, cublas and cpu variants (see gemm_fp8.hpp).
#include "gemm_fp8.hpp"

#include <mutex>
#include <span>
#include <vector>

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <fmt/format.h>

#include "gemm/gemm_cublaslt_fp8.hpp"
#include "gemm/gemm_reference.hpp"
#include "gemm/gemm_types.hpp"
#include "gemm/gemm_wgmma.hpp"
#include "gemm_params.hpp"
#include "harness/cuda_check.hpp"
#include "harness/random.hpp"

namespace plugins::gemm {
namespace {

namespace kg = kernels::gemm;

struct Dims {
  int M, N, K;
  explicit Dims(const harness::Params& p)
      : M(static_cast<int>(p.get_int("M"))), N(static_cast<int>(p.get_int("N"))), K(static_cast<int>(p.get_int("K"))) {}
};

// e4m3 byte of x / scale (round to nearest even, saturated to +-448); zero -> +-2^-9.
std::uint8_t quantize(float x, float scale) {
  const auto q = static_cast<std::uint8_t>(__nv_cvt_float_to_fp8(x / scale, __NV_SATFINITE, __NV_E4M3));
  if ((q & 0x7F) == 0) return static_cast<std::uint8_t>((x < 0 ? 0x80 : 0x00) | 0x01);
  return q;
}

}  // namespace

std::string fp8_config(const harness::Params& p) {
  return dtype_param(p) == TcDType::fp8_e4m3 ? std::string(kFp8Config) : std::string();
}

harness::Fill fp8_fill(float scale, std::uint64_t stream) {
  return harness::custom_fill([scale, stream](std::span<std::byte> bytes, std::uint64_t seed) {
    std::vector<float> x(bytes.size());
    harness::fill_uniform(x, seed, stream, -1.0f, 1.0f);
    for (std::size_t i = 0; i < x.size(); ++i) bytes[i] = static_cast<std::byte>(quantize(x[i], scale));
  });
}

std::optional<std::string> fp8_rejects(const harness::Params& p) {
  if (dtype_param(p) != TcDType::fp8_e4m3) return std::nullopt;
  if (p.get_float("alpha") != 1.0 || p.get_float("beta") != 0.0)
    return fmt::format("dtype fp8_e4m3 takes alpha 1 and beta 0 only (C = scale_a scale_b A B^T, bf16 C never read); "
                       "got alpha {} beta {}",
                       p.get_float("alpha"), p.get_float("beta"));
  return std::nullopt;
}

std::optional<std::string> fp8_wgmma_constraint(const harness::Params& p) {
  const Dims d(p);
  const Layout l = layout_param(p);
  // Layout and alignment first: host arithmetic, the same skip on every machine.
  if (const char* why = kg::gemm_wgmma_fp8_unsupported(kg::a_transposed(l), kg::b_transposed(l), d.K))
    return fmt::format("wgmma: {}", why);
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return std::nullopt;  // no device: the run reports that, not this variant
  }
  if (const char* why = kg::gemm_wgmma_unsupported(device, kg::a_transposed(l), kg::b_transposed(l), d.M, d.N, d.K, 1))
    return fmt::format("wgmma: {}", why);
  return std::nullopt;
}

std::optional<std::string> fp8_cublas_constraint(const harness::Params& p) {
  const Dims d(p);
  if (layout_param(p) != Layout::nt)
    return fmt::format("cublas: layout: cuBLASLt's FP8 matmul takes the TN format only, row-major layout nt (got {})",
                       kg::to_string(layout_param(p)));
  // Without a device only the shape rules apply (the run reports the missing device).
  const int cc = current_compute_capability().value_or(kg::kCublasLtFp8MinComputeCapability);
  if (const char* why = kg::gemm_cublaslt_fp8_unsupported(cc, d.M, d.N, d.K)) {
    if (cc < kg::kCublasLtFp8MinComputeCapability)
      return fmt::format("cublas: {} (this GPU: {}.{})", why, cc / 10, cc % 10);
    return fmt::format("cublas: {}", why);
  }
  return std::nullopt;
}

std::size_t fp8_wgmma_workspace(const harness::Params& p) {
  const Dims d(p);
  return kg::gemm_wgmma_splitk_workspace_bytes(d.M, d.N, d.K, 1);
}

void launch_wgmma_fp8(harness::LaunchContext& ctx) {
  const Dims d(*ctx.params);
  const std::size_t bytes = kg::gemm_wgmma_splitk_workspace_bytes(d.M, d.N, d.K, 1);
  void* workspace = bytes > 0 ? ctx.workspace->get(0, bytes) : nullptr;
  HARNESS_CUDA(kg::gemm_wgmma_fp8_e4m3(d.M, d.N, d.K, kFp8ScaleA, kFp8ScaleB,
                                       reinterpret_cast<const __nv_fp8_e4m3*>(ctx.in<std::uint8_t>("A")),
                                       reinterpret_cast<const __nv_fp8_e4m3*>(ctx.in<std::uint8_t>("B")),
                                       ctx.out<__nv_bfloat16>("C"), ctx.stream, {}, workspace, bytes));
}

constexpr int kFp8ScaleBSlot = 4;  // floats: 16 bytes after scale_a

cublasStatus_t launch_cublas_fp8(harness::LaunchContext& ctx, void* workspace, std::size_t workspace_bytes) {
  // One handle and one pair of device scales for the process (created at the first launch,
  // never at static-initialization time; they live until the process ends).
  static std::mutex mutex;
  static cublasLtHandle_t handle = nullptr;
  // {scale_a, pad, pad, pad, scale_b}: cuBLASLt wants each scale pointer 16-byte aligned
  // (a pair of adjacent floats made every FP8 matmul CUBLAS_STATUS_NOT_SUPPORTED on an H100).
  static float* scales = nullptr;
  const std::lock_guard<std::mutex> lock(mutex);
  if (handle == nullptr) {
    if (cublasStatus_t s = cublasLtCreate(&handle); s != CUBLAS_STATUS_SUCCESS) {
      handle = nullptr;
      return s;
    }
  }
  if (scales == nullptr) {
    float* dev = nullptr;
    const float host[kFp8ScaleBSlot + 1] = {kFp8ScaleA, 0, 0, 0, kFp8ScaleB};
    HARNESS_CUDA(cudaMalloc(reinterpret_cast<void**>(&dev), sizeof(host)));
    HARNESS_CUDA(cudaMemcpy(dev, host, sizeof(host), cudaMemcpyHostToDevice));
    scales = dev;
  }
  const Dims d(*ctx.params);
  return kg::gemm_cublaslt_fp8_e4m3(handle, d.M, d.N, d.K, scales, scales + kFp8ScaleBSlot, ctx.in<std::uint8_t>("A"),
                                    ctx.in<std::uint8_t>("B"), ctx.out<__nv_bfloat16>("C"), ctx.stream, workspace,
                                    workspace_bytes);
}

void launch_cpu_fp8(harness::LaunchContext& ctx) {
  const Dims d(*ctx.params);
  kg::gemm_cpu_fp8_e4m3(layout_param(*ctx.params), d.M, d.N, d.K, kFp8ScaleA, kFp8ScaleB, ctx.in<std::uint8_t>("A"), ctx.in<std::uint8_t>("B"),
                        ctx.out<__nv_bfloat16>("C"));
}

}  // namespace plugins::gemm
