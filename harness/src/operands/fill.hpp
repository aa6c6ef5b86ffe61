#pragma once
// Filling an operand's elements from (seed, stream) in its dtype (see harness::Fill).
#include <cstdint>
#include <span>

#include "harness/operands.hpp"

namespace harness {

// `stream` is the generator stream (the fill's own, or the operand's position + 1).
// Large fills are spread over the host's threads; the values do not depend on how.
void fill_elements(std::span<std::byte> elements, DType dtype, const Fill& fill, std::uint64_t seed,
                   std::uint64_t stream);

}  // namespace harness
