#pragma once
// Differentiable ops on the current Context (context.hpp). Each records its backward
// node when an input requires grad (tensor.hpp). Float32 and float64 unless noted; the
// kernels are kernels::nn, kernels::gemm (or cuBLAS) and kernels::attention.
// bf16 (mixed precision, precision.hpp): add, add_, gemm, relu, gelu, linear (float W
// cast by cast_weight, float bias), layer_norm (float gamma, beta), bias_act (float bias),
// add_layer_norm (float gamma, beta), the attention cores;
// cross_entropy and mse_loss take bf16 predictions and compute in float.
#include <cstdint>

#include "models/tensor.hpp"

namespace models {

// Activation of bias_act and the feed-forward block (identity: bias_act only).
enum class Activation { relu, gelu, identity };

// ---- not differentiable ---------------------------------------------------------------
Tensor fill(const Shape& shape, DType dtype, double value);
void fill_(Tensor& t, double value);
void add_(Tensor& a, const Tensor& b);  // a += b (same numel)
// Row-major C (M, N) = alpha op(A) op(B) + beta C with A stored (M, K) or, transposed,
// (K, M); B stored (K, N) or (N, K). Backend: ctx().gemm().
void gemm(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N, std::int64_t K, double alpha,
          const Tensor& A, const Tensor& B, double beta, Tensor& C);
// A copy (no history).
Tensor clone(const Tensor& t);

// ---- differentiable -------------------------------------------------------------------
Tensor add(const Tensor& a, const Tensor& b);          // same shape (residuals)
// x (..., in) times W (in, out) plus b (out) (b may be undefined): y (..., out).
Tensor linear(const Tensor& x, const Tensor& W, const Tensor& b);
Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x);
// Over the last dimension; gamma, beta (cols).
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps = 1e-5);

// ---- fused (kernels/nn/nn_fused.hpp; docs/models.md "Fused kernels") ----
// act(x + b), x (..., cols), b (cols) (float under bf16 x): one kernel instead of
// bias_add + activation; the backward recomputes x + b from the saved x and writes
// dx = act'(x + b) dy with the bias gradient (column sums) in the same pass (identity: dx
// is dy itself, only the bias gradient is computed). linear(x, W, {}) followed by bias_act
// is the fused Linear (+ activation).
Tensor bias_act(const Tensor& x, const Tensor& b, Activation act);
// The fused Linear without activation, linear(x, W, {}) + bias_act(identity): bf16 x on our
// GEMM backend where the wgmma kernel takes the call (kernels/gemm/gemm_lowp.hpp,
// gemm_lowp_wgmma_takes) runs one GEMM that adds b in its epilogue (no pass over y), with the
// same backward (dx, dW, and the bias gradient by bias_act_backward's row-parallel column
// sum); everywhere else it is exactly linear(x, W, {}) then bias_act(identity).
Tensor linear_fused_bias(const Tensor& x, const Tensor& W, const Tensor& b);
// layer_norm(add(x, r), gamma, beta, eps) in one kernel (the sum is stored once: the
// LayerNorm backward's input); the backward is layer_norm's dx kernel, its dx returned for
// both x and r (the sum's gradient, no copy), and dgamma / dbeta parallel over rows.
Tensor add_layer_norm(const Tensor& x, const Tensor& r, const Tensor& gamma, const Tensor& beta, double eps = 1e-5);
// ids (B, N) int32, table (V, E): (B, N, E); with the sinusoidal positional encoding
// added when `positional`.
Tensor embedding(const Tensor& ids, const Tensor& table, bool positional);
// x (B, N, E) plus the sinusoidal encoding of position n (out of place).
Tensor positional_encoding(const Tensor& x);
// Mean cross-entropy of softmax(logits (R, V)) against targets (R) int32 over the rows
// whose target != ignore_index (the mean divides by R: with no ignored rows, the mean).
// A one-element tensor; its backward is fused into the forward (the loss must be a root:
// the seed gradient it receives is taken as 1).
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, int ignore_index = -1);
// Mean squared error over all elements (a root, like cross_entropy).
Tensor mse_loss(const Tensor& pred, const Tensor& target);

// Multi-head attention cores. Heads are slices of the last dimension (E = heads * d).
// qkv (B, N, 3E) as produced by one fused projection E -> 3E ([q | k | v] per token):
// returns (B, N, E) = concat_h softmax(q_h k_h^T / sqrt(d)) v_h (causal: keys <= query).
Tensor self_attention(const Tensor& qkv, int heads, bool causal);
// q (B, Nq, E), k and v (B, Nk, E): cross-attention, (B, Nq, E). Nq != Nk runs the
// equal-length cores on the queries cut into chunks of Nk rows (zero-padded; ops.cpp).
Tensor cross_attention(const Tensor& q, const Tensor& k, const Tensor& v, int heads);

// Which attention core a call with these sizes uses ("flash", "flash_tf32x3", "naive",
// "nn_naive"; for bf16: "flash_wgmma" (the Hopper kernels, on sm_90 at head_dim 64, 128), "flash_tc"
// (head_dim 64, 128 with either flash kind elsewhere), else "f32": the float
// core on float casts of q, k, v, its output cast back to bf16). The lengths do not change the choice.
const char* attention_core_name(DType dtype, std::int64_t nq, std::int64_t nk, std::int64_t head_dim);

}  // namespace models
