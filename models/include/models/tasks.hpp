#pragma once
// The engine's validation tasks (each also a GPU test, tests/models_tasks_gpu_test.cpp):
//  - least squares: a linear network (no nonlinearity) trained by full-batch gradient
//    descent must reach the closed-form least-squares solution (normal equations solved
//    on the host in double);
//  - the thesis's sine generators: denoising  x = sin(0.1 s + 0.05 e + phi_b) + U[-0.5, 0.5]
//    -> the clean sine, and inversion  x = sin(b + s + e/10) -> -x; a Transformer encoder
//    overfits one batch (as in the thesis) with MSE and Adam;
//  - sequence reversal: the encoder-decoder Transformer learns target = reversed source on
//    fresh random batches, judged by greedy decoding of unseen sequences.
// Each function runs on the current Context (its stream, GEMM and attention choice).
// `precision` bf16 trains the sine and reverse tasks in mixed precision (precision.hpp:
// float master weights and Adam, bf16 activations, the loss in float).
#include <cstdint>
#include <string>
#include <vector>

#include "models/precision.hpp"
#include "models/tensor.hpp"

namespace models {

struct LeastSquaresResult {
  double weight_rel_error = 0;  // ||W - W*|| / ||W*|| over weights and bias
  double loss = 0;              // final training MSE
  double closed_form_loss = 0;  // MSE of the closed-form solution
  int steps = 0;
};
// n samples, p features, q outputs; dtype f32 or f64.
LeastSquaresResult run_least_squares(DType dtype, int n = 512, int p = 8, int q = 3, int steps = 400,
                                     std::uint64_t seed = 1);

struct CurveResult {
  std::vector<double> losses;  // every step
  double final_loss = 0;       // mean of the last 10 steps
  int steps = 0;
};
enum class SineTask { denoise, invert };
// B sequences of S positions with E features; encoder of `layers` layers, d_model = E.
CurveResult run_sine_task(SineTask task, int steps = 1500, int B = 32, int S = 16, int E = 64, int layers = 2,
                          int heads = 2, std::uint64_t seed = 7, Precision precision = Precision::f32);

struct ReverseResult {
  std::vector<double> losses;
  double final_loss = 0;
  double token_accuracy = 0;     // greedy decoding of fresh sequences
  double sequence_accuracy = 0;  // fraction decoded entirely right
  int steps = 0;
};
// d_model 64, 2 + 2 layers; `heads` 2 (head_dim 32: in bf16 the attention runs the float
// core through casts) or 1 (head_dim 64: bf16 runs flash_tc, as ours_bf16 does).
ReverseResult run_reverse_task(int steps = 3000, int seq_len = 10, int vocab = 16, int batch = 64,
                               std::uint64_t seed = 11, Precision precision = Precision::f32, int heads = 2);

}  // namespace models
