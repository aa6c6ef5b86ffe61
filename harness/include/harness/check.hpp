#pragma once
// Comparison of a variant's outputs with the reference outputs, element by element, in
// each output's own dtype.
#include <cstddef>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "harness/dtype.hpp"
#include "harness/operands.hpp"

namespace harness {

// One output copied to the host, for checking: raw elements of `dtype`.
struct Output {
  std::string name;
  DType dtype = DType::f32;
  std::vector<std::byte> data;
  // Only a sample of the tensor's elements (some rows) was computed or compared; the
  // check then says it was a sampled check.
  bool sampled = false;
  std::optional<Tolerance> tolerance;  // overrides the check's default for this output
  RowSample sample;                    // compare only these rows (the rest: coverage scan)

  Output() = default;
  // A float output (problems that keep their own buffers: training, examples).
  Output(std::string name_, const std::vector<float>& values, bool sampled_ = false);
  template <class T>
  static Output of(std::string name, std::span<const T> values) {
    Output o;
    o.name = std::move(name);
    o.dtype = dtype_of<T>;
    o.data.resize(values.size_bytes());
    if (!values.empty()) std::memcpy(o.data.data(), values.data(), values.size_bytes());
    return o;
  }
  std::size_t count() const { return data.size() / size_of(dtype); }
  // Every element converted to float (tests and float-only tools).
  std::vector<float> floats() const {
    std::vector<float> out(count());
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(value(i));
    return out;
  }
  double value(std::size_t i) const { return load_as_double(data.data() + i * size_of(dtype), dtype); }
  bool poisoned(std::size_t i) const { return is_poison(data.data() + i * size_of(dtype), dtype); }
};

struct CheckResult {
  bool passed = false;
  std::size_t elements = 0;     // compared elements, all outputs together
  std::size_t mismatches = 0;   // finite elements outside the tolerance (integers: unequal)
  std::size_t nonfinite = 0;    // NaN or Inf where the reference is finite
  std::size_t unwritten = 0;    // still holding the poison pattern
  std::size_t l2_failures = 0;  // outputs whose own rel L2 error is over their tolerance's rel_l2
  double max_abs_error = 0;
  double rel_l2_error = 0;      // ||got - ref|| / ||ref|| over all finite elements
  Tolerance tolerance;          // of the first floating output (integers: exact unless set)
  bool sampled = false;         // only a sample of the elements was compared
  std::string worst;            // "C[12] got 1.5 want 1.25" (first output with the worst error)
  std::string summary() const;  // one line for the console
};

// Compares each output with the reference output of the same name. Floating outputs use
// their own tolerance, else `tolerance`; integer outputs are exact unless they carry one.
CheckResult compare_outputs(const std::vector<Output>& got, const std::vector<Output>& reference,
                            const Tolerance& tolerance);

// Outputs are poisoned with this byte before every run: for floats a NaN bit pattern no
// arithmetic produces.
inline constexpr unsigned char kPoisonByte = 0xFF;
inline constexpr std::uint32_t kPoisonBits = 0xFFFFFFFFu;

// Fills host memory with the poison pattern.
void poison_host(std::span<float> values);
void poison_bytes(std::span<std::byte> bytes);
bool is_poison(float value);

}  // namespace harness
