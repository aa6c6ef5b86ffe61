#pragma once
// The vendor reference: cudnnSoftmaxForward(CUDNN_SOFTMAX_ACCURATE,
// CUDNN_SOFTMAX_MODE_INSTANCE) over an NCHW tensor (rows, cols, 1, 1), i.e. a softmax over
// each row. Built only where CMake found cuDNN (KERNELS_SOFTMAX_HAVE_CUDNN).
#include <cstdint>
#include <string>

#include <cuda_runtime_api.h>

namespace kernels::softmax {

// True when this build has cuDNN.
bool have_cudnn();

// Empty on success, else the cuDNN or CUDA error in words. One cuDNN handle per device,
// created on first use and kept (creating one costs milliseconds); bound to `stream` per call.
std::string cudnn_softmax(std::int64_t rows, std::int64_t cols, const float* x, float* y, cudaStream_t stream);

}  // namespace kernels::softmax
