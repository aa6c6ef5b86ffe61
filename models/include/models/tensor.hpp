#pragma once
// Device tensors (float32, float64, bfloat16 activations of the mixed-precision path, int32
// for token ids) with reverse-mode autograd.
//
// A Tensor is a shared handle: copies share the storage, the gradient and the node that
// produced it. Storage comes from the current Context's caching allocator (context.hpp)
// and returns to it when the last handle goes. Every tensor is contiguous, row-major.
//
// Autograd: an op whose inputs require gradients records a Node (its backward function
// and its inputs) as the output's grad_fn. backward(loss) orders the recorded DAG
// topologically and runs the nodes in reverse, summing the gradients of tensors used more
// than once; leaves that require grad (parameters) accumulate into .grad() across calls
// until zero_grad(). Under NoGradGuard nothing is recorded (evaluation).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace models {

enum class DType { f32, f64, i32, bf16 };  // bf16: __nv_bfloat16 storage
std::size_t dtype_size(DType t);
const char* dtype_name(DType t);

using Shape = std::vector<std::int64_t>;
std::int64_t numel_of(const Shape& s);
std::string shape_str(const Shape& s);

class CachingAllocator;
struct Node;

struct Storage {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  CachingAllocator* allocator = nullptr;
  // A sub-range of another storage (allocator null): `base` keeps that one alive.
  std::shared_ptr<Storage> base;
  Storage() = default;
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage();
};

struct TensorImpl;

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // Uninitialized / zero-filled (on the context's stream) storage.
  static Tensor empty(const Shape& shape, DType dtype);
  static Tensor zeros(const Shape& shape, DType dtype);
  // Host data of the matching type, copied (synchronously) to the device.
  static Tensor from_host(const std::vector<float>& v, const Shape& shape);
  static Tensor from_host(const std::vector<double>& v, const Shape& shape);
  static Tensor from_host(const std::vector<std::int32_t>& v, const Shape& shape);
  // Values converted to double (synchronizes the context's stream; bf16 exactly widened).
  std::vector<double> to_host() const;
  // One element (synchronizes); for scalars such as a loss.
  double item() const;
  void copy_from_host(const void* src, std::size_t bytes);  // synchronous

  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const;
  std::int64_t size(int dim) const;  // negative dims count from the end
  std::int64_t dim() const;
  std::int64_t numel() const;
  DType dtype() const;
  std::size_t bytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype()); }
  void* raw() const;
  template <typename T>
  T* data() const { return static_cast<T*>(raw()); }

  bool requires_grad() const;
  Tensor& set_requires_grad(bool on);  // leaves only
  Tensor grad() const;                 // undefined until a backward reached it
  void set_grad(Tensor g);
  void zero_grad();                    // drops the gradient (its memory goes back to the cache)
  std::shared_ptr<Node> grad_fn() const;

  // Same storage, no history, no grad requirement.
  Tensor detach() const;
  // Same storage, another shape (same numel). Differentiable (the gradient is viewed back).
  Tensor view(const Shape& shape) const;
  // The storage's handle count (in-place accumulation only when the storage is not shared).
  long storage_use_count() const;

  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

 private:
  std::shared_ptr<TensorImpl> impl_;
};

struct TensorImpl {
  Shape shape;
  DType dtype = DType::f32;
  std::shared_ptr<Storage> storage;
  bool requires_grad = false;
  Tensor grad;
  std::shared_ptr<Node> grad_fn;
};

// ---- autograd -------------------------------------------------------------------------

struct Node {
  virtual ~Node() = default;
  virtual const char* name() const = 0;
  // Gradients of the inputs (same order as `inputs`) from the gradient of the output. An
  // entry may be left undefined where needs_grad(i) is false.
  virtual std::vector<Tensor> backward(const Tensor& grad_output) = 0;
  // Drop saved activations (after backward has run).
  virtual void release() {}
  bool needs_grad(std::size_t i) const { return i < inputs.size() && inputs[i].defined() && inputs[i].requires_grad(); }

  std::vector<Tensor> inputs;
};

bool grad_enabled();
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

// True when an op with these inputs must record a node.
bool should_record(std::initializer_list<const Tensor*> inputs);
// Make `node` the grad_fn of `output` (inputs already set on the node).
void record(Tensor& output, std::shared_ptr<Node> node);

// Backpropagate from `root`: the seed gradient is 1 for a one-element root, else `seed`.
// Saved activations of the nodes are released as they run.
void backward(const Tensor& root, const Tensor& seed = Tensor());

// slot += g (slot taken over when empty; in place when slot's storage is not shared).
void accumulate_grad(Tensor& slot, const Tensor& g);

// Observer of leaf gradients (data-parallel training starts a gradient bucket's all-reduce
// from it, models/data_parallel.hpp). While a LeafGradHook lives on this thread,
// backward() calls it once per leaf that requires grad and is an input of a node it runs,
// as soon as no node left to run feeds that leaf: the leaf's .grad() is then final for
// this backward (its value ready in ctx().stream()'s order; undefined if no gradient
// reached it). A leaf fed by k edges accumulates k times, so "final" is k edges seen.
class LeafGradHook {
 public:
  using Fn = std::function<void(const Tensor& leaf)>;
  explicit LeafGradHook(Fn fn);
  ~LeafGradHook();
  LeafGradHook(const LeafGradHook&) = delete;
  LeafGradHook& operator=(const LeafGradHook&) = delete;

 private:
  Fn fn_;
  const Fn* previous_;
};

}  // namespace models
