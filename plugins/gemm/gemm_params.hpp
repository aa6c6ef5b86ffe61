#pragma once
// The gemm problem's `dtype` and `layout` parameters as the variants read them, and the
// constraints that follow from them. Every file that registers a gemm variant uses these
// (so that an FP32-only kernel skips other dtypes and layouts with the same reason).
//
//   dtype  f32 | tf32 | bf16 | f16 (default f32): storage and math of A, B, C;
//          fp8_e4m3: A, B e4m3 with per-tensor scales, C bf16 (gemm_fp8.hpp)
//   layout nn | nt | tn | tt (default nn): op(A), op(B) as cuBLAS; see
//          kernels/gemm/gemm_types.hpp for the stored shapes
#include <optional>
#include <string>

#include <cuda_runtime_api.h>

#include "gemm/gemm_types.hpp"
#include "harness/dtype.hpp"
#include "harness/params.hpp"

namespace plugins::gemm {

using kernels::gemm::Layout;
using kernels::gemm::TcDType;

// The parameters as enums (absent: the defaults f32, nn, for Params built by hand).
inline TcDType dtype_param(const harness::Params& p) {
  return p.has("dtype") ? kernels::gemm::tc_dtype_from_string(p.get_string("dtype")).value_or(TcDType::f32)
                        : TcDType::f32;
}
inline Layout layout_param(const harness::Params& p) {
  return p.has("layout") ? kernels::gemm::layout_from_string(p.get_string("layout")).value_or(Layout::nn)
                         : Layout::nn;
}

// The harness dtype A and B are stored in (tf32 is stored as f32; fp8 e4m3 as raw bytes, u8,
// which the harness fills through gemm_fp8.hpp's quantizing fill).
inline harness::DType storage_dtype(TcDType d) {
  switch (d) {
    case TcDType::bf16: return harness::DType::bf16;
    case TcDType::f16: return harness::DType::f16;
    case TcDType::fp8_e4m3: return harness::DType::u8;
    case TcDType::f32:
    case TcDType::tf32: break;
  }
  return harness::DType::f32;
}
// The harness dtype of C: A's, except bf16 for fp8.
inline harness::DType output_dtype(TcDType d) {
  return d == TcDType::fp8_e4m3 ? harness::DType::bf16 : storage_dtype(d);
}

// The constraint of every FP32 kernel written for row-major A (M, K), B (K, N): it runs
// only at dtype f32 and layout nn, and says why otherwise.
inline std::optional<std::string> fp32_nn_only(const harness::Params& p) {
  const TcDType d = dtype_param(p);
  const Layout l = layout_param(p);
  if (d != TcDType::f32)
    return "FP32 kernel: runs dtype f32 only (got dtype " + std::string(kernels::gemm::to_string(d)) + ")";
  if (l != Layout::nn)
    return "FP32 kernel: runs layout nn only (got layout " + std::string(kernels::gemm::to_string(l)) + ")";
  return std::nullopt;
}

// Compute capability (major * 10 + minor) of the current device; nothing without one.
inline std::optional<int> current_compute_capability() {
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky-free error of a machine without a GPU
    return std::nullopt;
  }
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return std::nullopt;
  }
  return major * 10 + minor;
}

// Skip reason for a reduced-precision dtype on a device without it: bf16 and tf32 need
// compute capability 8.0 (Ampere) for cuBLAS and mma alike, fp8 8.9 (Ada: FP8 tensor cores); f16 tensor cores exist from
// 7.0 but the mma kernel's m16n8k16 needs 8.0 too (`mma_variant` says so). Nothing where
// no device can be asked (the run itself then reports the missing device).
inline std::optional<std::string> dtype_supported(const harness::Params& p, int min_cc_f16 = 70) {
  const TcDType d = dtype_param(p);
  if (d == TcDType::f32) return std::nullopt;
  const auto cc = current_compute_capability();
  if (!cc) return std::nullopt;
  const int need = d == TcDType::f16 ? min_cc_f16 : d == TcDType::fp8_e4m3 ? 89 : 80;
  if (*cc < need)
    return "dtype " + std::string(kernels::gemm::to_string(d)) + " needs compute capability " +
           std::to_string(need / 10) + "." + std::to_string(need % 10) + " (this GPU: " + std::to_string(*cc / 10) +
           "." + std::to_string(*cc % 10) + ")";
  return std::nullopt;
}

}  // namespace plugins::gemm
