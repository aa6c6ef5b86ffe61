#pragma once
// Fused elementwise tails of the Transformer engine (models/ ops bias_act and
// add_layer_norm, docs/models.md "Fused kernels"), for every activation type of the engine:
//   S (storage of activations)   P (parameters, statistics, accumulation)
//   float                         float
//   double                        double      (gradient checks)
//   bf16 (__nv_bfloat16)          float       (mixed precision: one rounding per store)
// Conventions as nn.hpp / nn_bf16.hpp: contiguous row-major, asynchronous on `s`, nothing
// allocated (scratch is passed in), cudaErrorInvalidValue for bad arguments before any
// launch, else cudaGetLastError(). Deterministic: fixed summation orders, no atomics.
#include <cstddef>

#include <cuda_runtime_api.h>

#include "nn/nn_bf16.hpp"  // bf16, Act

namespace kernels::nn {

// ---- bias + activation ---------------------------------------------------------------------
// y[r, c] = act(x[r, c] + bias[c]); x, y (rows, cols), bias (cols). One kernel instead of
// bias_add + activation: x is read once, y written once, and x + b is not stored (the
// backward recomputes it from x, so x, the GEMM output without bias, is what is saved).
// y may alias x.
template <class S, class P>
cudaError_t bias_act_forward(Act act, const S* x, const P* bias, S* y, int rows, int cols,
                             cudaStream_t s);

// Given the forward's x, bias and dy = dL/dy (rows, cols):
//   dpre[r, c] = act'(x[r, c] + bias[c]) dy[r, c]        (the gradient of the GEMM output)
//   dbias[c]   = sum_r dpre[r, c]                         (in P, before dpre is rounded to S)
// In one pass over x and dy: blocks of (32 columns x kFusedChunkRows rows) write dpre and
// the column partials of their chunk of rows into `workspace` (chunks x cols, P); the
// partials of each column are then added by the last block of its column tile to finish
// when `counters` is given (one kernel: ceil(cols / 32) unsigned counters, zero on entry
// and left zero, not shared by launches in flight at the same time), else by a second
// small kernel, both in one fixed order (column_sums.cuh). Rows that fit in one chunk:
// dbias is written at once. The chunk size is a constant, so the sums are the same on
// every device and either way (deterministic). The chunks give rows / 64 times the
// parallelism of column_sum (one block per 32 columns whatever the row count): the reason
// to reduce here, in the same pass, rather than in a following column_sum.
// act == identity: dpre = dy, so x and bias are not read and dpre may be null (not written):
// the parallel bias gradient of a plain Linear. workspace: bias_act_backward_workspace
// elements of P (may be null when that is 0).
inline constexpr int kFusedChunkRows = 64;
std::size_t bias_act_backward_workspace(int rows, int cols);
// Whether bias_act_backward's identity case without dpre (a plain Linear's bias gradient)
// reads a thread's rows of a chunk all at once before adding them (column_sums.cuh kBatch):
// the same sums bit for bit, more loads in flight. On by default (H200, B = 4 N = 2048 step:
// the step's bias-gradient kernels 1.403 / 1.414 -> 1.339 / 1.327 ms by CUPTI, the step
// itself within its noise); HARNESS_BIAS_GRAD_BATCH=0 turns it off, read at the first
// call; set_bias_grad_row_batch overrides it (tests).
bool bias_grad_row_batch();
void set_bias_grad_row_batch(bool on);
template <class S, class P>
cudaError_t bias_act_backward(Act act, const S* x, const P* bias, const S* dy, S* dpre, P* dbias,
                              P* workspace, unsigned* counters, int rows, int cols, cudaStream_t s);

// ---- LayerNorm parameter gradients, parallel over rows -------------------------------------
// dgamma[c] = sum_r dy[r, c] (x[r, c] - mean[r]) rstd[r],  dbeta[c] = sum_r dy[r, c]
// (written, in P): layernorm_backward's column sums (nn.hpp), reduced as bias_act_backward's
// (chunks of kFusedChunkRows rows, the last block or a second kernel, same counters rule).
// With layernorm_backward_dx / layernorm_backward_dx_bf16, the whole LayerNorm backward.
// workspace: layernorm_param_grads_workspace elements of P (may be null when that is 0).
std::size_t layernorm_param_grads_workspace(int rows, int cols);
template <class S, class P>
cudaError_t layernorm_param_grads(const S* x, const P* mean, const P* rstd, const S* dy, P* dgamma,
                                  P* dbeta, P* workspace, unsigned* counters, int rows, int cols,
                                  cudaStream_t s);

// ---- residual add + LayerNorm ----------------------------------------------------------------
// sum = x + r (rounded to S, written: the backward's saved LayerNorm input) and
// y = LayerNorm(sum) with the math of layernorm_forward (nn.hpp): mean and the centred
// variance in P, computed from the stored (rounded) sum, so that the existing LayerNorm
// backward on (sum, mean, rstd) is exact for it. One warp per row, 8 rows per block; rows of
// up to 1024 elements are held in registers (x and r read once), longer rows re-read `sum`.
// mean, rstd (rows) may both be null (nothing saved). sum and y must not overlap x or r.
template <class S, class P>
cudaError_t add_layernorm_forward(const S* x, const S* r, const P* gamma, const P* beta, S* sum,
                                  S* y, P* mean, P* rstd, int rows, int cols, P eps,
                                  cudaStream_t s);

}  // namespace kernels::nn
