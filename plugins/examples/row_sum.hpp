#pragma once
// The `row_sum` family (docs/adding-a-family.md walks through it): the sum of every row
// of an integer matrix (i32, exact) and of a bf16 matrix (bf16 out, f32 accumulation).
#include "harness/registry.hpp"

namespace examples {

void register_row_sum(harness::Registry& registry);

}  // namespace examples
