#pragma once
// Comparison of a variant's outputs with the reference outputs.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "harness/problem.hpp"

namespace harness {

struct CheckResult {
  bool passed = false;
  std::size_t elements = 0;     // compared elements, all outputs together
  std::size_t mismatches = 0;   // finite elements outside the tolerance
  std::size_t nonfinite = 0;    // NaN or Inf where the reference is finite
  std::size_t unwritten = 0;    // still holding the poison pattern
  double max_abs_error = 0;
  double rel_l2_error = 0;      // ||got - ref|| / ||ref|| over all finite elements
  Tolerance tolerance;
  bool sampled = false;         // only a sample of the elements was compared
  std::string worst;            // "C[12] got 1.5 want 1.25" (first output with the worst error)
  std::string summary() const;  // one line for the console
};

// Compares each output with the reference output of the same name.
CheckResult compare_outputs(const std::vector<Output>& got, const std::vector<Output>& reference,
                            const Tolerance& tolerance);

// Fills host memory with the poison pattern.
void poison_host(std::span<float> values);
bool is_poison(float value);

}  // namespace harness
