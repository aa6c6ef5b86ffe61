// cudnnSoftmaxForward as the softmax family's vendor reference (see softmax_cudnn.hpp).
#include "softmax/softmax_cudnn.hpp"

#ifdef KERNELS_SOFTMAX_HAVE_CUDNN
#include <map>
#include <mutex>

#include <cudnn.h>
#endif

namespace kernels::softmax {

#ifdef KERNELS_SOFTMAX_HAVE_CUDNN

namespace {

std::string describe(cudnnStatus_t s, const char* what) { return std::string(what) + ": " + cudnnGetErrorString(s); }

// A handle per device, kept for the life of the process (the harness times many launches).
cudnnStatus_t handle_for_current_device(cudnnHandle_t& out) {
  static std::mutex mutex;
  static std::map<int, cudnnHandle_t> handles;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return CUDNN_STATUS_EXECUTION_FAILED;
  const std::lock_guard<std::mutex> lock(mutex);
  if (auto it = handles.find(device); it != handles.end()) {
    out = it->second;
    return CUDNN_STATUS_SUCCESS;
  }
  cudnnHandle_t h = nullptr;
  if (cudnnStatus_t s = cudnnCreate(&h); s != CUDNN_STATUS_SUCCESS) return s;
  handles.emplace(device, h);
  out = h;
  return CUDNN_STATUS_SUCCESS;
}

}  // namespace

bool have_cudnn() { return true; }

std::string cudnn_softmax(std::int64_t rows, std::int64_t cols, const void* x, void* y, bool bf16,
                          cudaStream_t stream) {
  if (rows <= 0 || cols <= 0 || rows > 0x7FFFFFFF || cols > 0x7FFFFFFF) return "cudnn_softmax: rows or cols out of int range";
  cudnnHandle_t handle = nullptr;
  if (cudnnStatus_t s = handle_for_current_device(handle); s != CUDNN_STATUS_SUCCESS) return describe(s, "cudnnCreate");
  if (cudnnStatus_t s = cudnnSetStream(handle, stream); s != CUDNN_STATUS_SUCCESS) return describe(s, "cudnnSetStream");
  cudnnTensorDescriptor_t desc = nullptr;
  if (cudnnStatus_t s = cudnnCreateTensorDescriptor(&desc); s != CUDNN_STATUS_SUCCESS)
    return describe(s, "cudnnCreateTensorDescriptor");
  std::string error;
  cudnnStatus_t s = cudnnSetTensor4dDescriptor(desc, CUDNN_TENSOR_NCHW, bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT,
                                               static_cast<int>(rows),
                                               static_cast<int>(cols), 1, 1);
  if (s != CUDNN_STATUS_SUCCESS) {
    error = describe(s, "cudnnSetTensor4dDescriptor");
  } else {
    const float alpha = 1.0f, beta = 0.0f;
    s = cudnnSoftmaxForward(handle, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE, &alpha, desc, x, &beta, desc, y);
    if (s != CUDNN_STATUS_SUCCESS) error = describe(s, "cudnnSoftmaxForward");
  }
  cudnnDestroyTensorDescriptor(desc);
  return error;
}

#else

bool have_cudnn() { return false; }

std::string cudnn_softmax(std::int64_t, std::int64_t, const void*, void*, bool, cudaStream_t) {
  return "cuDNN was not found at build time";
}

#endif

}  // namespace kernels::softmax
