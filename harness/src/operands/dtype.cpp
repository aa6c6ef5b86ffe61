#include "harness/dtype.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace harness {

std::string_view to_string(DType dtype) {
  switch (dtype) {
    case DType::f64: return "f64";
    case DType::f32: return "f32";
    case DType::bf16: return "bf16";
    case DType::f16: return "f16";
    case DType::i32: return "i32";
    case DType::u32: return "u32";
    case DType::i64: return "i64";
    case DType::u8: return "u8";
  }
  return "?";
}

std::optional<DType> dtype_from_string(std::string_view name) {
  for (DType d : kAllDTypes)
    if (to_string(d) == name) return d;
  return std::nullopt;
}

double unit_roundoff(DType dtype) {
  switch (dtype) {
    case DType::f64: return std::ldexp(1.0, -53);
    case DType::f32: return std::ldexp(1.0, -24);
    case DType::bf16: return std::ldexp(1.0, -8);
    case DType::f16: return std::ldexp(1.0, -11);
    default: return 0;
  }
}

namespace {
template <class T>
T load(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <class T>
void store(void* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}
// Rounded to the nearest integer and clamped to T's range (NaN: 0).
template <class T>
T to_integer(double x) {
  if (std::isnan(x)) return 0;
  const double r = std::nearbyint(x);
  if (r <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (r >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(r);
}
}  // namespace

double load_as_double(const void* p, DType dtype) {
  switch (dtype) {
    case DType::f64: return load<double>(p);
    case DType::f32: return load<float>(p);
    case DType::bf16: return __bfloat162float(load<__nv_bfloat16>(p));
    case DType::f16: return __half2float(load<__half>(p));
    case DType::i32: return load<std::int32_t>(p);
    case DType::u32: return load<std::uint32_t>(p);
    case DType::i64: return static_cast<double>(load<std::int64_t>(p));
    case DType::u8: return load<std::uint8_t>(p);
  }
  return 0;
}

void store_from_double(void* p, DType dtype, double value) {
  switch (dtype) {
    case DType::f64: store(p, value); break;
    case DType::f32: store(p, static_cast<float>(value)); break;
    // Through float: double -> float -> bf16 can round twice, but every value the fills
    // produce is a float already (24 random bits), so the result is correctly rounded.
    case DType::bf16: store(p, __float2bfloat16_rn(static_cast<float>(value))); break;
    case DType::f16: store(p, __float2half_rn(static_cast<float>(value))); break;
    case DType::i32: store(p, to_integer<std::int32_t>(value)); break;
    case DType::u32: store(p, to_integer<std::uint32_t>(value)); break;
    case DType::i64: store(p, to_integer<std::int64_t>(value)); break;
    case DType::u8: store(p, to_integer<std::uint8_t>(value)); break;
  }
}

bool is_poison(const void* p, DType dtype) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < size_of(dtype); ++i)
    if (b[i] != 0xFF) return false;
  return true;
}

}  // namespace harness
