// The seed Transformer's parameter list (post-norm encoder-decoder, separate Q, K, V, O
// projections with biases, heads split inside d_model so 8 heads add no parameters):
//   source and target embeddings        2 x (6880 x 512)                   2 tensors
//   each of 6 encoder layers: Wq Wk Wv Wo (512 x 512) + 4 biases (512), FFN W1 (512 x 2048)
//     + b1 (2048), W2 (2048 x 512) + b2 (512), 2 layer norms (gamma, beta: 512)  16 tensors
//   each of 6 decoder layers: self- and cross-attention (8 + 8), FFN (4), 3 layer norms (6)
//                                                                            26 tensors
//   final encoder and decoder layer norms (gamma, beta)                      4 tensors
//   output projection 512 x 6880 + bias 6880                                 2 tensors
// Total: 260 tensors, 54,715,104 parameters (the count the tests check).
#include <initializer_list>

#include "optimizer/optimizer.hpp"

namespace kernels::optimizer {

std::vector<std::int64_t> seed_transformer_sizes() {
  constexpr std::int64_t d = 512, hidden = 2048, vocab = 6880;
  constexpr int encoder_layers = 6, decoder_layers = 6;
  std::vector<std::int64_t> s;
  // push_back one by one (vector::insert of a braced list trips a GCC 12 false warning)
  auto add = [&s](std::initializer_list<std::int64_t> sizes) {
    for (const std::int64_t n : sizes) s.push_back(n);
  };
  auto attention = [&] {
    for (int i = 0; i < 4; ++i) add({d * d, d});  // Wq, Wk, Wv, Wo and their biases
  };
  auto ffn = [&] { add({d * hidden, hidden, hidden * d, d}); };
  auto layer_norm = [&] { add({d, d}); };
  add({vocab * d, vocab * d});  // source, target embeddings
  for (int l = 0; l < encoder_layers; ++l) {
    attention();
    ffn();
    layer_norm();
    layer_norm();
  }
  for (int l = 0; l < decoder_layers; ++l) {
    attention();  // masked self-attention
    attention();  // cross-attention
    ffn();
    layer_norm();
    layer_norm();
    layer_norm();
  }
  layer_norm();  // encoder
  layer_norm();  // decoder
  add({d * vocab, vocab});  // output projection
  return s;
}

}  // namespace kernels::optimizer
