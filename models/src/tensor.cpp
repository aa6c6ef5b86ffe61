#include "models/tensor.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "models/context.hpp"
#include "models/ops.hpp"

namespace models {

std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32: return 4;
    case DType::f64: return 8;
    case DType::i32: return 4;
    case DType::bf16: return 2;
  }
  return 0;
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "float32";
    case DType::f64: return "float64";
    case DType::i32: return "int32";
    case DType::bf16: return "bfloat16";
  }
  return "?";
}

std::int64_t numel_of(const Shape& s) {
  std::int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

std::string shape_str(const Shape& s) {
  std::string out = "(";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

Storage::~Storage() {
  if (allocator != nullptr) allocator->deallocate(ptr, bytes);
}

Tensor Tensor::empty(const Shape& shape, DType dtype) {
  for (auto d : shape)
    if (d < 0) throw std::invalid_argument("negative dimension in " + shape_str(shape));
  auto impl = std::make_shared<TensorImpl>();
  impl->shape = shape;
  impl->dtype = dtype;
  impl->storage = std::make_shared<Storage>();
  auto& alloc = ctx().allocator();
  impl->storage->bytes = static_cast<std::size_t>(numel_of(shape)) * dtype_size(dtype);
  impl->storage->ptr = alloc.allocate(impl->storage->bytes);
  impl->storage->allocator = &alloc;
  return Tensor(std::move(impl));
}

Tensor Tensor::zeros(const Shape& shape, DType dtype) {
  Tensor t = empty(shape, dtype);
  if (t.bytes() > 0) MODELS_CUDA(cudaMemsetAsync(t.raw(), 0, t.bytes(), ctx().stream()));
  return t;
}

void Tensor::copy_from_host(const void* src, std::size_t nbytes) {
  if (nbytes != bytes()) throw std::invalid_argument("copy_from_host: size mismatch");
  if (nbytes == 0) return;
  MODELS_CUDA(cudaMemcpyAsync(raw(), src, nbytes, cudaMemcpyHostToDevice, ctx().stream()));
  MODELS_CUDA(cudaStreamSynchronize(ctx().stream()));
}

namespace {
// bf16 is the upper half of a float's bits: widening is exact.
double bf16_bits_to_double(std::uint16_t bits) {
  const std::uint32_t u = static_cast<std::uint32_t>(bits) << 16;
  float f = 0;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

template <typename T>
Tensor from_host_impl(const std::vector<T>& v, const Shape& shape, DType dt) {
  if (static_cast<std::int64_t>(v.size()) != numel_of(shape))
    throw std::invalid_argument("from_host: " + std::to_string(v.size()) + " values for shape " + shape_str(shape));
  Tensor t = Tensor::empty(shape, dt);
  t.copy_from_host(v.data(), v.size() * sizeof(T));
  return t;
}
}  // namespace

Tensor Tensor::from_host(const std::vector<float>& v, const Shape& shape) { return from_host_impl(v, shape, DType::f32); }
Tensor Tensor::from_host(const std::vector<double>& v, const Shape& shape) { return from_host_impl(v, shape, DType::f64); }
Tensor Tensor::from_host(const std::vector<std::int32_t>& v, const Shape& shape) { return from_host_impl(v, shape, DType::i32); }

std::vector<double> Tensor::to_host() const {
  const auto n = static_cast<std::size_t>(numel());
  std::vector<double> out(n);
  if (n == 0) return out;
  MODELS_CUDA(cudaStreamSynchronize(ctx().stream()));
  switch (dtype()) {
    case DType::f32: {
      std::vector<float> h(n);
      MODELS_CUDA(cudaMemcpy(h.data(), raw(), bytes(), cudaMemcpyDeviceToHost));
      std::copy(h.begin(), h.end(), out.begin());
      break;
    }
    case DType::f64:
      MODELS_CUDA(cudaMemcpy(out.data(), raw(), bytes(), cudaMemcpyDeviceToHost));
      break;
    case DType::i32: {
      std::vector<std::int32_t> h(n);
      MODELS_CUDA(cudaMemcpy(h.data(), raw(), bytes(), cudaMemcpyDeviceToHost));
      std::copy(h.begin(), h.end(), out.begin());
      break;
    }
    case DType::bf16: {
      std::vector<std::uint16_t> h(n);
      MODELS_CUDA(cudaMemcpy(h.data(), raw(), bytes(), cudaMemcpyDeviceToHost));
      std::transform(h.begin(), h.end(), out.begin(), bf16_bits_to_double);
      break;
    }
  }
  return out;
}

double Tensor::item() const {
  if (numel() < 1) throw std::logic_error("item() of an empty tensor");
  MODELS_CUDA(cudaStreamSynchronize(ctx().stream()));
  if (dtype() == DType::f64) {
    double v = 0;
    MODELS_CUDA(cudaMemcpy(&v, raw(), sizeof v, cudaMemcpyDeviceToHost));
    return v;
  }
  if (dtype() == DType::f32) {
    float v = 0;
    MODELS_CUDA(cudaMemcpy(&v, raw(), sizeof v, cudaMemcpyDeviceToHost));
    return v;
  }
  if (dtype() == DType::bf16) {
    std::uint16_t v = 0;
    MODELS_CUDA(cudaMemcpy(&v, raw(), sizeof v, cudaMemcpyDeviceToHost));
    return bf16_bits_to_double(v);
  }
  std::int32_t v = 0;
  MODELS_CUDA(cudaMemcpy(&v, raw(), sizeof v, cudaMemcpyDeviceToHost));
  return v;
}

const Shape& Tensor::shape() const { return impl_->shape; }
std::int64_t Tensor::dim() const { return static_cast<std::int64_t>(impl_->shape.size()); }
std::int64_t Tensor::size(int d) const {
  const auto n = static_cast<int>(impl_->shape.size());
  if (d < 0) d += n;
  if (d < 0 || d >= n) throw std::out_of_range("Tensor::size: dim out of range");
  return impl_->shape[static_cast<std::size_t>(d)];
}
std::int64_t Tensor::numel() const { return impl_ ? numel_of(impl_->shape) : 0; }
DType Tensor::dtype() const { return impl_->dtype; }
void* Tensor::raw() const { return impl_ && impl_->storage ? impl_->storage->ptr : nullptr; }
bool Tensor::requires_grad() const { return impl_ && impl_->requires_grad; }
Tensor& Tensor::set_requires_grad(bool on) {
  if (impl_->grad_fn) throw std::logic_error("set_requires_grad on a non-leaf tensor");
  impl_->requires_grad = on;
  return *this;
}
Tensor Tensor::grad() const { return impl_->grad; }
void Tensor::set_grad(Tensor g) { impl_->grad = std::move(g); }
void Tensor::zero_grad() { impl_->grad = Tensor(); }
std::shared_ptr<Node> Tensor::grad_fn() const { return impl_ ? impl_->grad_fn : nullptr; }
long Tensor::storage_use_count() const { return impl_ && impl_->storage ? impl_->storage.use_count() : 0; }

Tensor Tensor::detach() const {
  auto impl = std::make_shared<TensorImpl>();
  impl->shape = impl_->shape;
  impl->dtype = impl_->dtype;
  impl->storage = impl_->storage;
  return Tensor(std::move(impl));
}

namespace {
struct ViewBackward final : Node {
  Shape input_shape;
  const char* name() const override { return "ViewBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override { return {g.view(input_shape)}; }
};
}  // namespace

Tensor Tensor::view(const Shape& shape) const {
  if (numel_of(shape) != numel())
    throw std::invalid_argument("view " + shape_str(impl_->shape) + " as " + shape_str(shape));
  Tensor out = detach();
  out.impl_->shape = shape;
  if (should_record({this})) {
    auto node = std::make_shared<ViewBackward>();
    node->input_shape = impl_->shape;
    node->inputs = {*this};
    record(out, node);
  }
  return out;
}

// ---- autograd -------------------------------------------------------------------------

namespace {
thread_local bool g_grad_enabled = true;
thread_local const LeafGradHook::Fn* g_leaf_hook = nullptr;
bool is_grad_leaf(const Tensor& t) { return t.defined() && t.requires_grad() && !t.grad_fn(); }
}  // namespace

LeafGradHook::LeafGradHook(Fn fn) : fn_(std::move(fn)), previous_(g_leaf_hook) { g_leaf_hook = &fn_; }
LeafGradHook::~LeafGradHook() { g_leaf_hook = previous_; }

bool grad_enabled() { return g_grad_enabled; }
NoGradGuard::NoGradGuard() : previous_(g_grad_enabled) { g_grad_enabled = false; }
NoGradGuard::~NoGradGuard() { g_grad_enabled = previous_; }

bool should_record(std::initializer_list<const Tensor*> inputs) {
  if (!g_grad_enabled) return false;
  for (const Tensor* t : inputs)
    if (t != nullptr && t->defined() && t->requires_grad()) return true;
  return false;
}

void record(Tensor& output, std::shared_ptr<Node> node) {
  // Inputs that need no gradient are kept as undefined entries (nothing to keep alive).
  for (auto& in : node->inputs)
    if (in.defined() && !in.requires_grad()) in = Tensor();
  output.impl()->grad_fn = std::move(node);
  output.impl()->requires_grad = true;
}

void accumulate_grad(Tensor& slot, const Tensor& g) {
  if (!g.defined()) return;
  if (!slot.defined()) {
    slot = g;
    return;
  }
  if (slot.numel() != g.numel()) throw std::logic_error("accumulate_grad: shape mismatch");
  if (slot.storage_use_count() == 1) {
    add_(slot, g);  // slot += g in place
  } else {
    NoGradGuard ng;
    slot = add(slot, g).view(slot.shape());
  }
}

void backward(const Tensor& root, const Tensor& seed) {
  if (!root.defined() || !root.requires_grad()) throw std::logic_error("backward: the root does not require grad");
  Tensor g0 = seed;
  if (!g0.defined()) {
    if (root.numel() != 1) throw std::logic_error("backward: a seed gradient is needed for a non-scalar root");
    g0 = fill(root.shape(), root.dtype(), 1.0);
  }
  NoGradGuard no_grad;  // the backward functions record nothing
  if (!root.grad_fn()) {  // a leaf
    accumulate_grad(root.impl()->grad, g0);
    if (g_leaf_hook) (*g_leaf_hook)(root);
    return;
  }
  // Topological order by iterative DFS (post-order), then reverse.
  std::vector<Node*> order;
  std::unordered_set<Node*> seen;
  std::vector<std::pair<Node*, std::size_t>> stack{{root.grad_fn().get(), 0}};
  seen.insert(root.grad_fn().get());
  while (!stack.empty()) {
    auto& [node, i] = stack.back();
    if (i < node->inputs.size()) {
      const Tensor& in = node->inputs[i++];
      Node* child = in.defined() ? in.grad_fn().get() : nullptr;
      if (child != nullptr && seen.insert(child).second) stack.push_back({child, 0});
    } else {
      order.push_back(node);
      stack.pop_back();
    }
  }
  // LeafGradHook: edges into each leaf from the nodes to run; 0 left = its gradient is final.
  // (Every node stays alive to the end: a node no gradient reaches is still visited.)
  std::unordered_map<TensorImpl*, int> leaf_edges;
  std::vector<std::shared_ptr<Node>> alive;
  if (g_leaf_hook)
    for (Node* node : order)
      for (const Tensor& in : node->inputs) {
        if (is_grad_leaf(in)) ++leaf_edges[in.impl()];
        if (in.defined() && in.grad_fn()) alive.push_back(in.grad_fn());
      }
  auto leaves_done = [&](Node* node) {
    if (!g_leaf_hook) return;
    for (const Tensor& in : node->inputs)
      if (is_grad_leaf(in) && --leaf_edges[in.impl()] == 0) (*g_leaf_hook)(in);
  };
  std::unordered_map<Node*, Tensor> pending;
  pending[root.grad_fn().get()] = g0;
  // Keep the nodes alive while running (inputs are cleared as we go).
  std::vector<std::shared_ptr<Node>> keep;
  keep.reserve(order.size());
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Node* node = *it;
    auto found = pending.find(node);
    if (found == pending.end()) {  // no gradient reached it
      leaves_done(node);
      continue;
    }
    Tensor g = std::move(found->second);
    pending.erase(found);
    std::vector<Tensor> grads = node->backward(g);
    g = Tensor();
    for (std::size_t i = 0; i < node->inputs.size() && i < grads.size(); ++i) {
      Tensor& in = node->inputs[i];
      if (!in.defined() || !grads[i].defined() || !in.requires_grad()) continue;
      if (auto fn = in.grad_fn()) {
        keep.push_back(fn);
        accumulate_grad(pending[fn.get()], grads[i]);
      } else {
        accumulate_grad(in.impl()->grad, grads[i].view(in.shape()));
      }
    }
    grads.clear();
    leaves_done(node);
    node->release();
    node->inputs.clear();
  }
}

}  // namespace models
