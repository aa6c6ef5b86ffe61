#pragma once
// Layers built from the ops: Linear, LayerNorm, Embedding, multi-head self- and
// cross-attention (fused QKV projection E -> 3E), the feed-forward block, post-norm
// encoder and decoder layers and the encoder-decoder Transformer (as torch.nn.Transformer
// with dropout 0, plus token embeddings, sinusoidal positions and the output projection).
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "models/ops.hpp"
#include "models/precision.hpp"
#include "models/tensor.hpp"

namespace models {

// Deterministic host-side initialization, uploaded once.
class Init {
 public:
  explicit Init(std::uint64_t seed) : rng_(seed) {}
  // He (Kaiming) normal: N(0, sqrt(2 / fan_in)).
  Tensor he_normal(const Shape& shape, std::int64_t fan_in, DType dtype);
  Tensor normal(const Shape& shape, double stddev, DType dtype);
  Tensor constant(const Shape& shape, double value, DType dtype);

 private:
  std::mt19937_64 rng_;
};

class Module {
 public:
  virtual ~Module() = default;
  // Handles to the parameters (shared: the optimizer updates them in place).
  virtual void parameters(std::vector<Tensor>& out) const = 0;
  std::vector<Tensor> parameters() const {
    std::vector<Tensor> p;
    parameters(p);
    return p;
  }
  std::int64_t parameter_count() const;
};

class Linear final : public Module {
 public:
  Linear() = default;
  Linear(std::int64_t in, std::int64_t out, bool bias, DType dtype, Init& init);
  Tensor operator()(const Tensor& x) const;  // linear(x, W, b); fused: the bias through bias_act
  void parameters(std::vector<Tensor>& out) const override;
  using Module::parameters;
  Tensor W;  // (in, out)
  Tensor b;  // (out) or undefined
};

class LayerNorm final : public Module {
 public:
  LayerNorm() = default;
  LayerNorm(std::int64_t dim, DType dtype, Init& init);
  Tensor operator()(const Tensor& x) const { return layer_norm(x, gamma, beta); }
  void parameters(std::vector<Tensor>& out) const override;
  using Module::parameters;
  Tensor gamma, beta;
};

class Embedding final : public Module {
 public:
  Embedding() = default;
  Embedding(std::int64_t vocab, std::int64_t dim, DType dtype, Init& init);
  Tensor operator()(const Tensor& ids, bool positional) const { return embedding(ids, table, positional); }
  void parameters(std::vector<Tensor>& out) const override;
  using Module::parameters;
  Tensor table;  // (vocab, dim), N(0, 1)
};

class SelfAttention final : public Module {
 public:
  SelfAttention() = default;
  SelfAttention(std::int64_t dim, int heads, bool causal, DType dtype, Init& init);
  Tensor operator()(const Tensor& x) const;  // (B, N, E) -> (B, N, E)
  void parameters(std::vector<Tensor>& out) const override;
  using Module::parameters;
  Linear qkv;  // E -> 3E, fused
  Linear out;  // E -> E
  int heads = 1;
  bool causal = false;
};

class CrossAttention final : public Module {
 public:
  CrossAttention() = default;
  CrossAttention(std::int64_t dim, int heads, DType dtype, Init& init);
  // x (B, Nq, E) attends memory (B, Nk, E).
  Tensor operator()(const Tensor& x, const Tensor& memory) const;
  void parameters(std::vector<Tensor>& out) const override;
  using Module::parameters;
  Linear q, k, v, out;
  int heads = 1;
};

class FeedForward final : public Module {
 public:
  FeedForward() = default;
  FeedForward(std::int64_t dim, std::int64_t hidden, Activation act, DType dtype, Init& init);
  Tensor operator()(const Tensor& x) const;
  void parameters(std::vector<Tensor>& out) const override;
  using Module::parameters;
  Linear fc1, fc2;
  Activation act = Activation::relu;
};

class EncoderLayer final : public Module {
 public:
  EncoderLayer() = default;
  EncoderLayer(std::int64_t dim, int heads, std::int64_t hidden, Activation act, DType dtype, Init& init);
  // Post-norm: x = LN1(x + SA(x)); x = LN2(x + FF(x)).
  Tensor operator()(const Tensor& x) const;
  void parameters(std::vector<Tensor>& out) const override;
  using Module::parameters;
  SelfAttention attn;
  FeedForward ff;
  LayerNorm norm1, norm2;
};

class DecoderLayer final : public Module {
 public:
  DecoderLayer() = default;
  DecoderLayer(std::int64_t dim, int heads, std::int64_t hidden, Activation act, DType dtype, Init& init);
  // x = LN1(x + causal SA(x)); x = LN2(x + CA(x, memory)); x = LN3(x + FF(x)).
  Tensor operator()(const Tensor& x, const Tensor& memory) const;
  void parameters(std::vector<Tensor>& out) const override;
  using Module::parameters;
  SelfAttention self_attn;
  CrossAttention cross_attn;
  FeedForward ff;
  LayerNorm norm1, norm2, norm3;
};

struct TransformerConfig {
  std::int64_t vocab = 6880;
  std::int64_t d_model = 512;
  int heads = 8;
  std::int64_t hidden = 2048;
  int encoder_layers = 6;
  int decoder_layers = 6;
  Activation activation = Activation::relu;
  DType dtype = DType::f32;  // of the parameters (f32 or f64)
  // bf16: activations in bf16 from the embeddings on (float parameters; needs dtype f32).
  Precision precision = Precision::f32;
};

class Transformer final : public Module {
 public:
  Transformer(const TransformerConfig& config, std::uint64_t seed);
  // src (B, Ns), tgt (B, Nt) int32 token ids: logits (B * Nt, vocab).
  Tensor operator()(const Tensor& src, const Tensor& tgt) const;
  Tensor encode(const Tensor& src) const;                         // (B, Ns, E)
  Tensor decode(const Tensor& tgt, const Tensor& memory) const;   // logits (B * Nt, V)
  void parameters(std::vector<Tensor>& out) const override;
  using Module::parameters;
  const TransformerConfig& config() const { return config_; }
  DType activation_type() const;  // bf16 with Precision::bf16, else config().dtype

  TransformerConfig config_;
  Embedding src_embed, tgt_embed;
  std::vector<EncoderLayer> encoder;
  std::vector<DecoderLayer> decoder;
  LayerNorm encoder_norm, decoder_norm;
  Linear generator;  // E -> vocab
};

}  // namespace models
