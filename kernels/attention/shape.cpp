// Shape validation and the default softmax scale (host only).
#include <cmath>
#include <string>

#include "attention.hpp"

namespace kernels::attention {

float Shape::effective_scale() const {
  return scale != 0.0f ? scale : 1.0f / std::sqrt(static_cast<float>(head_dim));
}

std::string shape_error(const Shape& s) {
  auto str = [](long long x) { return std::to_string(x); };
  if (s.batch < 1) return "batch (" + str(s.batch) + ") must be >= 1";
  if (s.heads < 1) return "heads (" + str(s.heads) + ") must be >= 1";
  if (s.kv_heads < 1) return "kv_heads (" + str(s.kv_heads) + ") must be >= 1";
  if (s.heads % s.kv_heads != 0)
    return "kv_heads (" + str(s.kv_heads) + ") must divide heads (" + str(s.heads) + ")";
  if (s.seq_len < 1) return "seq_len (" + str(s.seq_len) + ") must be >= 1";
  if (s.head_dim < 4 || s.head_dim % 4 != 0)
    return "head_dim (" + str(s.head_dim) + ") must be a positive multiple of 4";
  // Grids put heads in y and (b, h) pairs in z: both at most 65535.
  if (static_cast<long long>(s.batch) * s.heads > 65535)
    return "batch * heads (" + str(static_cast<long long>(s.batch) * s.heads) +
           ") must be <= 65535";
  if (!std::isfinite(s.scale)) return "scale must be finite";
  return {};
}

}  // namespace kernels::attention
