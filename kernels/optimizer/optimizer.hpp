#pragma once
// Element-wise optimizer updates (the A100 slides' "Element-Wise Operations"), f32:
//   sgd:  w -= lr * g
//   adam: m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;         (the slides' v and r)
//         w -= lr * (m / c1) / (sqrt(v / c2) + eps),  c1 = 1 - b1^t, c2 = 1 - b2^t
//         (bias correction as in the thesis' eq. 3.5; c1 = c2 = 1 gives the slides' form)
// Memory bound: adam reads w, g, m, v and writes w, m, v (28 bytes per parameter), sgd
// reads w, g and writes w (12 bytes).
//
// The ladder for adam: `adam` (one plain kernel per tensor, a thread per element),
// `adam_vectorized` (float4 with scalar head and tail, still one launch per tensor),
// `adam_fused` (every tensor of a list in one launch through a device array of tensor
// descriptors, like a multi-tensor apply). Launch functions return the launch status.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <cuda_runtime_api.h>

namespace kernels::optimizer {

// Adam's constants as the kernels take them (f32), computed once on the host in double.
struct AdamConfig {
  float lr, b1, one_minus_b1, b2, one_minus_b2, eps;
  float c1, c2;  // bias corrections 1 - b1^t, 1 - b2^t (1 and 1 without bias correction)
};
AdamConfig make_adam_config(double lr, double b1, double b2, double eps, std::int64_t step, bool bias_correction);

cudaError_t sgd(float* w, const float* g, std::size_t n, float lr, cudaStream_t stream);
cudaError_t adam(float* w, const float* g, float* m, float* v, std::size_t n, const AdamConfig& c, cudaStream_t stream);
cudaError_t adam_vectorized(float* w, const float* g, float* m, float* v, std::size_t n, const AdamConfig& c,
                            cudaStream_t stream);

// One tensor of a fused update: its four arrays, its length, and the index of its first
// chunk of kFusedChunk elements in the launch (the grid has one block per chunk).
struct TensorDesc {
  float* w;
  const float* g;
  float* m;
  float* v;
  std::int64_t n;
  std::int64_t first_chunk;
};
inline constexpr std::int64_t kFusedChunk = 8192;  // elements per block of adam_fused

// Descriptors of tensors of `sizes` laid end to end in w, g, m, v (the concatenation),
// with their first_chunk filled in; `chunks` receives the total (the grid size).
std::vector<TensorDesc> fused_descriptors(const std::vector<std::int64_t>& sizes, float* w, const float* g, float* m,
                                          float* v, std::int64_t& chunks);
// `descs`: `count` descriptors in device memory (from fused_descriptors), `chunks` blocks.
cudaError_t adam_fused(const TensorDesc* descs, int count, std::int64_t chunks, const AdamConfig& c,
                       cudaStream_t stream);

// References on the host, in double from the f32 inputs and the double hyperparameters,
// each result rounded to f32 once.
void cpu_sgd(float* w, const float* g, std::size_t n, double lr);
void cpu_adam(float* w, const float* g, float* m, float* v, std::size_t n, double lr, double b1, double b2,
              double eps, std::int64_t step, bool bias_correction);

// The parameter tensors of the seed Transformer (the A100 slides' configuration:
// d_model 512, hidden 2048, 6 encoder + 6 decoder layers, 8 heads, vocabulary 6880),
// element counts in model order (see optimizer_layout.cpp for the list).
std::vector<std::int64_t> seed_transformer_sizes();

}  // namespace kernels::optimizer
