#pragma once
// Operands: the named inputs and outputs a problem declares, and the view of them that a
// launch function gets. The core owns every buffer: it allocates host and device memory,
// fills the inputs from the seed, uploads them, poisons the outputs before each run,
// restores in/out operands, reads outputs back and checks them against the reference.
//
//   std::vector<harness::OperandSpec> operands(const harness::Params& p) const override {
//     const auto n = p.get_int("n");
//     return {harness::input("x", harness::DType::f32, {n}, harness::uniform(-1, 1)),
//             harness::output("out", harness::DType::f32, {n})};
//   }
//   ...
//   void launch(harness::LaunchContext& ctx) {         // a variant's launch function
//     my_kernel(ctx.in<float>("x"), ctx.out<float>("out"), n, ctx.stream);
//   }
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "harness/dtype.hpp"

namespace harness {

enum class Backend { cpu, cuda };
std::string_view to_string(Backend backend);

// A result element passes when |got - ref| <= abs + rel * |ref|. rel_l2 > 0 adds a check on
// the whole output: ||got - ref|| / ||ref|| (Euclidean, over its compared elements) <=
// rel_l2. For outputs whose per-element error bound is far above their typical error
// (FP8: each rounding is 2^-4 relative, but the roundings of a sum have random signs), the
// element bound stays the sound worst case that catches garbage, and rel_l2 the
// statistical bound that catches a dropped scale or a missing tile.
struct Tolerance {
  double abs = 0;
  double rel = 0;
  double rel_l2 = 0;
};

enum class Role {
  input,   // filled from the seed, read by the variants
  output,  // poisoned before every run, checked after it
  inout,   // filled, restored to its filled values before every run, checked after it
};
std::string_view to_string(Role role);

// How an input is filled. Every kind is deterministic in (seed, stream, element index),
// so the same suite gives the same inputs on every machine. Floating dtypes get the
// value rounded to the dtype (to nearest even); integer dtypes get integers.
struct Fill {
  enum class Kind { uniform, normal, integers, custom };
  Kind kind = Kind::uniform;
  double a = -1, b = 1;           // uniform [a, b); normal: scale a; integers [a, b]
  std::uint64_t stream = 0;       // generator stream id (0: the operand's position + 1)
  // > 0: every block of this many elements is its own stream (stream << 32 | block index)
  // and blocks are filled in parallel: attention fills each head this way, so a head's
  // values do not depend on how many heads there are.
  std::size_t block = 0;
  // Kind::custom: writes every element (raw bytes of the operand's dtype) from the seed.
  std::function<void(std::span<std::byte> elements, std::uint64_t seed)> custom;

  Fill with_stream(std::uint64_t id) const { Fill f = *this; f.stream = id; return f; }
  Fill per_block(std::size_t elements) const { Fill f = *this; f.block = elements; return f; }
};
Fill uniform(double lo, double hi);
Fill normal(double scale = 1.0);
Fill integers(std::int64_t lo, std::int64_t hi);
Fill custom_fill(std::function<void(std::span<std::byte>, std::uint64_t seed)> fill);

// Outputs too large to check in full against a reference (attention at N = 2^18): only
// these rows of `width` elements are compared in value; every element of the variant's
// output is still scanned for never-written and non-finite values.
struct RowSample {
  std::int64_t width = 0;             // 0: the whole output is compared
  std::vector<std::int64_t> rows;
  bool active() const { return width > 0; }
};

struct OperandSpec {
  std::string name;
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;    // row-major; the element count is the product
  Role role = Role::input;
  Fill fill;                          // inputs and in/out operands
  std::optional<Tolerance> tolerance; // outputs: overrides the problem's rule
  RowSample sample;                   // outputs: a sampled check

  // The element count; InputError "size overflows 64-bit arithmetic: <name> ..." when the
  // shape's product (or its bytes) does not fit in 64 bits, or a dimension is negative.
  std::size_t count() const;
  std::size_t bytes() const;
  bool is_output() const { return role != Role::input; }
};

OperandSpec input(std::string name, DType dtype, std::vector<std::int64_t> shape, Fill fill);
OperandSpec output(std::string name, DType dtype, std::vector<std::int64_t> shape);
OperandSpec inout(std::string name, DType dtype, std::vector<std::int64_t> shape, Fill fill);

// The operands of one instance on one backend: host pointers for cpu variants, device
// pointers for cuda variants. Typed accessors check the dtype (std::logic_error on a
// mismatch, an unknown name, or out<> of an input).
class Operands {
 public:
  struct Entry {
    const OperandSpec* spec = nullptr;
    void* data = nullptr;
  };
  Operands() = default;
  Operands(Backend backend, std::vector<Entry> entries) : backend_(backend), entries_(std::move(entries)) {}

  Backend backend() const { return backend_; }
  const Entry& at(std::string_view name) const;  // std::logic_error when unknown
  bool has(std::string_view name) const;
  std::span<const Entry> entries() const { return entries_; }

  template <class T>
  const T* in(std::string_view name) const {
    return static_cast<const T*>(typed(name, dtype_of<T>, false));
  }
  template <class T>
  T* out(std::string_view name) const {
    return static_cast<T*>(typed(name, dtype_of<T>, true));
  }
  std::size_t count(std::string_view name) const { return at(name).spec->count(); }
  // An input, writable: for Problem::finish_inputs only, which derives inputs from
  // inputs once before any run (never from a launch function).
  template <class T>
  T* derived_input(std::string_view name) const {
    return static_cast<T*>(typed(name, dtype_of<T>, false));
  }

 private:
  void* typed(std::string_view name, DType want, bool writable) const;
  Backend backend_ = Backend::cpu;
  std::vector<Entry> entries_;
};

// Bytes the operands of a problem need (inputs, outputs, the pristine copies of in/out
// operands), computed with checked arithmetic (InputError on overflow).
struct OperandBytes {
  std::size_t device = 0;   // every operand resident once, plus a copy of each in/out one
  std::size_t host = 0;     // inputs (two seeds), the cpu backend's outputs, two references and one read-back
};
OperandBytes operand_bytes(std::span<const OperandSpec> specs);

}  // namespace harness
