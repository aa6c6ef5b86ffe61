#pragma once
// Element types of operands: f64, f32, bf16, f16, i32, u32, i64, u8. The harness stores,
// fills, poisons and checks every one of them; a launch function sees the C++ type that
// dtype_of<T> maps to it (double, float, __nv_bfloat16, __half, int32_t, uint32_t,
// int64_t, uint8_t), so bf16 and f16 kernels take CUDA's own types.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace harness {

enum class DType { f64, f32, bf16, f16, i32, u32, i64, u8 };

inline constexpr DType kAllDTypes[] = {DType::f64, DType::f32, DType::bf16, DType::f16,
                                       DType::i32, DType::u32, DType::i64,  DType::u8};

std::string_view to_string(DType dtype);
std::optional<DType> dtype_from_string(std::string_view name);  // "bf16" -> DType::bf16

constexpr std::size_t size_of(DType dtype) {
  switch (dtype) {
    case DType::f64: case DType::i64: return 8;
    case DType::f32: case DType::i32: case DType::u32: return 4;
    case DType::bf16: case DType::f16: return 2;
    case DType::u8: return 1;
  }
  return 0;
}
constexpr bool is_floating(DType dtype) {
  return dtype == DType::f64 || dtype == DType::f32 || dtype == DType::bf16 || dtype == DType::f16;
}

// Unit roundoff of a floating dtype (2^-53, 2^-24, 2^-8, 2^-11); 0 for integers.
double unit_roundoff(DType dtype);

// The DType of a C++ element type (a compile error for any other type).
template <class T> struct DTypeOf;
template <> struct DTypeOf<double> { static constexpr DType value = DType::f64; };
template <> struct DTypeOf<float> { static constexpr DType value = DType::f32; };
template <> struct DTypeOf<__nv_bfloat16> { static constexpr DType value = DType::bf16; };
template <> struct DTypeOf<__half> { static constexpr DType value = DType::f16; };
template <> struct DTypeOf<std::int32_t> { static constexpr DType value = DType::i32; };
template <> struct DTypeOf<std::uint32_t> { static constexpr DType value = DType::u32; };
template <> struct DTypeOf<std::int64_t> { static constexpr DType value = DType::i64; };
template <> struct DTypeOf<std::uint8_t> { static constexpr DType value = DType::u8; };
template <class T> inline constexpr DType dtype_of = DTypeOf<std::remove_cv_t<T>>::value;

// One element at `p` (of type `dtype`) as a double: exact for every dtype but i64/u64
// values beyond 2^53.
double load_as_double(const void* p, DType dtype);
// Stores `value` rounded to `dtype` (round to nearest even; integers: rounded and clamped
// to the type's range) at `p`.
void store_from_double(void* p, DType dtype, double value);

// Outputs are poisoned with 0xFF bytes before every run. For floating dtypes that is a
// NaN no arithmetic produces; for integers it is -1 (or the type's maximum), a value a
// result may legitimately take, so an integer element counts as unwritten only where it
// holds the pattern and the reference does not.
bool is_poison(const void* p, DType dtype);

}  // namespace harness
