// Mixed precision: the f32 <-> bf16 cast op, cast_weight and the per-step weight-cast cache
// (precision.hpp).
#include "models/precision.hpp"

#include <stdexcept>

#include "models/context.hpp"
#include "nn/nn_bf16.hpp"

namespace models {

namespace nn = kernels::nn;

const char* precision_name(Precision p) { return p == Precision::bf16 ? "bf16" : "f32"; }

Precision parse_precision(const std::string& name) {
  if (name == "f32") return Precision::f32;
  if (name == "bf16") return Precision::bf16;
  throw std::invalid_argument("unknown precision '" + name + "' (f32 or bf16)");
}

DType activation_dtype(Precision p) { return p == Precision::bf16 ? DType::bf16 : DType::f32; }

namespace {

// out = x converted (f32 <-> bf16), both allocated, same numel.
void convert(const Tensor& x, Tensor& out) {
  const auto n = static_cast<std::size_t>(x.numel());
  if (x.dtype() == DType::f32 && out.dtype() == DType::bf16)
    MODELS_CUDA(nn::cast_f32_to_bf16(x.data<float>(), out.data<nn::bf16>(), n, ctx().stream()));
  else if (x.dtype() == DType::bf16 && out.dtype() == DType::f32)
    MODELS_CUDA(nn::cast_bf16_to_f32(x.data<nn::bf16>(), out.data<float>(), n, ctx().stream()));
  else
    throw std::invalid_argument(std::string("cast: ") + dtype_name(x.dtype()) + " -> " + dtype_name(out.dtype()) +
                                " is not supported (float32 <-> bfloat16 only)");
}

struct CastBackward final : Node {
  DType from = DType::f32;
  const char* name() const override { return "CastBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override {
    Tensor dx = Tensor::empty(g.shape(), from);
    convert(g, dx);
    return {dx};
  }
};

void record_cast(const Tensor& x, Tensor& y) {
  if (!should_record({&x})) return;
  auto n = std::make_shared<CastBackward>();
  n->from = x.dtype();
  n->inputs = {x};
  record(y, n);
}

}  // namespace

Tensor cast(const Tensor& x, DType to) {
  if (!x.defined()) throw std::invalid_argument("cast: undefined tensor");
  if (x.dtype() == to) return x;
  Tensor y = Tensor::empty(x.shape(), to);
  convert(x, y);
  record_cast(x, y);
  return y;
}

Tensor cast_weight(const Tensor& w) {
  if (!w.defined()) throw std::invalid_argument("cast_weight: undefined tensor");
  if (w.dtype() == DType::bf16) return w;
  auto* cache = has_ctx() ? ctx().weight_casts() : nullptr;
  if (cache == nullptr) return cast(w, DType::bf16);
  auto it = cache->find(w.impl());
  // A copy made without history (under NoGradGuard) is not reused where one is recorded.
  if (it != cache->end() && (it->second.grad_fn() || !should_record({&w}))) return it->second;
  Tensor c = cast(w, DType::bf16);
  (*cache)[w.impl()] = c;
  return c;
}

WeightCastScope::WeightCastScope() {
  if (ctx().weight_casts() != nullptr) throw std::logic_error("WeightCastScope: scopes do not nest");
  ctx().set_weight_casts(&cache_);
}

WeightCastScope::~WeightCastScope() {
  if (has_ctx() && ctx().weight_casts() == &cache_) ctx().set_weight_casts(nullptr);
}

void WeightCastScope::prefetch(const std::vector<Tensor>& params) {
  constexpr std::int64_t kAlign = 8;  // elements: 16 bytes of bf16
  std::vector<const Tensor*> todo;
  std::int64_t total = 0;
  for (const auto& p : params)
    if (p.defined() && p.dtype() == DType::f32 && p.dim() == 2 && !cache_.count(p.impl())) {
      todo.push_back(&p);
      total += (p.numel() + kAlign - 1) / kAlign * kAlign;
    }
  if (todo.empty()) return;
  Tensor buffer = Tensor::empty({total}, DType::bf16);
  std::vector<const float*> src;
  std::vector<nn::bf16*> dst;
  std::vector<std::size_t> count;
  std::int64_t offset = 0;
  for (const Tensor* p : todo) {
    // A tensor over a sub-range of the buffer: non-owning storage that keeps the buffer's alive.
    auto impl = std::make_shared<TensorImpl>();
    impl->shape = p->shape();
    impl->dtype = DType::bf16;
    impl->storage = std::make_shared<Storage>();
    impl->storage->ptr = buffer.data<nn::bf16>() + offset;
    impl->storage->bytes = static_cast<std::size_t>(p->numel()) * 2;
    impl->storage->base = buffer.impl()->storage;
    Tensor copy(std::move(impl));
    src.push_back(p->data<float>());
    dst.push_back(copy.data<nn::bf16>());
    count.push_back(static_cast<std::size_t>(p->numel()));
    record_cast(*p, copy);
    cache_[p->impl()] = copy;
    offset += (p->numel() + kAlign - 1) / kAlign * kAlign;
  }
  MODELS_CUDA(nn::cast_f32_to_bf16_multi(src.data(), dst.data(), count.data(), static_cast<int>(src.size()),
                                         ctx().stream()));
}

}  // namespace models
