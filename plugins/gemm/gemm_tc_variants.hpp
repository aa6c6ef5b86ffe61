#pragma once
// The tensor-core gemm variants' pieces (gemm_problem.cpp registers them as `wgmma` and
// `mma`), for `auto` (gemm_auto_variant.cpp), which picks one of them in the reduced-precision
// dtypes: launch, the constraint that says why a shape or device cannot run, and the
// workspace.
#include <cstddef>
#include <optional>
#include <string>

#include "harness/params.hpp"
#include "harness/variant.hpp"

namespace plugins::gemm {

struct TcVariant {
  void (*launch)(harness::LaunchContext&);
  std::optional<std::string> (*constraint)(const harness::Params&);
  std::size_t (*workspace)(const harness::Params&);
  std::string (*config)(const harness::Params&);  // the variant's own config (wgmma: its plan)
};

const TcVariant& wgmma_variant();
const TcVariant& mma_variant();

}  // namespace plugins::gemm
