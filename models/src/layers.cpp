#include "models/layers.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "models/context.hpp"
#include "nvtx.hpp"

namespace models {

namespace {
Tensor upload(const std::vector<double>& v, const Shape& shape, DType dtype) {
  if (dtype == DType::f64) return Tensor::from_host(v, shape);
  std::vector<float> f(v.begin(), v.end());
  return Tensor::from_host(f, shape);
}

// The fused elementwise tails (Context::fused): bias + activation, residual + LayerNorm.
bool fused() { return has_ctx() && ctx().fused(); }

// LN(x + r): one add_layer_norm kernel when fused, else add then layer_norm.
Tensor add_norm(const LayerNorm& norm, const Tensor& x, const Tensor& r) {
  return fused() ? add_layer_norm(x, r, norm.gamma, norm.beta) : norm(add(x, r));
}

// An NVTX range when the context asks for them.
detail::NvtxRange layer_range(const char* name) {
  return detail::NvtxRange(has_ctx() && ctx().nvtx(), name, detail::NvtxKind::layer);
}
}  // namespace

Tensor Init::he_normal(const Shape& shape, std::int64_t fan_in, DType dtype) {
  return normal(shape, std::sqrt(2.0 / static_cast<double>(fan_in)), dtype);
}

Tensor Init::normal(const Shape& shape, double stddev, DType dtype) {
  std::normal_distribution<double> dist(0.0, stddev);
  std::vector<double> v(static_cast<std::size_t>(numel_of(shape)));
  for (auto& x : v) x = dist(rng_);
  return upload(v, shape, dtype).set_requires_grad(true);
}

Tensor Init::constant(const Shape& shape, double value, DType dtype) {
  Tensor t = fill(shape, dtype, value);
  t.set_requires_grad(true);
  return t;
}

std::int64_t Module::parameter_count() const {
  std::int64_t n = 0;
  for (const auto& p : parameters()) n += p.numel();
  return n;
}

Linear::Linear(std::int64_t in, std::int64_t out, bool bias, DType dtype, Init& init)
    : W(init.he_normal({in, out}, in, dtype)) {
  if (bias) b = init.constant({out}, 0.0, dtype);
}
// Fused: the bias in the GEMM's epilogue where our bf16 wgmma GEMM runs the call, else the
// GEMM then bias_act(identity) (linear_fused_bias); either way the bias gradient is the
// parallel column sum of nn_fused.hpp instead of column_sum.
Tensor Linear::operator()(const Tensor& x) const {
  return fused() && b.defined() ? linear_fused_bias(x, W, b) : linear(x, W, b);
}
void Linear::parameters(std::vector<Tensor>& out) const {
  out.push_back(W);
  if (b.defined()) out.push_back(b);
}

LayerNorm::LayerNorm(std::int64_t dim, DType dtype, Init& init)
    : gamma(init.constant({dim}, 1.0, dtype)), beta(init.constant({dim}, 0.0, dtype)) {}
void LayerNorm::parameters(std::vector<Tensor>& out) const {
  out.push_back(gamma);
  out.push_back(beta);
}

Embedding::Embedding(std::int64_t vocab, std::int64_t dim, DType dtype, Init& init)
    : table(init.normal({vocab, dim}, 1.0, dtype)) {}
void Embedding::parameters(std::vector<Tensor>& out) const { out.push_back(table); }

SelfAttention::SelfAttention(std::int64_t dim, int heads_, bool causal_, DType dtype, Init& init)
    : qkv(dim, 3 * dim, true, dtype, init), out(dim, dim, true, dtype, init), heads(heads_), causal(causal_) {}
Tensor SelfAttention::operator()(const Tensor& x) const {
  return out(self_attention(qkv(x), heads, causal));
}
void SelfAttention::parameters(std::vector<Tensor>& o) const {
  qkv.parameters(o);
  out.parameters(o);
}

CrossAttention::CrossAttention(std::int64_t dim, int heads_, DType dtype, Init& init)
    : q(dim, dim, true, dtype, init), k(dim, dim, true, dtype, init), v(dim, dim, true, dtype, init),
      out(dim, dim, true, dtype, init), heads(heads_) {}
Tensor CrossAttention::operator()(const Tensor& x, const Tensor& memory) const {
  return out(cross_attention(q(x), k(memory), v(memory), heads));
}
void CrossAttention::parameters(std::vector<Tensor>& o) const {
  q.parameters(o);
  k.parameters(o);
  v.parameters(o);
  out.parameters(o);
}

FeedForward::FeedForward(std::int64_t dim, std::int64_t hidden, Activation act_, DType dtype, Init& init)
    : fc1(dim, hidden, true, dtype, init), fc2(hidden, dim, true, dtype, init), act(act_) {}
Tensor FeedForward::operator()(const Tensor& x) const {
  if (fused()) return fc2(bias_act(linear(x, fc1.W, Tensor()), fc1.b, act));  // GEMM, then act(. + b) in one kernel
  Tensor h = fc1(x);
  if (act != Activation::identity) h = act == Activation::relu ? relu(h) : gelu(h);
  return fc2(h);
}
void FeedForward::parameters(std::vector<Tensor>& o) const {
  fc1.parameters(o);
  fc2.parameters(o);
}

EncoderLayer::EncoderLayer(std::int64_t dim, int heads, std::int64_t hidden, Activation act, DType dtype, Init& init)
    : attn(dim, heads, false, dtype, init), ff(dim, hidden, act, dtype, init), norm1(dim, dtype, init),
      norm2(dim, dtype, init) {}
Tensor EncoderLayer::operator()(const Tensor& x) const {
  auto r = layer_range("encoder_layer");
  Tensor h = add_norm(norm1, x, attn(x));
  return add_norm(norm2, h, ff(h));
}
void EncoderLayer::parameters(std::vector<Tensor>& o) const {
  attn.parameters(o);
  ff.parameters(o);
  norm1.parameters(o);
  norm2.parameters(o);
}

DecoderLayer::DecoderLayer(std::int64_t dim, int heads, std::int64_t hidden, Activation act, DType dtype, Init& init)
    : self_attn(dim, heads, true, dtype, init), cross_attn(dim, heads, dtype, init), ff(dim, hidden, act, dtype, init),
      norm1(dim, dtype, init), norm2(dim, dtype, init), norm3(dim, dtype, init) {}
Tensor DecoderLayer::operator()(const Tensor& x, const Tensor& memory) const {
  auto r = layer_range("decoder_layer");
  Tensor h = add_norm(norm1, x, self_attn(x));
  h = add_norm(norm2, h, cross_attn(h, memory));
  return add_norm(norm3, h, ff(h));
}
void DecoderLayer::parameters(std::vector<Tensor>& o) const {
  self_attn.parameters(o);
  cross_attn.parameters(o);
  ff.parameters(o);
  norm1.parameters(o);
  norm2.parameters(o);
  norm3.parameters(o);
}

Transformer::Transformer(const TransformerConfig& c, std::uint64_t seed) : config_(c) {
  if (c.heads < 1 || c.d_model % c.heads != 0)
    throw std::invalid_argument("d_model (" + std::to_string(c.d_model) + ") must be a multiple of heads (" +
                                std::to_string(c.heads) + ")");
  if (c.precision == Precision::bf16 && c.dtype != DType::f32)
    throw std::invalid_argument("precision bf16 needs float32 parameters, not " + std::string(dtype_name(c.dtype)));
  Init init(seed);
  src_embed = Embedding(c.vocab, c.d_model, c.dtype, init);
  tgt_embed = Embedding(c.vocab, c.d_model, c.dtype, init);
  for (int i = 0; i < c.encoder_layers; ++i)
    encoder.emplace_back(c.d_model, c.heads, c.hidden, c.activation, c.dtype, init);
  for (int i = 0; i < c.decoder_layers; ++i)
    decoder.emplace_back(c.d_model, c.heads, c.hidden, c.activation, c.dtype, init);
  encoder_norm = LayerNorm(c.d_model, c.dtype, init);
  decoder_norm = LayerNorm(c.d_model, c.dtype, init);
  generator = Linear(c.d_model, c.vocab, true, c.dtype, init);
}

// The activations' dtype: bf16 under mixed precision, else the parameters' own (f32 or f64).
DType Transformer::activation_type() const {
  return config_.precision == Precision::bf16 ? DType::bf16 : config_.dtype;
}

Tensor Transformer::encode(const Tensor& src) const {
  auto r = layer_range("encoder");
  Tensor x = cast(src_embed(src, true), activation_type());
  for (const auto& layer : encoder) x = layer(x);
  return encoder_norm(x);
}

Tensor Transformer::decode(const Tensor& tgt, const Tensor& memory) const {
  Tensor y;
  {
    auto r = layer_range("decoder");
    y = cast(tgt_embed(tgt, true), activation_type());
    for (const auto& layer : decoder) y = layer(y, memory);
    y = decoder_norm(y);
  }
  auto r = layer_range("generator");
  return generator(y.view({y.size(0) * y.size(1), y.size(2)}));
}

Tensor Transformer::operator()(const Tensor& src, const Tensor& tgt) const { return decode(tgt, encode(src)); }

void Transformer::parameters(std::vector<Tensor>& o) const {
  src_embed.parameters(o);
  tgt_embed.parameters(o);
  for (const auto& l : encoder) l.parameters(o);
  for (const auto& l : decoder) l.parameters(o);
  encoder_norm.parameters(o);
  decoder_norm.parameters(o);
  generator.parameters(o);
}

}  // namespace models
