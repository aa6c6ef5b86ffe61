#pragma once
// Element types and operand layouts of the tensor-core GEMMs (mma, cuBLAS in every
// dtype), shared by kernels, plugins and models. No CUDA or harness dependency.
//
//   C (M, N) = alpha * op(A) (M, K) * op(B) (K, N) + beta * C, C always row-major (ld N).
//
// Layout, as cuBLAS's op(A), op(B) (first letter A, second B):
//   A 'n': stored (M, K) row-major, ld K      A 't': stored (K, M) row-major, ld M
//   B 'n': stored (K, N) row-major, ld N      B 't': stored (N, K) row-major, ld K
// So `nt` is C = A B^T (a linear layer's forward with weights (out, in)), `tn` is
// C = A^T B (its weight gradient), `nn` its input gradient: a training step needs no
// explicit transposes.
//
// Dtype: f32 (float storage, FP32 math), tf32 (float storage, inputs rounded to TF32 --
// 10 explicit mantissa bits -- products summed in FP32), bf16 and f16 (A, B, C in that
// type, FP32 accumulation, alpha and beta float, C rounded to the type once at the end),
// fp8_e4m3 (A and B in FP8 E4M3 with per-tensor f32 scales, C in bf16:
//   C = scale_a * scale_b * (A_q B_q^T), FP32 accumulation, alpha = 1 and beta = 0 only;
//   the tensor cores read fp8 operands K-major only, so layout nt: A (M, K), B (N, K)).
#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>

namespace kernels::gemm {

enum class Layout { nn, nt, tn, tt };
enum class TcDType { f32, tf32, bf16, f16, fp8_e4m3 };

inline constexpr std::string_view kLayoutNames[] = {"nn", "nt", "tn", "tt"};
inline constexpr std::string_view kTcDTypeNames[] = {"f32", "tf32", "bf16", "f16", "fp8_e4m3"};
inline constexpr int kTcDTypeCount = static_cast<int>(std::size(kTcDTypeNames));

constexpr std::string_view to_string(Layout l) { return kLayoutNames[static_cast<int>(l)]; }
constexpr std::string_view to_string(TcDType d) { return kTcDTypeNames[static_cast<int>(d)]; }

constexpr std::optional<Layout> layout_from_string(std::string_view s) {
  for (int i = 0; i < 4; ++i)
    if (kLayoutNames[i] == s) return static_cast<Layout>(i);
  return std::nullopt;
}
constexpr std::optional<TcDType> tc_dtype_from_string(std::string_view s) {
  for (int i = 0; i < kTcDTypeCount; ++i)
    if (kTcDTypeNames[i] == s) return static_cast<TcDType>(i);
  return std::nullopt;
}

constexpr bool a_transposed(Layout l) { return l == Layout::tn || l == Layout::tt; }
constexpr bool b_transposed(Layout l) { return l == Layout::nt || l == Layout::tt; }

// Bytes of one stored element of A and B (f32 and tf32: 4, bf16 and f16: 2, fp8: 1).
constexpr int element_bytes(TcDType d) {
  return d == TcDType::f32 || d == TcDType::tf32 ? 4 : d == TcDType::fp8_e4m3 ? 1 : 2;
}
// Bytes of one element of C: the inputs' size, except fp8 whose C is bf16 (2).
constexpr int output_bytes(TcDType d) { return d == TcDType::fp8_e4m3 ? 2 : element_bytes(d); }

// Stored shapes (rows, cols) of A and B, row-major; the leading dimension is cols.
struct StoredShape {
  std::int64_t rows, cols;
};
constexpr StoredShape stored_a(Layout l, std::int64_t M, std::int64_t K) {
  return a_transposed(l) ? StoredShape{K, M} : StoredShape{M, K};
}
constexpr StoredShape stored_b(Layout l, std::int64_t K, std::int64_t N) {
  return b_transposed(l) ? StoredShape{N, K} : StoredShape{K, N};
}

}  // namespace kernels::gemm
