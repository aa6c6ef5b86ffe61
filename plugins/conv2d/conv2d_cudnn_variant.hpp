#pragma once
// The cudnn variant's launch, shared by the conv2d and conv2d_layer problems: the algorithm
// cuDNN picks for a shape is printed once to stderr, e.g.
//   conv2d cudnn: N=8 C=64 H=56 W=56 K=64 r=1 [summation]: IMPLICIT_PRECOMP_GEMM by
//   cudnnFindConvolutionForwardAlgorithm (cuDNN's time 0.123 ms), workspace 0 bytes, FMA math
// and its workspace comes from the harness workspace (slot 0).
#include <fmt/format.h>

#include <cstdio>
#include <optional>
#include <string>

#include "conv2d/conv2d_cudnn.hpp"
#include "harness/cuda_check.hpp"
#include "harness/error.hpp"
#include "harness/variant.hpp"

namespace plugins::conv2d {

inline kernels::conv2d::CudnnAlgos cudnn_algos(const harness::Params& p) {
  return p.get_string("cudnn_algo") == "any" ? kernels::conv2d::CudnnAlgos::any
                                             : kernels::conv2d::CudnnAlgos::summation;
}

// The choice for this shape (made by cuDNN on the first call), printed when it is made.
inline kernels::conv2d::CudnnChoice cudnn_choice(const kernels::conv2d::LayerShape& s,
                                                 kernels::conv2d::CudnnAlgos algos) {
  auto c = kernels::conv2d::cudnn_choose(s, algos);
  if (c.fresh) {
    const char* set = algos == kernels::conv2d::CudnnAlgos::any ? "any" : "summation";
    if (c.error.empty())
      fmt::print(stderr,
                 "conv2d cudnn: N={} C={} H={} W={} K={} r={} [{}]: {} by {} (cuDNN's time {:.4f} ms), "
                 "workspace {} bytes, FMA math\n",
                 s.n, s.c, s.h, s.w, s.k, s.r, set, c.algorithm, c.method, c.find_ms, c.workspace_bytes);
    else
      fmt::print(stderr, "conv2d cudnn: N={} C={} H={} W={} K={} r={} [{}]: no algorithm: {}\n", s.n, s.c, s.h, s.w,
                 s.k, s.r, set, c.error);
  }
  return c;
}

inline std::size_t cudnn_workspace(const kernels::conv2d::LayerShape& s, const harness::Params& p) {
  return cudnn_choice(s, cudnn_algos(p)).workspace_bytes;
}

inline void cudnn_launch(harness::LaunchContext& ctx, const kernels::conv2d::LayerShape& s, const float* x,
                         const float* filters, float* y, const char* who) {
  const auto algos = cudnn_algos(*ctx.params);
  const auto choice = cudnn_choice(s, algos);
  std::string error = choice.error;
  if (error.empty()) {
    void* ws = choice.workspace_bytes > 0 ? ctx.workspace->get(0, choice.workspace_bytes) : nullptr;
    error = kernels::conv2d::cudnn_forward(s, algos, x, filters, y, ws, choice.workspace_bytes, ctx.stream);
  }
  if (!error.empty()) {
    HARNESS_CUDA_LAST_ERROR();  // a CUDA error behind a cuDNN failure is the one to report
    throw harness::CudaError(std::string(who) + ": " + error, 0, false);
  }
}

inline std::optional<std::string> cudnn_constraint(const harness::Params&) {
  if (!kernels::conv2d::have_cudnn()) return std::string("cuDNN was not found at build time");
  return std::nullopt;
}

}  // namespace plugins::conv2d
