#pragma once
// The exponentials of kernels/arch/numeric.cuh run on the device over x[0 .. n):
// poly[i] = poly_exp2(x[i]) (FMA pipe), mufu[i] = fast_exp2(x[i]) (MUFU.EX2).
#include <cuda_runtime.h>

cudaError_t probe_exp2(const float* x, float* poly, float* mufu, int n);
