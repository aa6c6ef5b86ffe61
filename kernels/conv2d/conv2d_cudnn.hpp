#pragma once
// The vendor reference: cudnnConvolutionForward on NCHW f32 tensors, x (N, C, H, W),
// w (K, C, S, S), y (N, K, H, W), padding R, stride 1, dilation 1, CUDNN_CROSS_CORRELATION
// (the same sum as ours, mask not flipped), FP32 math without tensor cores:
// CUDNN_FMA_MATH. (CUDNN_DEFAULT_MATH would allow TF32 tensor-core math on Ampere and
// later GPUs for f32 data; FMA_MATH restricts cuDNN to FP32 FMA kernels.)
// The algorithm is chosen once per shape, algorithm set and device by
// cudnnFindConvolutionForwardAlgorithm (cuDNN times every algorithm; the fastest FMA-math one
// of the allowed set that succeeds is kept), falling back to
// cudnnGetConvolutionForwardAlgorithm_v7's heuristics if Find fails. Allowed sets:
//   summation  IMPLICIT_GEMM, IMPLICIT_PRECOMP_GEMM, GEMM, DIRECT: each output an FP32 sum of
//              its products, the error model of our kernels (and of the problems' tolerance)
//   any        also FFT, FFT_TILING, WINOGRAD, WINOGRAD_NONFUSED (transforms: other rounding) The single-channel
// problem uses it with N = C = K = 1. Built only where CMake found cuDNN
// (KERNELS_CONV2D_HAVE_CUDNN).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

#include "conv2d/conv2d.hpp"

namespace kernels::conv2d {

// True when this build has cuDNN.
bool have_cudnn();

struct CudnnChoice {
  std::string error;      // non-empty: no algorithm could be chosen (why)
  std::string algorithm;  // e.g. "IMPLICIT_PRECOMP_GEMM"
  std::string method;     // "cudnnFindConvolutionForwardAlgorithm" or "...GetConvolutionForwardAlgorithm_v7"
  std::size_t workspace_bytes = 0;
  float find_ms = 0;   // cuDNN's own time for it (Find only; else 0)
  bool fresh = false;  // true on the call that made the choice (later calls: cached)
};

enum class CudnnAlgos { summation, any };

// The algorithm for this shape on the current device (chosen on the first call, then cached;
// the first call runs cuDNN's Find, which allocates and synchronizes).
CudnnChoice cudnn_choose(const LayerShape& s, CudnnAlgos allowed);

// y = conv(x, w) with the chosen algorithm; `workspace` holds at least
// cudnn_choose(s, allowed).workspace_bytes bytes. Empty on success, else the cuDNN error in words.
std::string cudnn_forward(const LayerShape& s, CudnnAlgos allowed, const float* x, const float* filters, float* y,
                          void* workspace, std::size_t workspace_bytes, cudaStream_t stream);

}  // namespace kernels::conv2d
