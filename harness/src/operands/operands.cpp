// Operand declarations, the view launch functions get, and checked byte counts.
#include "harness/operands.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "harness/checked.hpp"
#include "harness/error.hpp"

namespace harness {

std::string_view to_string(Role role) {
  switch (role) {
    case Role::input: return "input";
    case Role::output: return "output";
    case Role::inout: return "inout";
  }
  return "?";
}

namespace {
Fill make_fill(Fill::Kind kind, double a, double b) {
  Fill f;
  f.kind = kind;
  f.a = a;
  f.b = b;
  return f;
}
}  // namespace

Fill uniform(double lo, double hi) { return make_fill(Fill::Kind::uniform, lo, hi); }
Fill normal(double scale) { return make_fill(Fill::Kind::normal, scale, 0); }
Fill integers(std::int64_t lo, std::int64_t hi) {
  return make_fill(Fill::Kind::integers, static_cast<double>(lo), static_cast<double>(hi));
}
Fill custom_fill(std::function<void(std::span<std::byte>, std::uint64_t)> fill) {
  Fill f = make_fill(Fill::Kind::custom, 0, 0);
  f.custom = std::move(fill);
  return f;
}

std::size_t OperandSpec::count() const {
  std::size_t n = 1;
  for (const std::int64_t d : shape) {
    const auto p = checked_mul(n, d);
    if (!p) throw InputError(size_overflow_message(fmt::format("operand {} (shape {})", name, fmt::join(shape, "x"))));
    n = *p;
  }
  return n;
}

std::size_t OperandSpec::bytes() const {
  if (const auto b = checked_mul(count(), size_of(dtype))) return *b;
  throw InputError(size_overflow_message(fmt::format("operand {} bytes", name)));
}

OperandSpec input(std::string name, DType dtype, std::vector<std::int64_t> shape, Fill fill) {
  return {std::move(name), dtype, std::move(shape), Role::input, std::move(fill), std::nullopt, {}};
}
OperandSpec output(std::string name, DType dtype, std::vector<std::int64_t> shape) {
  return {std::move(name), dtype, std::move(shape), Role::output, {}, std::nullopt, {}};
}
OperandSpec inout(std::string name, DType dtype, std::vector<std::int64_t> shape, Fill fill) {
  return {std::move(name), dtype, std::move(shape), Role::inout, std::move(fill), std::nullopt, {}};
}

const Operands::Entry& Operands::at(std::string_view name) const {
  for (const auto& e : entries_)
    if (e.spec->name == name) return e;
  throw std::logic_error(fmt::format("no operand named '{}'", name));
}

bool Operands::has(std::string_view name) const {
  for (const auto& e : entries_)
    if (e.spec->name == name) return true;
  return false;
}

void* Operands::typed(std::string_view name, DType want, bool writable) const {
  const Entry& e = at(name);
  if (e.spec->dtype != want)
    throw std::logic_error(fmt::format("operand '{}' is {}, not {}", name, to_string(e.spec->dtype), to_string(want)));
  if (writable && !e.spec->is_output())
    throw std::logic_error(fmt::format("operand '{}' is an input: out<>() is for outputs and in/out operands", name));
  return e.data;
}

OperandBytes operand_bytes(std::span<const OperandSpec> specs) {
  constexpr const char* what = "operand bytes";
  OperandBytes b;
  for (const auto& s : specs) {
    const std::size_t n = s.bytes();
    // Device: the operand, plus the pristine copy an in/out operand is restored from.
    b.device = size_sum(what, b.device, s.role == Role::inout ? size_sum(what, n, n) : n);
    // Host: inputs twice (the post-timing re-check keeps a second seed's inputs);
    // outputs for the cpu backend, the reference, the re-check's reference and one
    // read-back; in/out operands also keep their filled values twice.
    const std::size_t host = size_product(what, n, s.role == Role::input ? 2 : s.role == Role::inout ? 6 : 4);
    b.host = size_sum(what, b.host, host);
  }
  return b;
}

}  // namespace harness
