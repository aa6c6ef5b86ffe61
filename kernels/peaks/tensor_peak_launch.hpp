#pragma once
// The per-architecture halves of tensor_peak.hpp (tensor_peak.cpp picks one by compute
// capability): the sm_90a wgmma kernel and the sm_80+ mma.sync kernel.
#include <cuda_runtime_api.h>

#include "peaks/tensor_peak.hpp"

namespace kernels::peaks {

double wgmma_peak_flops(TensorType t, int blocks, int iterations);
cudaError_t wgmma_peak_launch(TensorType t, int blocks, int iterations, float* sink, cudaStream_t stream);

double mma_peak_flops(TensorType t, int blocks, int iterations);
cudaError_t mma_peak_launch(TensorType t, int blocks, int iterations, float* sink, cudaStream_t stream);

}  // namespace kernels::peaks
