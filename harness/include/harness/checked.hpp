#pragma once
// Checked size arithmetic for plugins. Element and byte counts come from user parameters
// (M * K * sizeof(float), B * H * N * N * 4, ...): a product that does not fit in 64 bits
// must be an error, never a silently wrapped small number that a check then lets through.
//
//   harness::checked_mul(a, b)            -> std::optional<std::size_t>, empty on overflow
//   harness::size_product("A bytes", M, K, 4)
//                                         -> std::size_t, or InputError "size overflows: ..."
// Negative operands count as overflow (a size is never negative).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "harness/error.hpp"

namespace harness {

namespace detail {
template <class T>
constexpr std::optional<std::size_t> as_size(T value) noexcept {
  static_assert(std::is_integral_v<T>, "sizes are integers");
  if constexpr (std::is_signed_v<T>) {
    if (value < 0) return std::nullopt;
  }
  if constexpr (sizeof(T) > sizeof(std::size_t)) {
    if (value > static_cast<T>(SIZE_MAX)) return std::nullopt;
  }
  return static_cast<std::size_t>(value);
}
}  // namespace detail

// a * b as std::size_t, or nothing when it overflows (or an operand is negative).
template <class A, class B>
constexpr std::optional<std::size_t> checked_mul(A a, B b) noexcept {
  const auto x = detail::as_size(a), y = detail::as_size(b);
  if (!x || !y) return std::nullopt;
  std::size_t out = 0;
  if (__builtin_mul_overflow(*x, *y, &out)) return std::nullopt;
  return out;
}

// a + b as std::size_t, or nothing when it overflows (or an operand is negative).
template <class A, class B>
constexpr std::optional<std::size_t> checked_add(A a, B b) noexcept {
  const auto x = detail::as_size(a), y = detail::as_size(b);
  if (!x || !y) return std::nullopt;
  std::size_t out = 0;
  if (__builtin_add_overflow(*x, *y, &out)) return std::nullopt;
  return out;
}

// The product of `factors` (integers of any type), or nothing when it overflows 64 bits
// (or a factor is negative).
template <class... T>
constexpr std::optional<std::size_t> checked_product(T... factors) noexcept {
  std::optional<std::size_t> out = std::size_t{1};
  ((out = out ? checked_mul(*out, factors) : std::nullopt), ...);
  return out;
}

// The message of a size that overflows: "size overflows 64-bit arithmetic: <what>".
inline std::string size_overflow_message(std::string_view what) {
  return "size overflows 64-bit arithmetic: " + std::string(what);
}

// The product of `factors`; InputError "size overflows 64-bit arithmetic: <what>" when it
// does not fit in std::size_t.
template <class... T>
std::size_t size_product(std::string_view what, T... factors) {
  if (const auto p = checked_product(factors...)) return *p;
  throw InputError(size_overflow_message(what));
}

// a + b; InputError "size overflows 64-bit arithmetic: <what>" on overflow.
inline std::size_t size_sum(std::string_view what, std::size_t a, std::size_t b) {
  if (const auto s = checked_add(a, b)) return *s;
  throw InputError(size_overflow_message(what));
}

}  // namespace harness
