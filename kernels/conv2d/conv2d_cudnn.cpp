// cudnnConvolutionForward as the conv2d families' vendor reference (see conv2d_cudnn.hpp).
#include "conv2d/conv2d_cudnn.hpp"

#ifdef KERNELS_CONV2D_HAVE_CUDNN
#include <cudnn.h>

#include <map>
#include <mutex>
#include <tuple>
#endif

namespace kernels::conv2d {

#ifdef KERNELS_CONV2D_HAVE_CUDNN

namespace {

std::string describe(cudnnStatus_t s, const char* what) { return std::string(what) + ": " + cudnnGetErrorString(s); }

const char* algo_name(cudnnConvolutionFwdAlgo_t a) {
  switch (a) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM:
      return "IMPLICIT_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM:
      return "IMPLICIT_PRECOMP_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM:
      return "GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT:
      return "DIRECT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT:
      return "FFT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING:
      return "FFT_TILING";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD:
      return "WINOGRAD";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED:
      return "WINOGRAD_NONFUSED";
    default:
      return "unknown";
  }
}

// Everything one shape needs on one device, made on first use and kept for the process
// (descriptors are not rebuilt in the timed launches).
struct Plan {
  cudnnHandle_t handle = nullptr;  // shared per device
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  CudnnChoice choice;
};

using Key = std::tuple<int, int, int, int, int, int, int, bool>;  // device, n, c, h, w, k, r, any

std::mutex g_mutex;
std::map<int, cudnnHandle_t> g_handles;
std::map<Key, Plan> g_plans;

std::string make_descriptors(const LayerShape& s, Plan& p) {
  const int side = 2 * s.r + 1;
  if (cudnnStatus_t e = cudnnCreateTensorDescriptor(&p.x); e != CUDNN_STATUS_SUCCESS)
    return describe(e, "cudnnCreateTensorDescriptor");
  if (cudnnStatus_t e = cudnnCreateTensorDescriptor(&p.y); e != CUDNN_STATUS_SUCCESS)
    return describe(e, "cudnnCreateTensorDescriptor");
  if (cudnnStatus_t e = cudnnCreateFilterDescriptor(&p.w); e != CUDNN_STATUS_SUCCESS)
    return describe(e, "cudnnCreateFilterDescriptor");
  if (cudnnStatus_t e = cudnnCreateConvolutionDescriptor(&p.conv); e != CUDNN_STATUS_SUCCESS)
    return describe(e, "cudnnCreateConvolutionDescriptor");
  if (cudnnStatus_t e = cudnnSetTensor4dDescriptor(p.x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, s.n, s.c, s.h, s.w);
      e != CUDNN_STATUS_SUCCESS)
    return describe(e, "cudnnSetTensor4dDescriptor(x)");
  if (cudnnStatus_t e = cudnnSetTensor4dDescriptor(p.y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, s.n, s.k, s.h, s.w);
      e != CUDNN_STATUS_SUCCESS)
    return describe(e, "cudnnSetTensor4dDescriptor(y)");
  if (cudnnStatus_t e = cudnnSetFilter4dDescriptor(p.w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, s.k, s.c, side, side);
      e != CUDNN_STATUS_SUCCESS)
    return describe(e, "cudnnSetFilter4dDescriptor");
  if (cudnnStatus_t e =
          cudnnSetConvolution2dDescriptor(p.conv, s.r, s.r, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
      e != CUDNN_STATUS_SUCCESS)
    return describe(e, "cudnnSetConvolution2dDescriptor");
  if (cudnnStatus_t e = cudnnSetConvolutionMathType(p.conv, CUDNN_FMA_MATH); e != CUDNN_STATUS_SUCCESS)
    return describe(e, "cudnnSetConvolutionMathType(FMA)");
  return {};
}

bool summation(cudnnConvolutionFwdAlgo_t a) {
  return a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM || a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM ||
         a == CUDNN_CONVOLUTION_FWD_ALGO_GEMM || a == CUDNN_CONVOLUTION_FWD_ALGO_DIRECT;
}

// A result measured without tensor-core math. With FMA_MATH on the descriptor cuDNN should
// report FMA_MATH; DEFAULT_MATH is accepted too (the descriptor keeps FMA_MATH for the
// launches, so the executed kernel is restricted to FMA either way).
bool no_tensor_cores(cudnnMathType_t m) { return m == CUDNN_FMA_MATH || m == CUDNN_DEFAULT_MATH; }

// The fastest successful FMA-math result of the allowed set (cuDNN sorts them by time).
const cudnnConvolutionFwdAlgoPerf_t* pick(const cudnnConvolutionFwdAlgoPerf_t* perf, int count, CudnnAlgos allowed) {
  for (int i = 0; i < count; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS && no_tensor_cores(perf[i].mathType) &&
        (allowed == CudnnAlgos::any || summation(perf[i].algo)))
      return &perf[i];
  return nullptr;
}

std::string choose(const LayerShape& s, CudnnAlgos allowed, Plan& p) {
  if (std::string e = make_descriptors(s, p); !e.empty()) return e;
  constexpr int kMax = CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
  cudnnConvolutionFwdAlgoPerf_t perf[kMax];
  int returned = 0;
  std::string find_error;
  // Find runs the candidates on the handle's stream: the default stream here, not whatever
  // stream an earlier launch bound (it may be gone by now).
  if (cudnnStatus_t se = cudnnSetStream(p.handle, nullptr); se != CUDNN_STATUS_SUCCESS)
    return describe(se, "cudnnSetStream");
  cudnnStatus_t e = cudnnFindConvolutionForwardAlgorithm(p.handle, p.x, p.w, p.conv, p.y, kMax, &returned, perf);
  const cudnnConvolutionFwdAlgoPerf_t* best = e == CUDNN_STATUS_SUCCESS ? pick(perf, returned, allowed) : nullptr;
  if (best != nullptr) {
    p.choice.method = "cudnnFindConvolutionForwardAlgorithm";
    p.choice.find_ms = best->time;
  } else {
    find_error = e == CUDNN_STATUS_SUCCESS ? std::string("no allowed FMA-math algorithm succeeded")
                                           : describe(e, "cudnnFindConvolutionForwardAlgorithm");
    cudaGetLastError();  // Find may leave an allocation failure behind
    e = cudnnGetConvolutionForwardAlgorithm_v7(p.handle, p.x, p.w, p.conv, p.y, kMax, &returned, perf);
    if (e != CUDNN_STATUS_SUCCESS) return find_error + "; " + describe(e, "cudnnGetConvolutionForwardAlgorithm_v7");
    best = pick(perf, returned, allowed);
    if (best == nullptr) return find_error + "; cudnnGetConvolutionForwardAlgorithm_v7: no allowed FMA-math algorithm";
    p.choice.method = "cudnnGetConvolutionForwardAlgorithm_v7 (Find failed: " + find_error + ")";
  }
  p.algo = best->algo;
  p.choice.algorithm = algo_name(best->algo);
  // The workspace this algorithm needs with these descriptors (Find's figure can be the
  // one of its own trial; ask again for the one the launch will use).
  std::size_t bytes = 0;
  if (e = cudnnGetConvolutionForwardWorkspaceSize(p.handle, p.x, p.w, p.conv, p.y, p.algo, &bytes);
      e != CUDNN_STATUS_SUCCESS)
    return describe(e, "cudnnGetConvolutionForwardWorkspaceSize");
  p.choice.workspace_bytes = bytes > best->memory ? bytes : best->memory;
  return {};
}

// The plan for this shape on the current device, made on first use. Caller holds g_mutex.
Plan& plan_for(const LayerShape& s, CudnnAlgos allowed, bool& fresh) {
  fresh = false;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    static Plan broken;
    broken.choice.error = "cudaGetDevice failed";
    return broken;
  }
  const Key key{device, s.n, s.c, s.h, s.w, s.k, s.r, allowed == CudnnAlgos::any};
  if (auto it = g_plans.find(key); it != g_plans.end()) return it->second;
  Plan& p = g_plans[key];
  fresh = true;
  auto h = g_handles.find(device);
  if (h == g_handles.end()) {
    cudnnHandle_t handle = nullptr;
    if (cudnnStatus_t e = cudnnCreate(&handle); e != CUDNN_STATUS_SUCCESS) {
      g_plans.erase(key);  // no plan kept: the next call tries again
      static Plan failed;  // (guarded by g_mutex like the maps)
      failed.choice = CudnnChoice{};
      failed.choice.error = describe(e, "cudnnCreate");
      return failed;
    }
    h = g_handles.emplace(device, handle).first;
  }
  p.handle = h->second;
  p.choice.error = choose(s, allowed, p);
  return p;
}

}  // namespace

bool have_cudnn() { return true; }

CudnnChoice cudnn_choose(const LayerShape& s, CudnnAlgos allowed) {
  const std::lock_guard<std::mutex> lock(g_mutex);
  bool fresh = false;
  CudnnChoice c = plan_for(s, allowed, fresh).choice;
  c.fresh = fresh;
  return c;
}

std::string cudnn_forward(const LayerShape& s, CudnnAlgos allowed, const float* x, const float* filters, float* y,
                          void* workspace, std::size_t workspace_bytes, cudaStream_t stream) {
  const std::lock_guard<std::mutex> lock(g_mutex);
  bool fresh = false;
  Plan& p = plan_for(s, allowed, fresh);
  if (!p.choice.error.empty()) return p.choice.error;
  if (workspace_bytes < p.choice.workspace_bytes) return "cudnn_forward: workspace smaller than the algorithm needs";
  if (cudnnStatus_t e = cudnnSetStream(p.handle, stream); e != CUDNN_STATUS_SUCCESS)
    return describe(e, "cudnnSetStream");
  const float alpha = 1.0f, beta = 0.0f;
  if (cudnnStatus_t e = cudnnConvolutionForward(p.handle, &alpha, p.x, x, p.w, filters, p.conv, p.algo, workspace,
                                                workspace_bytes, &beta, p.y, y);
      e != CUDNN_STATUS_SUCCESS)
    return describe(e, "cudnnConvolutionForward");
  return {};
}

#else

bool have_cudnn() { return false; }

CudnnChoice cudnn_choose(const LayerShape&, CudnnAlgos) {
  CudnnChoice c;
  c.error = "cuDNN was not found at build time";
  return c;
}

std::string cudnn_forward(const LayerShape&, CudnnAlgos, const float*, const float*, float*, void*, std::size_t,
                          cudaStream_t) {
  return "cuDNN was not found at build time";
}

#endif

}  // namespace kernels::conv2d
