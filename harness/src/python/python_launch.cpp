#include "python/python_launch.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>

#include <cuda_runtime_api.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace harness::python {

namespace {

// The struct format char of each dtype, for the cpu backend's memoryviews. bf16 has
// none: its elements are their raw 16 bits ('H'; harness.bf16_to_float reads them).
const char* format_of(DType dtype) {
  switch (dtype) {
    case DType::f64: return "d";
    case DType::f32: return "f";
    case DType::f16: return "e";
    case DType::bf16: return "H";
    case DType::i32: return "i";
    case DType::u32: return "I";
    case DType::i64: return "q";
    case DType::u8: return "B";
  }
  return "B";
}

// A memoryview over one host buffer, without a copy: its dtype's format, its shape,
// C-contiguous, read-only for inputs.
Ref memory_view(void* data, const OperandSpec& spec) {
  std::vector<Py_ssize_t> shape(spec.shape.begin(), spec.shape.end());
  Py_buffer view{};
  view.buf = data;
  view.obj = nullptr;
  view.len = static_cast<Py_ssize_t>(spec.bytes());
  view.itemsize = static_cast<Py_ssize_t>(size_of(spec.dtype));
  view.readonly = spec.is_output() ? 0 : 1;
  view.ndim = static_cast<int>(shape.size());
  // The format must outlive the view (a string literal does); shape is copied into it.
  view.format = const_cast<char*>(format_of(spec.dtype));
  view.shape = shape.empty() ? nullptr : shape.data();
  view.strides = nullptr;  // C-contiguous, derived from the shape
  return Ref(PyMemoryView_FromBuffer(&view));
}

Ref shape_tuple(const std::vector<std::int64_t>& shape) {
  Ref t(PyTuple_New(static_cast<Py_ssize_t>(shape.size())));
  for (std::size_t i = 0; t && i < shape.size(); ++i) {
    PyObject* extent = PyLong_FromLongLong(shape[i]);
    if (!extent) return Ref();
    PyTuple_SET_ITEM(t.get(), static_cast<Py_ssize_t>(i), extent);  // steals it
  }
  return t;
}

Ref value_object(const ParamValue& value) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) return Ref(PyLong_FromLongLong(*i));
  if (const auto* d = std::get_if<double>(&value)) return Ref(PyFloat_FromDouble(*d));
  if (const auto* b = std::get_if<bool>(&value)) return Ref(PyBool_FromLong(*b ? 1 : 0));
  const auto& s = std::get<std::string>(value);
  return Ref(PyUnicode_FromStringAndSize(s.data(), static_cast<Py_ssize_t>(s.size())));
}

Ref params_dict(const Params& params) {
  Ref dict(PyDict_New());
  for (const auto& [name, value] : params.entries()) {
    Ref v = value_object(value);
    if (!dict || !v || PyDict_SetItemString(dict.get(), name.c_str(), v.get()) != 0) return Ref();
  }
  return dict;
}

// What a Context was built over: when a launch sees the same buffers, stream and
// parameters, the Context is reused (no Python objects made per launch).
struct BufferKey {
  const void* data = nullptr;
  std::size_t count = 0;
  DType dtype = DType::f32;
  friend bool operator==(const BufferKey&, const BufferKey&) = default;
};
struct ContextKey {
  std::vector<BufferKey> buffers;
  std::uintptr_t stream = 0;
  Params params;
  friend bool operator==(const ContextKey&, const ContextKey&) = default;
};

class PythonVariant {
 public:
  explicit PythonVariant(PythonFunctions f) : f_(std::move(f)) {}
  // Python objects are never released here: the registry (and this) are destroyed at
  // exit, on a thread without the GIL, and the interpreter is never finalized.
  PythonVariant(const PythonVariant&) = delete;
  PythonVariant& operator=(const PythonVariant&) = delete;

  void launch(LaunchContext& ctx);
  std::optional<std::string> constraint(const Params& params);

 private:
  ContextKey key_of(const LaunchContext& ctx) const;
  PyObject* context_for(const LaunchContext& ctx);
  Ref make_context(const LaunchContext& ctx) const;
  std::uintptr_t stream_of(const LaunchContext& ctx) const {
    return f_.backend == Backend::cuda ? reinterpret_cast<std::uintptr_t>(ctx.stream) : 0;
  }

  PythonFunctions f_;
  PyObject* ctx_ = nullptr;  // the last Context (owned; see above)
  ContextKey key_;
  // Errors raised by supports(), by the parameters' text: the constraint lets such a
  // result run and its first launch reports the error (a constraint has no error path).
  std::map<std::string, std::string> pending_;
};

ContextKey PythonVariant::key_of(const LaunchContext& ctx) const {
  ContextKey key{{}, stream_of(ctx), *ctx.params};
  for (const auto& e : ctx.operands->entries()) key.buffers.push_back({e.data, e.spec->count(), e.spec->dtype});
  return key;
}

Ref PythonVariant::make_context(const LaunchContext& ctx) const {
  Ref operands(PyList_New(0));
  for (const auto& e : ctx.operands->entries()) {
    const OperandSpec& spec = *e.spec;
    Ref buffer = f_.backend == Backend::cpu
                     ? memory_view(e.data, spec)
                     : Ref(Py_BuildValue("(KN)", static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(e.data)),
                                         shape_tuple(spec.shape).release()));
    Ref item(buffer ? Py_BuildValue("(sOOs)", spec.name.c_str(), spec.is_output() ? Py_True : Py_False, buffer.get(),
                                    std::string(to_string(spec.dtype)).c_str())
                    : nullptr);
    if (!operands || !item || PyList_Append(operands.get(), item.get()) != 0) return Ref();
  }
  Ref params = params_dict(*ctx.params);
  if (!params) return Ref();
  const std::string backend(to_string(f_.backend));
  int device = 0;  // the CUDA device the buffers are on (DLPack's device_id): this thread's
  if (f_.backend == Backend::cuda && cudaGetDevice(&device) != cudaSuccess) device = 0;
  return Ref(PyObject_CallMethod(harness_module(), "_context", "sOKOi", backend.c_str(), params.get(),
                                 static_cast<unsigned long long>(stream_of(ctx)), operands.get(), device));
}

PyObject* PythonVariant::context_for(const LaunchContext& ctx) {
  ContextKey key = key_of(ctx);
  if (ctx_ && key == key_) return ctx_;
  if (ctx_) {
    // Its buffers may be freed now: its memoryviews are ended, so a variant that kept one
    // gets an error instead of reading freed memory.
    Ref done(PyObject_CallMethod(harness_module(), "_release", "O", ctx_));
    if (!done) PyErr_Clear();
    Py_DECREF(ctx_);
    ctx_ = nullptr;
  }
  Ref made = make_context(ctx);
  if (!made) throw std::runtime_error("Python context: " + take_error({f_.file}));
  ctx_ = made.release();
  key_ = std::move(key);
  return ctx_;
}

void PythonVariant::launch(LaunchContext& ctx) {
  if (!ctx.operands)
    throw std::runtime_error("this problem keeps its own buffers (it declares no operands): a Python variant cannot reach them");
  // The GIL is held from the Context to the function's return: one launch at a time.
  Gil gil;
  if (!pending_.empty())
    if (auto it = pending_.find(ctx.params->describe()); it != pending_.end()) throw std::runtime_error(it->second);
  PyObject* context = context_for(ctx);
  Ref result(PyObject_CallOneArg(f_.fn, context));
  if (!result) throw std::runtime_error(take_error({f_.file}));
}

std::optional<std::string> PythonVariant::constraint(const Params& params) {
  if (!f_.dtypes.empty() && params.has("dtype"))
    if (const auto* dtype = std::get_if<std::string>(&params.at("dtype")))
      if (std::find(f_.dtypes.begin(), f_.dtypes.end(), *dtype) == f_.dtypes.end())
        return fmt::format("dtype {} is not one of this variant's dtypes ({})", *dtype, fmt::join(f_.dtypes, ", "));
  if (!f_.supports) return std::nullopt;
  Gil gil;
  Ref dict = params_dict(params);
  Ref why(dict ? PyObject_CallOneArg(f_.supports, dict.get()) : nullptr);
  if (!why) {
    pending_[params.describe()] = take_error({f_.file});
    return std::nullopt;
  }
  if (why.get() == Py_None) return std::nullopt;
  if (PyUnicode_Check(why.get())) {
    const std::string reason = text_of(why.get());
    return reason.empty() ? std::string("not supported (supports() gave no reason)") : reason;
  }
  pending_[params.describe()] = fmt::format("{}: supports() returned a {}; expected None or a reason (str)", f_.where,
                                            Py_TYPE(why.get())->tp_name);
  return std::nullopt;
}

}  // namespace

PythonVariantFunctions python_variant_functions(PythonFunctions functions) {
  auto variant = std::make_shared<PythonVariant>(std::move(functions));
  return {[variant](LaunchContext& ctx) { variant->launch(ctx); },
          [variant](const Params& params) { return variant->constraint(params); }};
}

}  // namespace harness::python
