#pragma once
// Neural-network kernels for the Transformer training engine (models/): elementwise ops,
// activations, LayerNorm, embedding, positional encoding, losses, optimizers, gradient
// clipping, attention layout changes, a transpose, a small GEMM and a naive attention.
// Plain CUDA with thin host launch functions; no harness includes.
//
// Types: every function is a template on T, explicitly instantiated for float and double
// (the training path runs in float; gradient checks run the same code in double).
//
// Layouts: contiguous row-major. "(rows, cols)" means rows of `cols` elements each.
//
// Conventions (as kernels/gemm and kernels/attention):
// - Every launch function enqueues on stream `s`, never synchronizes, allocates nothing,
//   and returns cudaErrorInvalidValue for bad arguments (a negative size, a null pointer
//   where elements exist) before launching anything, else cudaGetLastError() after its
//   launches (cudaSuccess means "enqueued").
// - Empty inputs (n == 0, rows == 0) launch nothing, except where an output still has to be
//   written (column_sum with rows == 0 writes zeros; the loss sums are written as 0).
// - Outputs may alias inputs only where stated: the elementwise ops (relu, gelu, add,
//   axpby, bias_add: an output may be one of the inputs, element for element) and
//   softmax_cross_entropy (dlogits may be logits). Everything else: no overlap.
// - Where pointers are 16-byte aligned (and row lengths a multiple of 16 bytes where rows
//   matter), the float path uses 16-byte vector loads and stores; other inputs run the
//   same kernels with scalar accesses (correct, slower).
// - Deterministic unless stated: column reductions (column_sum, LayerNorm dgamma/dbeta)
//   and the cross-entropy loss sum use a fixed summation order, no atomics. The exceptions
//   are embedding_backward, mse's loss_sum and sum_squares (atomicAdd of per-block
//   partials: the last bits of a float sum may differ between runs).
#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace kernels::nn {

// ---- bias and elementwise --------------------------------------------------------------

// y[r, c] = x[r, c] + bias[c]; x, y (rows, cols), bias (cols). y may alias x.
template <class T>
cudaError_t bias_add(const T* x, const T* bias, T* y, int rows, int cols, cudaStream_t s);

// dbias[c] = sum_r dy[r, c]: column sums of dy (rows, cols), written (not accumulated).
// Deterministic: a fixed-order reduction per column, no atomics.
template <class T>
cudaError_t column_sum(const T* dy, T* dbias, int rows, int cols, cudaStream_t s);

// y = max(x, 0);  dx = dy where x > 0, else 0 (x is the forward input).
template <class T>
cudaError_t relu_forward(const T* x, T* y, std::size_t n, cudaStream_t s);
template <class T>
cudaError_t relu_backward(const T* x, const T* dy, T* dx, std::size_t n, cudaStream_t s);

// GeLU, tanh approximation (PyTorch approximate='tanh'):
//   u = sqrt(2/pi) (x + 0.044715 x^3),  y = 0.5 x (1 + tanh u)
//   dy/dx = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) sqrt(2/pi) (1 + 3 * 0.044715 x^2)
// Backward takes the forward input x: dx = dy * dy/dx.
template <class T>
cudaError_t gelu_forward(const T* x, T* y, std::size_t n, cudaStream_t s);
template <class T>
cudaError_t gelu_backward(const T* x, const T* dy, T* dx, std::size_t n, cudaStream_t s);

// c = a + b (residual connections; c may alias a or b).
template <class T>
cudaError_t add(const T* a, const T* b, T* c, std::size_t n, cudaStream_t s);
// y = alpha x + beta y. BLAS semantics: beta == 0 writes alpha x without reading y (which
// may then hold NaN). Used for gradient accumulation (alpha 1, beta 1) and scaling.
template <class T>
cudaError_t axpby(T alpha, const T* x, T beta, T* y, std::size_t n, cudaStream_t s);
// x[i] = value.
template <class T>
cudaError_t fill(T* x, T value, std::size_t n, cudaStream_t s);

// ---- LayerNorm over the last dimension ---------------------------------------------------
// x, y (rows, cols); gamma, beta (cols); mean, rstd (rows):
//   mean_r = (1/cols) sum_c x[r, c]
//   var_r  = (1/cols) sum_c (x[r, c] - mean_r)^2           (biased, as PyTorch)
//   rstd_r = 1 / sqrt(var_r + eps)
//   y[r, c] = (x[r, c] - mean_r) rstd_r gamma[c] + beta[c]
// One warp per row; rows of up to 1024 floats (512 doubles) that are 16-byte aligned are
// held in registers (one read of x), others are re-read from global memory (L1 hits).
// mean and rstd may be null (inference: nothing saved).
template <class T>
cudaError_t layernorm_forward(const T* x, const T* gamma, const T* beta, T* y, T* mean,
                              T* rstd, int rows, int cols, T eps, cudaStream_t s);

// Given dy (rows, cols) and the forward's x, gamma, mean, rstd:
//   xhat = (x - mean) rstd,  g = dy gamma
//   dx = rstd (g - mean_c(g) - xhat mean_c(g xhat))           (rows, cols)
//   dgamma[c] = sum_r dy[r, c] xhat[r, c],  dbeta[c] = sum_r dy[r, c]     (cols)
// dx, dgamma, dbeta are written (not accumulated); the column sums are deterministic.
// Two kernels: dx one warp per row, then dgamma/dbeta by a column reduction.
template <class T>
cudaError_t layernorm_backward(const T* x, const T* gamma, const T* mean, const T* rstd,
                               const T* dy, T* dx, T* dgamma, T* dbeta, int rows, int cols,
                               cudaStream_t s);
// The dx part alone (the first kernel of layernorm_backward; nn_fused.hpp has the
// row-parallel dgamma / dbeta).
template <class T>
cudaError_t layernorm_backward_dx(const T* x, const T* gamma, const T* mean, const T* rstd,
                                  const T* dy, T* dx, int rows, int cols, cudaStream_t s);

// ---- Embedding and positional encoding ---------------------------------------------------
// out[r, :] = table[ids[r], :]; ids (rows), table (vocab, dim), out (rows, dim).
// ids must be < vocab (the table's row count, which these functions do not know); a
// negative id is padding: its output row is zero and it receives no gradient.
template <class T>
cudaError_t embedding_forward(const int* ids, const T* table, T* out, int rows, int dim,
                              cudaStream_t s);
// dtable[ids[r], :] += dout[r, :] with atomicAdd (dtable zeroed by the caller; repeated ids
// accumulate; the order of the additions, so the last bits in float, varies between runs).
template <class T>
cudaError_t embedding_backward(const int* ids, const T* dout, T* dtable, int rows, int dim,
                               cudaStream_t s);

// x (batch, seq, dim) += PE(seq, dim), in place, the sinusoidal encoding of "Attention is
// all you need":  PE(p, 2i) = sin(p w_i), PE(p, 2i+1) = cos(p w_i), w_i = 10000^(-2i/dim).
// (An odd dim ends with a sin column.) The angle and sin/cos are evaluated in double, so
// long sequences keep full float accuracy.
template <class T>
cudaError_t add_positional_encoding(T* x, int batch, int seq, int dim, cudaStream_t s);

// ---- Losses ------------------------------------------------------------------------------
// Softmax cross-entropy over logits (rows, vocab) with targets (rows).
// For a counted row r (targets[r] != ignore_index), with lse_r = log sum_j exp(logits[r, j]):
//   loss_r = lse_r - logits[r, t_r]
//   dlogits[r, j] = (exp(logits[r, j] - lse_r) - [j == t_r]) * grad_scale
// Ignored rows contribute nothing and get dlogits 0. loss_sum[0] = sum of loss_r over
// counted rows, count[0] = number of counted rows (as T); both written, not accumulated,
// deterministic. The caller divides by count (grad_scale is typically 1 / count, known on
// the host when targets are). A target outside [0, vocab) that is not ignore_index makes
// loss_sum and that row's dlogits NaN.
// One block per row (rows of up to 16384 floats / 8192 doubles, 16-byte aligned with vocab
// a multiple of 16 bytes, are held in registers), then one single-block kernel for the
// fixed-order sum. dlogits may be the logits buffer itself (computed in place).
template <class T>
cudaError_t softmax_cross_entropy(const T* logits, const int* targets, T* loss_sum, T* count,
                                  T* dlogits, int rows, int vocab, int ignore_index,
                                  T grad_scale, cudaStream_t s);

// Mean squared error pieces: loss_sum[0] = sum_i (pred_i - target_i)^2 (written; the caller
// divides by n), dpred_i = 2 (pred_i - target_i) grad_scale. loss_sum is zeroed on `s` and
// accumulated with one atomicAdd per block.
template <class T>
cudaError_t mse(const T* pred, const T* target, T* loss_sum, T* dpred, std::size_t n,
                T grad_scale, cudaStream_t s);

// ---- Optimizers (one fused kernel each) ---------------------------------------------------
// Adam with bias correction, step t >= 1 (cudaErrorInvalidValue otherwise):
//   m = b1 m + (1 - b1) g;   v = b2 v + (1 - b2) g^2
//   p -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps) + lr wd p      (wd = 0 allowed)
// (the weight decay is decoupled, AdamW style, and uses p before this step's update).
template <class T>
cudaError_t adam_step(T* p, const T* g, T* m, T* v, std::size_t n, T lr, T b1, T b2, T eps,
                      T wd, int t, cudaStream_t s);

// SGD. With momentum_buf (PyTorch semantics, no dampening): buf = momentum buf + g,
// p -= lr buf. With momentum_buf == nullptr: p -= lr g (momentum ignored).
template <class T>
cudaError_t sgd_step(T* p, const T* g, T* momentum_buf, std::size_t n, T lr, T momentum,
                     cudaStream_t s);

// Multi-tensor Adam: the update of adam_step over a list of up to kMaxTensors tensors in one
// launch, with lr and the bias corrections read from device memory (AdamStepScalars), so
// that a launch captured in a CUDA graph stays valid while they change from step to step.
// Element for element the same arithmetic as adam_step (same results, bit for bit, given
// the same scalars). Callers with more tensors launch once per kMaxTensors.
struct AdamStepScalars {
  double lr, bc1, bc2;       // for double tensors: bc = 1 - b^t
  float lr_f, bc1_f, bc2_f;  // for float tensors: bc = 1 - float(b)^t in double, rounded once
};
// The scalars of step t >= 1 as adam_step computes them (for each type from that type's betas).
AdamStepScalars adam_step_scalars(double lr, double b1, double b2, int t);
// *dst = values, by a one-thread kernel (the values travel as the kernel's argument, so the
// host may change its copy at once; stream-ordered before the next update that reads dst).
cudaError_t adam_set_scalars(AdamStepScalars* dst, const AdamStepScalars& values, cudaStream_t s);

template <class T>
struct AdamTensorList {
  static constexpr int kMaxTensors = 64;  // the list travels as a kernel argument (< 4 KiB)
  int count = 0;
  T* p[kMaxTensors] = {};
  const T* g[kMaxTensors] = {};
  T* m[kMaxTensors] = {};
  T* v[kMaxTensors] = {};
  std::int64_t n[kMaxTensors] = {};
};
// One launch updating every tensor of `list` (count in [0, kMaxTensors], n >= 0, no null
// pointer where n > 0; cudaErrorInvalidValue otherwise). Grid: one block of 256 threads per
// chunk of 4096 elements of every tensor.
template <class T>
cudaError_t adam_multi_tensor(const AdamTensorList<T>& list, const AdamStepScalars* scalars, T b1, T b2, T eps,
                              T wd, cudaStream_t s);

// Multi-tensor forms of sum_squares and clip_by_norm (below): one launch per list of up to
// kMaxTensors tensors, one block of 256 threads per chunk of 4096 elements. Per element the
// same arithmetic (the clip's x *= scale is bit for bit clip_by_norm's); the sum of squares
// is the same sum in another order (per-chunk partials, atomicAdd). Same argument rules as
// adam_multi_tensor.
template <class T>
struct TensorChunkList {
  static constexpr int kMaxTensors = 128;
  int count = 0;
  T* x[kMaxTensors] = {};
  std::int64_t n[kMaxTensors] = {};
};
template <class T>
cudaError_t sum_squares_multi_tensor(const TensorChunkList<T>& list, T* out, cudaStream_t s);
template <class T>
cudaError_t clip_by_norm_multi_tensor(const TensorChunkList<T>& list, const T* sumsq, T max_norm, cudaStream_t s);

// ---- Training-step bookkeeping on the device ---------------------------------------------
// log[*counter] = float(value[0]); *counter = (*counter + 1) % capacity. One thread; the slot
// comes from device memory, so a captured graph writes a new slot at every replay.
template <class T>
cudaError_t log_scalar(const T* value, float* log, std::int32_t* counter, std::int32_t capacity, cudaStream_t s);

// ---- Gradient clipping by global norm, without a host sync ---------------------------------
// out[0] += sum_i x_i^2 (accumulates: zero out[0] once, then call per parameter tensor).
// Per-block fixed-order partials, one atomicAdd per block.
template <class T>
cudaError_t sum_squares(const T* x, T* out, std::size_t n, cudaStream_t s);
// x *= min(1, max_norm / (sqrt(sumsq[0]) + 1e-6)), the scale read from device memory by
// the kernel (sumsq is the finished sum_squares result). With scale 1, nothing is written.
template <class T>
cudaError_t clip_by_norm(T* x, std::size_t n, const T* sumsq, T max_norm, cudaStream_t s);

// ---- Attention layouts -------------------------------------------------------------------
// qkv (B, N, 3, H, d), the output of the fused E -> 3E projection, into q, k, v each
// (B, H, N, d); merge_qkv is its backward (dq, dk, dv -> dqkv, written).
template <class T>
cudaError_t split_qkv(const T* qkv, T* q, T* k, T* v, int B, int N, int H, int d,
                      cudaStream_t s);
template <class T>
cudaError_t merge_qkv(const T* dq, const T* dk, const T* dv, T* dqkv, int B, int N, int H,
                      int d, cudaStream_t s);
// (B, N, H, d) <-> (B, H, N, d). x and y must not overlap.
template <class T>
cudaError_t bnhd_to_bhnd(const T* x, T* y, int B, int N, int H, int d, cudaStream_t s);
template <class T>
cudaError_t bhnd_to_bnhd(const T* x, T* y, int B, int N, int H, int d, cudaStream_t s);

// y (cols, rows) = x (rows, cols)^T, through (32, 32) shared-memory tiles (coalesced reads
// and writes). x and y must not overlap.
template <class T>
cudaError_t transpose(const T* x, T* y, int rows, int cols, cudaStream_t s);

// ---- Small GEMM and naive attention (double-capable, for gradient checks) -------------------
// C = alpha op(A) op(B) + beta C, row-major; op(A) (M, K), op(B) (K, N), C (M, N).
// A is stored (M, K), or (K, M) when transA; B is stored (K, N), or (N, K) when transB.
// beta == 0: C is written without being read. (64, 64) tiles, 4 x 4 per thread.
// M, N == 0: nothing to do; K == 0: C = beta C.
template <class T>
cudaError_t gemm_simple(bool transA, bool transB, int M, int N, int K, T alpha, const T* A,
                        const T* B, T beta, T* C, cudaStream_t s);

// Attention with the score matrix materialized, same math as kernels/attention:
//   q, o (B, H, N, d); k, v (B, Hkv, N, d), Hkv divides H (query head h uses kv head
//   h / (H / Hkv)); lse (B, H, N);  S = scale q k^T (causal: j > i masked), P = softmax(S),
//   O = P V, LSE = log sum_j exp(S_ij).  scale == 0 means 1 / sqrt(d).
// scratch: B*H*N*N elements (S, then P; in the backward P, then dS).
// Backward given dout: D = rowsum(dO O), dP = dO V^T, dS = P (dP - D),
//   dV = P^T dO, dK = scale dS^T Q, dQ = scale dS K (dK, dV summed over each kv head's
//   query heads); dq, dk, dv written. o and lse are the forward's outputs.
// Thread per output element: meant for small shapes, O(B H N^2 d) work.
template <class T>
cudaError_t attention_naive_forward(const T* q, const T* k, const T* v, T* o, T* lse,
                                    T* scratch, int B, int H, int Hkv, int N, int d,
                                    bool causal, T scale, cudaStream_t s);
template <class T>
cudaError_t attention_naive_backward(const T* q, const T* k, const T* v, const T* o,
                                     const T* lse, const T* dout, T* dq, T* dk, T* dv,
                                     T* scratch, int B, int H, int Hkv, int N, int d,
                                     bool causal, T scale, cudaStream_t s);

}  // namespace kernels::nn
