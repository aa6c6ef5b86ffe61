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
// x, y: float, or __nv_bfloat16 when bf16 (CUDNN_DATA_BFLOAT16; alpha and beta stay float,
// as cuDNN takes them for every non-double type).
std::string cudnn_softmax(std::int64_t rows, std::int64_t cols, const void* x, void* y, bool bf16,
                          cudaStream_t stream);

}  // namespace kernels::softmax
