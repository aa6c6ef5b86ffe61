#include "models/ops.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>

#include "attention/attention.hpp"
#include "gemm/gemm_auto.hpp"
#include "gemm/gemm_cublas.hpp"
#include "gemm/gemm_table.hpp"
#include "models/context.hpp"
#include "gemm/gemm_lowp.hpp"
#include "models/precision.hpp"
#include "nn/nn.hpp"
#include "nn/nn_bf16.hpp"
#include "nn/nn_fused.hpp"

namespace models {

namespace nn = kernels::nn;
namespace attn = kernels::attention;
using nn::bf16;

namespace {

cudaStream_t stream() { return ctx().stream(); }

int to_int(std::int64_t v, const char* what) {
  if (v < 0 || v > 0x7fffffff) throw std::invalid_argument(std::string(what) + " out of int range: " + std::to_string(v));
  return static_cast<int>(v);
}
std::size_t to_size(std::int64_t v) { return static_cast<std::size_t>(v); }

void require_float(const Tensor& t, const char* op) {
  if (!t.defined()) throw std::invalid_argument(std::string(op) + ": undefined tensor");
  if (t.dtype() == DType::i32) throw std::invalid_argument(std::string(op) + ": int32 tensor where a float one is needed");
}
void require_same(const Tensor& a, const Tensor& b, const char* op) {
  if (a.dtype() != b.dtype()) throw std::invalid_argument(std::string(op) + ": mixed dtypes");
}

// Calls f with a value of the tensor's element type.
template <typename F>
decltype(auto) dispatch(DType dt, F&& f) {
  if (dt == DType::f64) return f(double{});
  if (dt == DType::f32) return f(float{});
  throw std::invalid_argument("float or double tensor expected");
}

// As dispatch, with bf16 too: for the data-movement kernels instantiated for all three.
template <typename F>
decltype(auto) dispatch_any(DType dt, F&& f) {
  if (dt == DType::bf16) return f(bf16{});
  return dispatch(dt, std::forward<F>(f));
}

bool is_bf16(const Tensor& t) { return t.defined() && t.dtype() == DType::bf16; }

// Calls f(S{}, P{}) with the storage and the parameter/statistics type of an activation dtype.
template <typename F>
decltype(auto) dispatch_fused(DType dt, F&& f) {
  if (dt == DType::bf16) return f(bf16{}, float{});
  if (dt == DType::f64) return f(double{}, double{});
  if (dt == DType::f32) return f(float{}, float{});
  throw std::invalid_argument("float, double or bf16 tensor expected");
}

// Scratch of the fused kernels' row-parallel column sums (nn_fused.hpp): `n` partials of
// dtype dt and the context's zeroed counters for `cols` columns (none when n is 0: one chunk).
struct ColumnSumScratch {
  Tensor partials;
  unsigned* counters = nullptr;
  template <class P>
  P* data() { return partials.defined() ? partials.data<P>() : nullptr; }
};
ColumnSumScratch column_sum_scratch(std::size_t n, DType dt, int cols) {
  ColumnSumScratch sc;
  if (n == 0) return sc;
  sc.partials = Tensor::empty({static_cast<std::int64_t>(n)}, dt);
  sc.counters = ctx().zeroed_counters(static_cast<std::size_t>(cols + 31) / 32);  // null: two kernels
  return sc;
}

// The wgmma kernel's split-K sums for a bf16 GEMM of this layout and shape (none where it
// would not split), from the allocator like every other buffer (graph-safe).
struct SplitKWorkspace {
  Tensor sums;
  std::size_t bytes = 0;
  void* ptr() const { return bytes > 0 ? sums.raw() : nullptr; }
};
SplitKWorkspace splitk_workspace(kernels::gemm::Layout layout, int M, int N, int K) {
  SplitKWorkspace w;
  w.bytes = kernels::gemm::gemm_lowp_workspace_bytes(layout, kernels::gemm::TcDType::bf16, M, N, K);
  if (w.bytes > 0) w.sums = Tensor::empty({static_cast<std::int64_t>((w.bytes + 3) / 4)}, DType::f32);
  return w;
}

#define NN(call) MODELS_CUDA(call)

}  // namespace

// ---- not differentiable ---------------------------------------------------------------

Tensor fill(const Shape& shape, DType dtype, double value) {
  Tensor t = Tensor::empty(shape, dtype);
  fill_(t, value);
  return t;
}

void fill_(Tensor& t, double value) {
  dispatch(t.dtype(), [&](auto z) {
    using T = decltype(z);
    NN(nn::fill<T>(t.data<T>(), static_cast<T>(value), to_size(t.numel()), stream()));
  });
}

void add_(Tensor& a, const Tensor& b) {
  require_same(a, b, "add_");
  if (a.numel() != b.numel()) throw std::invalid_argument("add_: sizes differ");
  if (is_bf16(a)) {
    NN(nn::add_bf16(a.data<bf16>(), b.data<bf16>(), a.data<bf16>(), to_size(a.numel()), stream()));
    return;
  }
  dispatch(a.dtype(), [&](auto z) {
    using T = decltype(z);
    NN(nn::axpby<T>(T(1), b.data<T>(), T(1), a.data<T>(), to_size(a.numel()), stream()));
  });
}

Tensor clone(const Tensor& t) {
  Tensor out = Tensor::empty(t.shape(), t.dtype());
  if (t.bytes() > 0) MODELS_CUDA(cudaMemcpyAsync(out.raw(), t.raw(), t.bytes(), cudaMemcpyDeviceToDevice, stream()));
  return out;
}

namespace {

// Row-major op(A) op(B) through cuBLAS (column-major): C^T = op(B)^T op(A)^T.
template <typename T>
void cublas_gemm(bool ta, bool tb, int M, int N, int K, T alpha, const T* A, const T* B, T beta, T* C) {
  cublasHandle_t h = ctx().cublas();
  const cublasOperation_t opA = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opB = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int lda = ta ? M : K, ldb = tb ? K : N;
  if constexpr (std::is_same_v<T, float>) {
    if (!ta && !tb) {  // the row-major wrapper of kernels/gemm
      MODELS_CUBLAS(kernels::gemm::gemm_cublas(h, M, N, K, alpha, A, B, beta, C, stream(), ctx().cublas_workspace(),
                                               ctx().cublas_workspace_bytes()));
      return;
    }
    MODELS_CUBLAS(cublasSgemm(h, opB, opA, N, M, K, &alpha, B, ldb, A, lda, &beta, C, N));
  } else {
    MODELS_CUBLAS(cublasDgemm(h, opB, opA, N, M, K, &alpha, B, ldb, A, lda, &beta, C, N));
  }
}

// One of kernels/gemm's FP32 kernels by its table name (Context::set_gemm checked it).
cudaError_t our_gemm_nn(const std::string& name, int M, int N, int K, float alpha, const float* A, const float* B,
                        float beta, float* C) {
  const auto* kernel = kernels::gemm::find_fp32_kernel(name);
  if (kernel == nullptr) throw std::invalid_argument("unknown GEMM backend '" + name + "'");
  return kernel->launch(M, N, K, alpha, A, B, beta, C, stream());
}

}  // namespace

void gemm(bool ta, bool tb, std::int64_t M64, std::int64_t N64, std::int64_t K64, double alpha, const Tensor& A,
          const Tensor& B, double beta, Tensor& C) {
  require_same(A, B, "gemm");
  require_same(A, C, "gemm");
  const int M = to_int(M64, "gemm M"), N = to_int(N64, "gemm N"), K = to_int(K64, "gemm K");
  if (A.numel() != M64 * K64 || B.numel() != K64 * N64 || C.numel() != M64 * N64)
    throw std::invalid_argument("gemm: operand sizes do not match M, N, K");
  if (M == 0 || N == 0) return;
  const std::string& backend = ctx().gemm();
  if (is_bf16(A)) {  // bf16 operands and output, float accumulation (context.hpp)
    namespace kg = kernels::gemm;
    const kg::Layout layout = ta ? (tb ? kg::Layout::tt : kg::Layout::tn) : (tb ? kg::Layout::nt : kg::Layout::nn);
    const auto fa = static_cast<float>(alpha), fb = static_cast<float>(beta);
    if (backend == "cublas")
      MODELS_CUBLAS(kg::gemm_cublas_ex(ctx().cublas(), kg::TcDType::bf16, layout, M, N, K, fa, A.raw(), B.raw(), fb,
                                       C.raw(), stream(), ctx().cublas_workspace(), ctx().cublas_workspace_bytes()));
    else {
      // Split-K sums for shapes with few output tiles (the weight gradients X^T dY at many tokens).
      const SplitKWorkspace ws = splitk_workspace(layout, M, N, K);
      MODELS_CUDA(kg::gemm_bf16(layout, M, N, K, fa, A.data<bf16>(), B.data<bf16>(), fb, C.data<bf16>(), stream(),
                                ws.ptr(), ws.bytes));
    }
    return;
  }
  if (A.dtype() == DType::f64) {
    if (backend == "cublas")
      cublas_gemm<double>(ta, tb, M, N, K, alpha, A.data<double>(), B.data<double>(), beta, C.data<double>());
    else
      NN(nn::gemm_simple<double>(ta, tb, M, N, K, alpha, A.data<double>(), B.data<double>(), beta, C.data<double>(),
                                 stream()));
    return;
  }
  const auto fa = static_cast<float>(alpha), fb = static_cast<float>(beta);
  if (backend == "cublas") {
    cublas_gemm<float>(ta, tb, M, N, K, fa, A.data<float>(), B.data<float>(), fb, C.data<float>());
    return;
  }
  if (backend == "simple") {
    NN(nn::gemm_simple<float>(ta, tb, M, N, K, fa, A.data<float>(), B.data<float>(), fb, C.data<float>(), stream()));
    return;
  }
  if (K == 0) {  // our kernels need K >= 1: C = beta C
    NN(nn::axpby<float>(0.f, C.data<float>(), fb, C.data<float>(), to_size(C.numel()), stream()));
    return;
  }
  if (backend == "auto") {  // kernels/gemm's shape-aware choice, transposed operands read in place
    namespace kg = kernels::gemm;
    const kg::Layout layout = ta ? (tb ? kg::Layout::tt : kg::Layout::tn) : (tb ? kg::Layout::nt : kg::Layout::nn);
    const std::size_t ws_bytes = kg::gemm_auto_workspace_bytes(layout, M, N, K);
    Tensor ws;
    if (ws_bytes > 0) ws = Tensor::empty({static_cast<std::int64_t>((ws_bytes + 3) / 4)}, DType::f32);
    NN(kg::gemm_auto(layout, M, N, K, fa, A.data<float>(), B.data<float>(), fb, C.data<float>(),
                     ws_bytes > 0 ? ws.raw() : nullptr, ws_bytes, stream()));
    return;
  }
  // The table's kernels are NN only: transposed operands are made explicit first.
  Tensor At, Bt;
  const float* a = A.data<float>();
  const float* b = B.data<float>();
  if (ta) {  // A stored (K, M) -> (M, K)
    At = Tensor::empty({M64, K64}, DType::f32);
    NN(nn::transpose<float>(a, At.data<float>(), K, M, stream()));
    a = At.data<float>();
  }
  if (tb) {  // B stored (N, K) -> (K, N)
    Bt = Tensor::empty({K64, N64}, DType::f32);
    NN(nn::transpose<float>(b, Bt.data<float>(), N, K, stream()));
    b = Bt.data<float>();
  }
  MODELS_CUDA(our_gemm_nn(backend, M, N, K, fa, a, b, fb, C.data<float>()));
}

// ---- differentiable: elementwise ---------------------------------------------------------

namespace {
struct AddBackward final : Node {
  const char* name() const override { return "AddBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override { return {g, g}; }
};
}  // namespace

Tensor add(const Tensor& a, const Tensor& b) {
  require_float(a, "add");
  require_same(a, b, "add");
  if (a.numel() != b.numel()) throw std::invalid_argument("add: " + shape_str(a.shape()) + " + " + shape_str(b.shape()));
  Tensor c = Tensor::empty(a.shape(), a.dtype());
  if (is_bf16(a))
    NN(nn::add_bf16(a.data<bf16>(), b.data<bf16>(), c.data<bf16>(), to_size(a.numel()), stream()));
  else
    dispatch(a.dtype(), [&](auto z) {
      using T = decltype(z);
      NN(nn::add<T>(a.data<T>(), b.data<T>(), c.data<T>(), to_size(a.numel()), stream()));
    });
  if (should_record({&a, &b})) {
    auto n = std::make_shared<AddBackward>();
    n->inputs = {a, b};
    record(c, n);
  }
  return c;
}

namespace {
struct ActivationBackward final : Node {
  bool gelu = false;
  Tensor x;
  const char* name() const override { return gelu ? "GeluBackward" : "ReluBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override {
    Tensor dx = Tensor::empty(x.shape(), x.dtype());
    if (is_bf16(x)) {
      NN(nn::activation_backward_bf16(gelu ? nn::Act::gelu : nn::Act::relu, x.data<bf16>(), g.data<bf16>(),
                                      dx.data<bf16>(), to_size(x.numel()), stream()));
      return {dx};
    }
    dispatch(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const auto n = to_size(x.numel());
      if (gelu) NN(nn::gelu_backward<T>(x.data<T>(), g.data<T>(), dx.data<T>(), n, stream()));
      else NN(nn::relu_backward<T>(x.data<T>(), g.data<T>(), dx.data<T>(), n, stream()));
    });
    return {dx};
  }
  void release() override { x = Tensor(); }
};

Tensor activation(const Tensor& x, bool is_gelu) {
  require_float(x, is_gelu ? "gelu" : "relu");
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  if (is_bf16(x))
    NN(nn::activation_forward_bf16(is_gelu ? nn::Act::gelu : nn::Act::relu, x.data<bf16>(), y.data<bf16>(),
                                   to_size(x.numel()), stream()));
  else
    dispatch(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const auto n = to_size(x.numel());
      if (is_gelu) NN(nn::gelu_forward<T>(x.data<T>(), y.data<T>(), n, stream()));
      else NN(nn::relu_forward<T>(x.data<T>(), y.data<T>(), n, stream()));
    });
  if (should_record({&x})) {
    auto n = std::make_shared<ActivationBackward>();
    n->gelu = is_gelu;
    n->x = x.detach();
    n->inputs = {x};
    record(y, n);
  }
  return y;
}
}  // namespace

Tensor relu(const Tensor& x) { return activation(x, false); }
Tensor gelu(const Tensor& x) { return activation(x, true); }

// ---- Linear -----------------------------------------------------------------------------

namespace {
struct LinearBackward final : Node {
  Tensor x, W;  // x viewed (rows, in); W of x's dtype (the bf16 copy in mixed precision)
  bool has_bias = false;
  DType bias_dtype = DType::f32;  // float under bf16 activations
  // The bias gradient by the fused kernels' row-parallel column sum (bias_act_backward's
  // identity case, as the fused Linear's BiasBackward), not column_sum: linear_fused_bias.
  bool parallel_bias = false;
  // Mixed precision on our GEMM backend: inputs[1] is the float master weight itself (not its
  // bf16 copy), and dW goes to it in f32 straight from the GEMM's f32 sums (the wgmma
  // kernel's f32 output), without a bf16 dW and the cast after it.
  bool f32_weight_grad = false;
  const char* name() const override { return "LinearBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override {
    const std::int64_t rows = x.size(0), in = x.size(1), out = W.size(1);
    std::vector<Tensor> grads(has_bias ? 3 : 2);
    if (needs_grad(0)) {  // dx = dy W^T
      grads[0] = Tensor::empty({rows, in}, x.dtype());
      gemm(false, true, rows, in, out, 1.0, g, W, 0.0, grads[0]);
    }
    if (needs_grad(1) && f32_weight_grad) {  // dW = x^T dy in f32 for the master weight
      grads[1] = Tensor::empty({in, out}, DType::f32);
      weight_grad_f32(rows, in, out, g, grads[1]);
    } else if (needs_grad(1)) {  // dW = x^T dy
      grads[1] = Tensor::empty({in, out}, x.dtype());
      gemm(true, false, in, out, rows, 1.0, x, g, 0.0, grads[1]);
    }
    if (has_bias && needs_grad(2) && parallel_bias) {
      grads[2] = Tensor::empty({out}, bias_dtype);
      const int r = to_int(rows, "rows"), c = to_int(out, "cols");
      ColumnSumScratch sc = column_sum_scratch(nn::bias_act_backward_workspace(r, c), bias_dtype, c);
      dispatch_fused(x.dtype(), [&](auto zs, auto zp) {
        using S = decltype(zs);
        using P = decltype(zp);
        NN((nn::bias_act_backward<S, P>(nn::Act::identity, nullptr, nullptr, g.data<S>(), nullptr,
                                        grads[2].data<P>(), sc.data<P>(), sc.counters, r, c, stream())));
      });
    } else if (has_bias && needs_grad(2)) {
      grads[2] = Tensor::empty({out}, bias_dtype);
      if (is_bf16(x))
        NN(nn::column_sum_bf16(g.data<bf16>(), grads[2].data<float>(), to_int(rows, "rows"), to_int(out, "cols"),
                               stream()));
      else
        dispatch(x.dtype(), [&](auto z) {
          using T = decltype(z);
          NN(nn::column_sum<T>(g.data<T>(), grads[2].data<T>(), to_int(rows, "rows"), to_int(out, "cols"),
                               stream()));
        });
    }
    return grads;
  }
  // dW (in, out) f32 = x^T g from bf16 x, g: the wgmma kernel's f32 output where it takes the
  // call (layout tn), else the bf16 GEMM and a cast.
  void weight_grad_f32(std::int64_t rows, std::int64_t in, std::int64_t out, const Tensor& g, Tensor& dW) const {
    namespace kg = kernels::gemm;
    const int M = to_int(in, "linear in"), N = to_int(out, "linear out"), K = to_int(rows, "linear rows");
    if (M > 0 && N > 0 && K > 0 &&
        kg::gemm_lowp_wgmma_takes(kg::Layout::tn, kg::TcDType::bf16, M, N, K, x.raw(), g.raw())) {
      // alpha 1 into a fresh f32 dW: a split adds its sums straight into dW (no workspace).
      MODELS_CUDA(kg::gemm_bf16_f32(kg::Layout::tn, M, N, K, 1.0f, x.data<bf16>(), g.data<bf16>(), dW.data<float>(),
                                    stream()));
      return;
    }
    Tensor tmp = Tensor::empty({in, out}, DType::bf16);
    gemm(true, false, in, out, rows, 1.0, x, g, 0.0, tmp);
    NN(nn::cast_bf16_to_f32(tmp.data<bf16>(), dW.data<float>(), to_size(tmp.numel()), stream()));
  }
  void release() override { x = W = Tensor(); }
};
}  // namespace

namespace {
// A Linear call's operands, checked: x viewed (rows, in), W of x's dtype (mixed precision: the
// step's bf16 copy of the float weight), y (..., out) allocated.
struct LinearCall {
  Tensor W_master, W, x2, y;  // W_master: the caller's weight (float under bf16 x), W: x's dtype
  std::int64_t rows = 0, in = 0, out = 0;
  DType bias_dtype = DType::f32;  // float under bf16 activations
  LinearCall(const Tensor& x, const Tensor& W_param, const Tensor& b) {
    require_float(x, "linear");
    require_float(W_param, "linear");
    W_master = W_param;
    W = is_bf16(x) ? cast_weight(W_param) : W_param;
    require_same(x, W, "linear");
    if (W.dim() != 2) throw std::invalid_argument("linear: W must be (in, out)");
    in = W.size(0), out = W.size(1);
    if (x.dim() < 1 || x.size(-1) != in)
      throw std::invalid_argument("linear: x " + shape_str(x.shape()) + " with W " + shape_str(W.shape()));
    bias_dtype = is_bf16(x) ? DType::f32 : x.dtype();
    if (b.defined() && (b.numel() != out || b.dtype() != bias_dtype))
      throw std::invalid_argument("linear: bias shape or dtype");
    rows = x.numel() / in;
    Shape ys = x.shape();
    ys.back() = out;
    y = Tensor::empty(ys, x.dtype());
    x2 = x.detach().view({rows, in});
  }
  // The autograd node (when x, W or b need it): dx, dW and, with b, the bias gradient.
  void record_node(const Tensor& x, const Tensor& b, bool parallel_bias) {
    // bf16 activations with a float weight on our GEMM backend: dW in f32 to the weight itself.
    const bool f32_weight_grad = is_bf16(x) && W_master.dtype() == DType::f32 && ctx().gemm() != "cublas";
    const Tensor& wrt = f32_weight_grad ? W_master : W;
    if (!should_record({&x, &wrt, &b})) return;
    auto n = std::make_shared<LinearBackward>();
    n->x = x2;
    n->W = W.detach();
    n->has_bias = b.defined();
    n->bias_dtype = bias_dtype;
    n->parallel_bias = parallel_bias;
    n->f32_weight_grad = f32_weight_grad;
    n->inputs = {x, wrt};
    if (b.defined()) n->inputs.push_back(b);
    record(y, n);
  }
};

// y = x W on c's operands, then b (when defined) by a bias pass; recorded.
Tensor linear_call(LinearCall& c, const Tensor& x, const Tensor& b) {
  const std::int64_t rows = c.rows, in = c.in, out = c.out;
  const Tensor& W = c.W;
  Tensor& y = c.y;
  gemm(false, false, rows, out, in, 1.0, c.x2, W, 0.0, y);
  if (b.defined() && is_bf16(x))
    NN(nn::bias_add_bf16(y.data<bf16>(), b.data<float>(), y.data<bf16>(), to_int(rows, "rows"), to_int(out, "cols"),
                         stream()));
  else if (b.defined())
    dispatch(x.dtype(), [&](auto z) {
      using T = decltype(z);
      NN(nn::bias_add<T>(y.data<T>(), b.data<T>(), y.data<T>(), to_int(rows, "rows"), to_int(out, "cols"), stream()));
    });
  c.record_node(x, b, false);
  return y;
}
}  // namespace

Tensor linear(const Tensor& x, const Tensor& W_param, const Tensor& b) {
  LinearCall c(x, W_param, b);
  return linear_call(c, x, b);
}

Tensor linear_fused_bias(const Tensor& x, const Tensor& W_param, const Tensor& b) {
  namespace kg = kernels::gemm;
  if (!b.defined() || !is_bf16(x) || ctx().gemm() == "cublas")
    return b.defined() ? bias_act(linear(x, W_param, Tensor()), b, Activation::identity) : linear(x, W_param, b);
  LinearCall c(x, W_param, b);
  const int M = to_int(c.rows, "linear rows"), N = to_int(c.out, "linear out"), K = to_int(c.in, "linear in");
  if (M == 0 || !kg::gemm_lowp_wgmma_takes(kg::Layout::nn, kg::TcDType::bf16, M, N, K, c.x2.raw(), c.W.raw()))
    return bias_act(linear_call(c, x, Tensor()), b, Activation::identity);
  const SplitKWorkspace ws = splitk_workspace(kg::Layout::nn, M, N, K);
  MODELS_CUDA(kg::gemm_bf16_bias(kg::Layout::nn, M, N, K, 1.0f, c.x2.data<bf16>(), c.W.data<bf16>(), b.data<float>(),
                                 c.y.data<bf16>(), stream(), ws.ptr(), ws.bytes));
  c.record_node(x, b, true);
  return c.y;
}

// ---- LayerNorm ----------------------------------------------------------------------------

namespace {
struct LayerNormBackward final : Node {
  Tensor x, gamma, mean, rstd;
  bool residual = false;  // add_layer_norm: inputs (x, r, gamma, beta), x here is their sum
  const char* name() const override { return residual ? "AddLayerNormBackward" : "LayerNormBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override {
    std::vector<Tensor> grads = layer_norm_grads(g);
    if (residual) {  // d(x + r)/dx = d(x + r)/dr = 1: the sum's gradient for both
      const Tensor ds = grads[0];
      grads.insert(grads.begin(), ds);
    }
    return grads;
  }
  // {dx, dgamma, dbeta}
  std::vector<Tensor> layer_norm_grads(const Tensor& g) {
    const std::int64_t cols = gamma.numel(), rows = x.numel() / cols;
    Tensor dx = Tensor::empty(x.shape(), x.dtype());
    Tensor dgamma = Tensor::empty({cols}, gamma.dtype()), dbeta = Tensor::empty({cols}, gamma.dtype());
    if (residual) {  // add_layer_norm: the dx kernel, then dgamma / dbeta parallel over rows (nn_fused.hpp)
      const int r = to_int(rows, "rows"), c = to_int(cols, "cols");
      ColumnSumScratch sc = column_sum_scratch(nn::layernorm_param_grads_workspace(r, c), gamma.dtype(), c);
      if (is_bf16(x))
        NN(nn::layernorm_backward_dx_bf16(x.data<bf16>(), gamma.data<float>(), mean.data<float>(), rstd.data<float>(),
                                          g.data<bf16>(), dx.data<bf16>(), r, c, stream()));
      else
        dispatch(x.dtype(), [&](auto z) {
          using T = decltype(z);
          NN(nn::layernorm_backward_dx<T>(x.data<T>(), gamma.data<T>(), mean.data<T>(), rstd.data<T>(), g.data<T>(),
                                          dx.data<T>(), r, c, stream()));
        });
      dispatch_fused(x.dtype(), [&](auto zs, auto zp) {
        using S = decltype(zs);
        using P = decltype(zp);
        NN((nn::layernorm_param_grads<S, P>(x.data<S>(), mean.data<P>(), rstd.data<P>(), g.data<S>(), dgamma.data<P>(),
                                            dbeta.data<P>(), sc.data<P>(), sc.counters, r, c, stream())));
      });
      return {dx, dgamma, dbeta};
    }
    if (is_bf16(x)) {  // float statistics, gamma and parameter gradients
      NN(nn::layernorm_backward_bf16(x.data<bf16>(), gamma.data<float>(), mean.data<float>(), rstd.data<float>(),
                                     g.data<bf16>(), dx.data<bf16>(), dgamma.data<float>(), dbeta.data<float>(),
                                     to_int(rows, "rows"), to_int(cols, "cols"), stream()));
      return {dx, dgamma, dbeta};
    }
    dispatch(x.dtype(), [&](auto z) {
      using T = decltype(z);
      NN(nn::layernorm_backward<T>(x.data<T>(), gamma.data<T>(), mean.data<T>(), rstd.data<T>(), g.data<T>(),
                                   dx.data<T>(), dgamma.data<T>(), dbeta.data<T>(), to_int(rows, "rows"),
                                   to_int(cols, "cols"), stream()));
    });
    return {dx, dgamma, dbeta};
  }
  void release() override { x = gamma = mean = rstd = Tensor(); }
};
}  // namespace

Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
  require_float(x, "layer_norm");
  const DType param_dtype = is_bf16(x) ? DType::f32 : x.dtype();  // bf16 x: float gamma, beta, stats
  if (gamma.dtype() != param_dtype || beta.dtype() != param_dtype)
    throw std::invalid_argument("layer_norm: gamma/beta dtype");
  const std::int64_t cols = x.size(-1), rows = x.numel() / cols;
  if (gamma.numel() != cols || beta.numel() != cols) throw std::invalid_argument("layer_norm: gamma/beta size");
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  const bool rec = should_record({&x, &gamma, &beta});
  Tensor mean, rstd;
  if (rec) {
    mean = Tensor::empty({rows}, param_dtype);
    rstd = Tensor::empty({rows}, param_dtype);
  }
  if (is_bf16(x))
    NN(nn::layernorm_forward_bf16(x.data<bf16>(), gamma.data<float>(), beta.data<float>(), y.data<bf16>(),
                                  rec ? mean.data<float>() : nullptr, rec ? rstd.data<float>() : nullptr,
                                  to_int(rows, "rows"), to_int(cols, "cols"), static_cast<float>(eps), stream()));
  else
    dispatch(x.dtype(), [&](auto z) {
      using T = decltype(z);
      NN(nn::layernorm_forward<T>(x.data<T>(), gamma.data<T>(), beta.data<T>(), y.data<T>(),
                                  rec ? mean.data<T>() : nullptr, rec ? rstd.data<T>() : nullptr, to_int(rows, "rows"),
                                  to_int(cols, "cols"), static_cast<T>(eps), stream()));
    });
  if (rec) {
    auto n = std::make_shared<LayerNormBackward>();
    n->x = x.detach();
    n->gamma = gamma.detach();
    n->mean = mean;
    n->rstd = rstd;
    n->inputs = {x, gamma, beta};
    record(y, n);
  }
  return y;
}

// ---- Fused: bias + activation, residual + LayerNorm ------------------------------------------

namespace {
nn::Act to_act(Activation a) {
  return a == Activation::relu ? nn::Act::relu : a == Activation::gelu ? nn::Act::gelu : nn::Act::identity;
}

struct BiasActBackward final : Node {
  Activation act = Activation::identity;
  Tensor x, b;  // x: the input (undefined for identity: not needed), b: the bias
  const char* name() const override {
    return act == Activation::relu ? "BiasReluBackward" : act == Activation::gelu ? "BiasGeluBackward" : "BiasBackward";
  }
  std::vector<Tensor> backward(const Tensor& g) override {
    const std::int64_t cols = b.numel(), rows = g.numel() / std::max<std::int64_t>(1, cols);
    const int r = to_int(rows, "rows"), c = to_int(cols, "cols");
    const bool identity = act == Activation::identity;
    Tensor dx = identity ? g : Tensor::empty(x.shape(), x.dtype());  // identity: dx is dy itself
    Tensor db = Tensor::empty({cols}, b.dtype());
    ColumnSumScratch sc = column_sum_scratch(nn::bias_act_backward_workspace(r, c), b.dtype(), c);
    dispatch_fused(g.dtype(), [&](auto zs, auto zp) {
      using S = decltype(zs);
      using P = decltype(zp);
      NN((nn::bias_act_backward<S, P>(to_act(act), identity ? nullptr : x.data<S>(), b.data<P>(), g.data<S>(),
                                      identity ? nullptr : dx.data<S>(), db.data<P>(), sc.data<P>(), sc.counters, r,
                                      c, stream())));
    });
    return {dx, db};
  }
  void release() override { x = b = Tensor(); }
};
}  // namespace

Tensor bias_act(const Tensor& x, const Tensor& b, Activation act) {
  require_float(x, "bias_act");
  require_float(b, "bias_act");
  const DType param_dtype = is_bf16(x) ? DType::f32 : x.dtype();  // bf16 activations: the float bias
  if (x.dim() < 1 || b.numel() != x.size(-1) || b.dtype() != param_dtype)
    throw std::invalid_argument("bias_act: x " + shape_str(x.shape()) + " with bias " + shape_str(b.shape()) + " " +
                                dtype_name(b.dtype()));
  const std::int64_t cols = x.size(-1), rows = cols > 0 ? x.numel() / cols : 0;
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  dispatch_fused(x.dtype(), [&](auto zs, auto zp) {
    using S = decltype(zs);
    using P = decltype(zp);
    NN((nn::bias_act_forward<S, P>(to_act(act), x.data<S>(), b.data<P>(), y.data<S>(), to_int(rows, "rows"),
                                   to_int(cols, "cols"), stream())));
  });
  if (should_record({&x, &b})) {
    auto n = std::make_shared<BiasActBackward>();
    n->act = act;
    if (act != Activation::identity) n->x = x.detach();
    n->b = b.detach();
    n->inputs = {x, b};
    record(y, n);
  }
  return y;
}

Tensor add_layer_norm(const Tensor& x, const Tensor& r, const Tensor& gamma, const Tensor& beta, double eps) {
  require_float(x, "add_layer_norm");
  require_same(x, r, "add_layer_norm");
  if (x.shape() != r.shape())
    throw std::invalid_argument("add_layer_norm: " + shape_str(x.shape()) + " + " + shape_str(r.shape()));
  const DType param_dtype = is_bf16(x) ? DType::f32 : x.dtype();  // bf16 x: float gamma, beta, stats
  if (gamma.dtype() != param_dtype || beta.dtype() != param_dtype)
    throw std::invalid_argument("add_layer_norm: gamma/beta dtype");
  if (x.dim() < 1) throw std::invalid_argument("add_layer_norm: x must have a last dimension");
  const std::int64_t cols = x.size(-1), rows = cols > 0 ? x.numel() / cols : 0;
  if (gamma.numel() != cols || beta.numel() != cols) throw std::invalid_argument("add_layer_norm: gamma/beta size");
  Tensor sum = Tensor::empty(x.shape(), x.dtype()), y = Tensor::empty(x.shape(), x.dtype());
  const bool rec = should_record({&x, &r, &gamma, &beta});
  Tensor mean, rstd;
  if (rec) {
    mean = Tensor::empty({rows}, param_dtype);
    rstd = Tensor::empty({rows}, param_dtype);
  }
  dispatch_fused(x.dtype(), [&](auto zs, auto zp) {
    using S = decltype(zs);
    using P = decltype(zp);
    NN((nn::add_layernorm_forward<S, P>(x.data<S>(), r.data<S>(), gamma.data<P>(), beta.data<P>(), sum.data<S>(),
                                        y.data<S>(), rec ? mean.data<P>() : nullptr, rec ? rstd.data<P>() : nullptr,
                                        to_int(rows, "rows"), to_int(cols, "cols"), static_cast<P>(eps), stream())));
  });
  if (rec) {
    auto n = std::make_shared<LayerNormBackward>();
    n->residual = true;
    n->x = sum;
    n->gamma = gamma.detach();
    n->mean = mean;
    n->rstd = rstd;
    n->inputs = {x, r, gamma, beta};
    record(y, n);
  }
  return y;
}

// ---- Embedding and positions --------------------------------------------------------------

namespace {
struct EmbeddingBackward final : Node {
  Tensor ids;
  Shape table_shape;
  const char* name() const override { return "EmbeddingBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override {
    Tensor dtable = Tensor::zeros(table_shape, g.dtype());
    dispatch(g.dtype(), [&](auto z) {
      using T = decltype(z);
      NN(nn::embedding_backward<T>(ids.data<int>(), g.data<T>(), dtable.data<T>(), to_int(ids.numel(), "rows"),
                                   to_int(table_shape[1], "dim"), stream()));
    });
    return {dtable};
  }
  void release() override { ids = Tensor(); }
};
struct IdentityBackward final : Node {
  const char* name() const override { return "PositionalEncodingBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override { return {g}; }
};

void add_positions(Tensor& x) {
  if (x.dim() != 3) throw std::invalid_argument("positional encoding: x must be (batch, seq, dim)");
  dispatch(x.dtype(), [&](auto z) {
    using T = decltype(z);
    NN(nn::add_positional_encoding<T>(x.data<T>(), to_int(x.size(0), "batch"), to_int(x.size(1), "seq"),
                                      to_int(x.size(2), "dim"), stream()));
  });
}
}  // namespace

Tensor embedding(const Tensor& ids, const Tensor& table, bool positional) {
  if (!ids.defined() || ids.dtype() != DType::i32) throw std::invalid_argument("embedding: ids must be int32");
  require_float(table, "embedding");
  const std::int64_t dim = table.size(1);
  Shape os = ids.shape();
  os.push_back(dim);
  Tensor out = Tensor::empty(os, table.dtype());
  dispatch(table.dtype(), [&](auto z) {
    using T = decltype(z);
    NN(nn::embedding_forward<T>(ids.data<int>(), table.data<T>(), out.data<T>(), to_int(ids.numel(), "rows"),
                                to_int(dim, "dim"), stream()));
  });
  if (positional) add_positions(out);  // d(out)/d(table rows) is unchanged by the constant
  if (should_record({&table})) {
    auto n = std::make_shared<EmbeddingBackward>();
    n->ids = ids;
    n->table_shape = table.shape();
    n->inputs = {table};
    record(out, n);
  }
  return out;
}

Tensor positional_encoding(const Tensor& x) {
  require_float(x, "positional_encoding");
  Tensor y = clone(x);
  add_positions(y);
  if (should_record({&x})) {
    auto n = std::make_shared<IdentityBackward>();
    n->inputs = {x};
    record(y, n);
  }
  return y;
}

// ---- Losses (fused forward + backward) ----------------------------------------------------

namespace {
struct FusedLossBackward final : Node {
  const char* label = "";
  Tensor dinput;  // already scaled for a seed gradient of 1
  const char* name() const override { return label; }
  std::vector<Tensor> backward(const Tensor&) override { return {dinput}; }
  void release() override { dinput = Tensor(); }
};
}  // namespace

Tensor cross_entropy(const Tensor& logits, const Tensor& targets, int ignore_index) {
  require_float(logits, "cross_entropy");
  if (is_bf16(logits)) return cross_entropy(cast(logits, DType::f32), targets, ignore_index);  // in float
  if (!targets.defined() || targets.dtype() != DType::i32) throw std::invalid_argument("cross_entropy: targets must be int32");
  if (logits.dim() != 2 || targets.numel() != logits.size(0))
    throw std::invalid_argument("cross_entropy: logits (rows, vocab) and targets (rows)");
  const std::int64_t rows = logits.size(0), vocab = logits.size(1);
  Tensor sums = Tensor::empty({2}, logits.dtype());  // loss_sum, count
  Tensor loss = Tensor::empty({1}, logits.dtype());
  const bool rec = should_record({&logits});
  Tensor dlogits = Tensor::empty(logits.shape(), logits.dtype());  // the kernel always writes it
  dispatch(logits.dtype(), [&](auto z) {
    using T = decltype(z);
    const T scale = T(1) / static_cast<T>(rows);
    NN(nn::softmax_cross_entropy<T>(logits.data<T>(), targets.data<int>(), sums.data<T>(), sums.data<T>() + 1,
                                    dlogits.data<T>(), to_int(rows, "rows"), to_int(vocab, "vocab"), ignore_index,
                                    scale, stream()));
    NN(nn::axpby<T>(scale, sums.data<T>(), T(0), loss.data<T>(), 1, stream()));
  });
  if (rec) {
    auto n = std::make_shared<FusedLossBackward>();
    n->label = "CrossEntropyBackward";
    n->dinput = dlogits;
    n->inputs = {logits};
    record(loss, n);
  }
  return loss;
}

Tensor mse_loss(const Tensor& pred, const Tensor& target) {
  require_float(pred, "mse_loss");
  if (is_bf16(pred)) return mse_loss(cast(pred, DType::f32), target);  // in float
  require_same(pred, target, "mse_loss");
  if (pred.numel() != target.numel()) throw std::invalid_argument("mse_loss: sizes differ");
  const std::int64_t n = pred.numel();
  Tensor sum = Tensor::empty({1}, pred.dtype());
  Tensor loss = Tensor::empty({1}, pred.dtype());
  Tensor dpred = Tensor::empty(pred.shape(), pred.dtype());
  dispatch(pred.dtype(), [&](auto z) {
    using T = decltype(z);
    const T scale = T(1) / static_cast<T>(n);
    NN(nn::mse<T>(pred.data<T>(), target.data<T>(), sum.data<T>(), dpred.data<T>(), to_size(n), scale, stream()));
    NN(nn::axpby<T>(scale, sum.data<T>(), T(0), loss.data<T>(), 1, stream()));
  });
  if (should_record({&pred})) {
    auto node = std::make_shared<FusedLossBackward>();
    node->label = "MseBackward";
    node->dinput = dpred;
    node->inputs = {pred};
    record(loss, node);
  }
  return loss;
}

// ---- Attention ----------------------------------------------------------------------------

// Nq != Nk runs the same core on query chunks of Nk rows (cross_attention_unequal below).
const char* attention_core_name(DType dtype, std::int64_t /*nq*/, std::int64_t /*nk*/, std::int64_t head_dim) {
  if (dtype == DType::f64) return "nn_naive";
  const bool flash_kind = ctx().attention() != AttentionImpl::naive;
  if (dtype == DType::bf16) {  // Hopper's wgmma kernels, else flash_tc where it has kernels, else the float core
    if (flash_kind) {
      attn::Shape s;
      s.head_dim = static_cast<int>(head_dim);
      if (attn::flash_hopper_unsupported(s) == nullptr && attn::flash_hopper_backward_unsupported(s) == nullptr)
        return "flash_wgmma";
    }
    return flash_kind && attn::flash_tc_supported(static_cast<int>(head_dim)) ? "flash_tc" : "f32";
  }
  if (flash_kind && attn::flash_supported(static_cast<int>(head_dim)))
    return ctx().attention() == AttentionImpl::flash_tf32x3 ? "flash_tf32x3" : "flash";
  if (head_dim % 4 == 0) return "naive";
  return "nn_naive";
}

namespace {

struct AttnDims {
  int B, H, N, d;
  bool causal;
  int group = 1;  // query heads per kv head (H / group kv heads; 1 but for unequal lengths)
};

attn::Shape kshape(const AttnDims& a) {
  attn::Shape s;
  s.batch = a.B;
  s.heads = a.H;
  s.kv_heads = a.H / a.group;
  s.seq_len = a.N;
  s.head_dim = a.d;
  s.causal = a.causal;
  s.scale = 0.0f;
  return s;
}

std::int64_t floats_for(std::size_t bytes) { return static_cast<std::int64_t>((bytes + 3) / 4); }

// TMA (the Hopper kernels) needs 16-byte aligned bases; a tensor that is not takes flash_tc.
bool aligned16(std::initializer_list<const void*> ptrs) {
  for (const void* p : ptrs)
    if (reinterpret_cast<std::uintptr_t>(p) % 16 != 0) return false;
  return true;
}

// q, k, v (B, H, N, d) -> o, lse.
void attention_core_forward(const AttnDims& a, const Tensor& q, const Tensor& k, const Tensor& v, Tensor& o,
                            Tensor& lse) {
  const std::string core = attention_core_name(q.dtype(), a.N, a.N, a.d);
  if (core == "flash_wgmma" && aligned16({q.raw(), k.raw(), v.raw()})) {
    MODELS_CUDA(attn::flash_hopper_forward(kshape(a), attn::Precision::bf16, q.raw(), k.raw(), v.raw(), o.raw(),
                                           lse.data<float>(), stream()));
  } else if (core == "flash_tc" || core == "flash_wgmma") {
    MODELS_CUDA(attn::flash_tc_forward(kshape(a), attn::Precision::bf16, q.raw(), k.raw(), v.raw(), o.raw(),
                                       lse.data<float>(), stream()));
  } else if (core == "flash") {
    MODELS_CUDA(attn::flash_forward(kshape(a), q.data<float>(), k.data<float>(), v.data<float>(), o.data<float>(),
                                    lse.data<float>(), stream()));
  } else if (core == "flash_tf32x3") {
    MODELS_CUDA(attn::flash_forward_tf32x3(kshape(a), q.data<float>(), k.data<float>(), v.data<float>(),
                                           o.data<float>(), lse.data<float>(), stream()));
  } else if (core == "naive") {
    Tensor ws = Tensor::empty({floats_for(attn::naive_forward_workspace_bytes(kshape(a)))}, DType::f32);
    MODELS_CUDA(attn::naive_forward(kshape(a), q.data<float>(), k.data<float>(), v.data<float>(), o.data<float>(),
                                    lse.data<float>(), ws.data<float>(), stream()));
  } else {
    Tensor scratch = Tensor::empty({std::int64_t(a.B) * a.H * a.N * a.N}, q.dtype());
    dispatch(q.dtype(), [&](auto z) {
      using T = decltype(z);
      NN(nn::attention_naive_forward<T>(q.data<T>(), k.data<T>(), v.data<T>(), o.data<T>(), lse.data<T>(),
                                        scratch.data<T>(), a.B, a.H, a.H / a.group, a.N, a.d, a.causal, T(0), stream()));
    });
  }
}

void attention_core_backward(const AttnDims& a, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o,
                             const Tensor& lse, const Tensor& dout, Tensor& dq, Tensor& dk, Tensor& dv) {
  const std::string core = attention_core_name(q.dtype(), a.N, a.N, a.d);
  if (core == "flash_wgmma" && aligned16({q.raw(), k.raw(), v.raw(), dout.raw()})) {
    Tensor ws = Tensor::empty({floats_for(attn::flash_hopper_backward_workspace_bytes(kshape(a)))}, DType::f32);
    MODELS_CUDA(attn::flash_hopper_backward(kshape(a), attn::Precision::bf16, q.raw(), k.raw(), v.raw(), o.raw(),
                                            lse.data<float>(), dout.raw(), dq.raw(), dk.raw(), dv.raw(), ws.raw(),
                                            stream()));
  } else if (core == "flash_tc" || core == "flash_wgmma") {
    Tensor ws = Tensor::empty({floats_for(attn::flash_tc_backward_workspace_bytes(kshape(a)))}, DType::f32);
    MODELS_CUDA(attn::flash_tc_backward(kshape(a), attn::Precision::bf16, q.raw(), k.raw(), v.raw(), o.raw(),
                                        lse.data<float>(), dout.raw(), dq.raw(), dk.raw(), dv.raw(), ws.raw(),
                                        stream()));
  } else if (core == "flash" || core == "flash_tf32x3") {  // one workspace size for both
    Tensor ws = Tensor::empty({floats_for(attn::flash_backward_workspace_bytes(kshape(a)))}, DType::f32);
    const auto backward = core == "flash" ? attn::flash_backward : attn::flash_backward_tf32x3;
    MODELS_CUDA(backward(kshape(a), q.data<float>(), k.data<float>(), v.data<float>(), o.data<float>(),
                         lse.data<float>(), dout.data<float>(), dq.data<float>(), dk.data<float>(), dv.data<float>(),
                         ws.data<float>(), stream()));
  } else if (core == "naive") {
    Tensor ws = Tensor::empty({floats_for(attn::naive_backward_workspace_bytes(kshape(a)))}, DType::f32);
    MODELS_CUDA(attn::naive_backward(kshape(a), q.data<float>(), k.data<float>(), v.data<float>(), o.data<float>(),
                                     lse.data<float>(), dout.data<float>(), dq.data<float>(), dk.data<float>(),
                                     dv.data<float>(), ws.data<float>(), stream()));
  } else {
    Tensor scratch = Tensor::empty({std::int64_t(a.B) * a.H * a.N * a.N}, q.dtype());
    dispatch(q.dtype(), [&](auto z) {
      using T = decltype(z);
      NN(nn::attention_naive_backward<T>(q.data<T>(), k.data<T>(), v.data<T>(), o.data<T>(), lse.data<T>(),
                                         dout.data<T>(), dq.data<T>(), dk.data<T>(), dv.data<T>(), scratch.data<T>(),
                                         a.B, a.H, a.H / a.group, a.N, a.d, a.causal, T(0), stream()));
    });
  }
}

// (B, N, H, d) <-> (B, H, N, d)
Tensor to_heads(const Tensor& x, const AttnDims& a) {
  Tensor y = Tensor::empty({a.B, a.H, a.N, a.d}, x.dtype());
  dispatch_any(x.dtype(), [&](auto z) {
    using T = decltype(z);
    NN(nn::bnhd_to_bhnd<T>(x.data<T>(), y.data<T>(), a.B, a.N, a.H, a.d, stream()));
  });
  return y;
}
Tensor from_heads(const Tensor& x, const AttnDims& a) {
  Tensor y = Tensor::empty({a.B, a.N, std::int64_t(a.H) * a.d}, x.dtype());
  dispatch_any(x.dtype(), [&](auto z) {
    using T = decltype(z);
    NN(nn::bhnd_to_bnhd<T>(x.data<T>(), y.data<T>(), a.B, a.N, a.H, a.d, stream()));
  });
  return y;
}

struct AttentionBackward final : Node {
  AttnDims a{};
  bool fused_qkv = false;
  Tensor q, k, v, o, lse;  // (B, H, N, d), lse (B, H, N)
  const char* name() const override { return fused_qkv ? "SelfAttentionBackward" : "CrossAttentionBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override {
    Tensor dout = to_heads(g, a);
    Tensor dq = Tensor::empty(q.shape(), q.dtype()), dk = Tensor::empty(q.shape(), q.dtype()),
           dv = Tensor::empty(q.shape(), q.dtype());
    attention_core_backward(a, q, k, v, o, lse, dout, dq, dk, dv);
    dout = Tensor();
    if (fused_qkv) {
      Tensor dqkv = Tensor::empty({a.B, a.N, 3 * std::int64_t(a.H) * a.d}, q.dtype());
      dispatch_any(q.dtype(), [&](auto z) {
        using T = decltype(z);
        NN(nn::merge_qkv<T>(dq.data<T>(), dk.data<T>(), dv.data<T>(), dqkv.data<T>(), a.B, a.N, a.H, a.d, stream()));
      });
      return {dqkv};
    }
    return {needs_grad(0) ? from_heads(dq, a) : Tensor(), needs_grad(1) ? from_heads(dk, a) : Tensor(),
            needs_grad(2) ? from_heads(dv, a) : Tensor()};
  }
  void release() override { q = k = v = o = lse = Tensor(); }
};

AttnDims dims_of(const Tensor& x, std::int64_t E, int heads, bool causal) {
  if (x.dim() != 3) throw std::invalid_argument("attention: inputs must be (B, N, features)");
  if (heads < 1 || E % heads != 0) throw std::invalid_argument("attention: E must be a multiple of heads");
  return AttnDims{to_int(x.size(0), "B"), heads, to_int(x.size(1), "N"), to_int(E / heads, "d"), causal};
}

Tensor attention_finish(const AttnDims& a, Tensor q, Tensor k, Tensor v, bool fused, std::vector<Tensor> inputs) {
  Tensor o = Tensor::empty(q.shape(), q.dtype());
  // Log-sum-exp per query row: float under bf16 (flash_tc keeps its statistics in float).
  Tensor lse = Tensor::empty({a.B, a.H, a.N}, is_bf16(q) ? DType::f32 : q.dtype());
  attention_core_forward(a, q, k, v, o, lse);
  Tensor out = from_heads(o, a);
  bool rec = false;
  for (const auto& t : inputs) rec = rec || should_record({&t});
  if (rec) {
    auto n = std::make_shared<AttentionBackward>();
    n->a = a;
    n->fused_qkv = fused;
    n->q = std::move(q);
    n->k = std::move(k);
    n->v = std::move(v);
    n->o = std::move(o);
    n->lse = std::move(lse);
    n->inputs = std::move(inputs);
    record(out, n);
  }
  return out;
}

// ---- Cross-attention with Nq != Nk on the equal-length cores ----
// Every core takes one length N for queries and keys, but rows of attention are
// independent and the cores take grouped kv heads. So the Nq query rows of each head are
// cut into C = ceil(Nq / Nk) chunks of Nk rows, the last one zero-padded: (B, H, C*Nk, d)
// is, in memory, (B, H*C, Nk, d), and with group C query head h*C + c reads kv head h.
// Each real row gets exactly its own output; the backward's dK and dV sum over a kv head's
// query heads, i.e. over the chunks, and a padded row adds nothing there (its dO is 0:
// dV += P^T dO adds 0, dS = P (dO V^T - rowsum(dO O)) = 0). A padded row's q = 0 gives
// uniform probabilities: finite, discarded. Cost: C*Nk - Nq extra rows per head (Nq 48,
// Nk 64: a third more core work; Nq 13, Nk 29: 16 extra rows).

// x (BH, n, d) -> (BH, m, d), m >= n: rows n..m-1 zero.
Tensor pad_rows(const Tensor& x, int BH, int n, int m, int d) {
  Tensor y = Tensor::empty({BH, m, d}, x.dtype());
  const std::size_t row = static_cast<std::size_t>(d) * dtype_size(x.dtype());
  if (m > n)
    MODELS_CUDA(cudaMemset2DAsync(static_cast<char*>(y.raw()) + n * row, m * row, 0, (m - n) * row,
                                  static_cast<std::size_t>(BH), stream()));
  MODELS_CUDA(cudaMemcpy2DAsync(y.raw(), m * row, x.raw(), n * row, n * row, static_cast<std::size_t>(BH),
                                cudaMemcpyDeviceToDevice, stream()));
  return y;
}
// x (BH, m, d) -> its first n rows of each of the BH blocks, (BH, n, d).
Tensor crop_rows(const Tensor& x, int BH, int m, int n, int d) {
  Tensor y = Tensor::empty({BH, n, d}, x.dtype());
  const std::size_t row = static_cast<std::size_t>(d) * dtype_size(x.dtype());
  MODELS_CUDA(cudaMemcpy2DAsync(y.raw(), n * row, x.raw(), m * row, n * row, static_cast<std::size_t>(BH),
                                cudaMemcpyDeviceToDevice, stream()));
  return y;
}

struct UnequalLengths {
  AttnDims q;     // (B, H, Nq, d)
  AttnDims kv;    // (B, H, Nk, d)
  AttnDims core;  // (B, H*C, Nk, d), group C
  int padded_rows() const { return core.group * kv.N; }  // C * Nk
};

struct UnequalCrossAttentionBackward final : Node {
  UnequalLengths u{};
  Tensor q, k, v, o, lse;  // q, o (B, H, C*Nk, d) padded; k, v (B, H, Nk, d); lse (B, H*C, Nk)
  const char* name() const override { return "CrossAttentionBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override {
    const int BH = u.q.B * u.q.H;
    Tensor dout = pad_rows(to_heads(g, u.q), BH, u.q.N, u.padded_rows(), u.q.d);
    Tensor dq = Tensor::empty(q.shape(), q.dtype()), dk = Tensor::empty(k.shape(), k.dtype()),
           dv = Tensor::empty(k.shape(), k.dtype());
    attention_core_backward(u.core, q, k, v, o, lse, dout, dq, dk, dv);
    dout = Tensor();
    return {needs_grad(0) ? from_heads(crop_rows(dq, BH, u.padded_rows(), u.q.N, u.q.d), u.q) : Tensor(),
            needs_grad(1) ? from_heads(dk, u.kv) : Tensor(), needs_grad(2) ? from_heads(dv, u.kv) : Tensor()};
  }
  void release() override { q = k = v = o = lse = Tensor(); }
};

// q (B, Nq, E), k and v (B, Nk, E), Nq != Nk (shapes checked by cross_attention).
Tensor cross_attention_unequal(const Tensor& q, const Tensor& k, const Tensor& v, int heads) {
  UnequalLengths u;
  u.q = dims_of(q, q.size(2), heads, false);
  u.kv = dims_of(k, k.size(2), heads, false);
  if (u.q.N < 1 || u.kv.N < 1)
    throw std::invalid_argument("cross_attention: query length " + std::to_string(u.q.N) + " and key length " +
                                std::to_string(u.kv.N) + " must be >= 1");
  const int C = (u.q.N + u.kv.N - 1) / u.kv.N;
  u.core = AttnDims{u.q.B, to_int(std::int64_t(u.q.H) * C, "heads * query chunks"), u.kv.N, u.q.d, false, C};
  const int BH = to_int(std::int64_t(u.q.B) * u.q.H, "batch * heads");
  Tensor qp = pad_rows(to_heads(q, u.q), BH, u.q.N, u.padded_rows(), u.q.d);
  Tensor kh = to_heads(k, u.kv), vh = to_heads(v, u.kv);
  Tensor o = Tensor::empty(qp.shape(), q.dtype());
  Tensor lse = Tensor::empty({u.core.B, u.core.H, u.core.N}, is_bf16(q) ? DType::f32 : q.dtype());  // (f32 for bf16)
  attention_core_forward(u.core, qp, kh, vh, o, lse);
  Tensor out = from_heads(crop_rows(o, BH, u.padded_rows(), u.q.N, u.q.d), u.q);
  if (should_record({&q, &k, &v})) {
    auto n = std::make_shared<UnequalCrossAttentionBackward>();
    n->u = u;
    n->q = std::move(qp);
    n->k = std::move(kh);
    n->v = std::move(vh);
    n->o = std::move(o);
    n->lse = std::move(lse);
    n->inputs = {q, k, v};
    record(out, n);
  }
  return out;
}

}  // namespace

Tensor self_attention(const Tensor& qkv, int heads, bool causal) {
  require_float(qkv, "self_attention");
  if (qkv.dim() != 3 || qkv.size(2) % 3 != 0) throw std::invalid_argument("self_attention: qkv must be (B, N, 3E)");
  const AttnDims a = dims_of(qkv, qkv.size(2) / 3, heads, causal);
  if (is_bf16(qkv) && std::string(attention_core_name(DType::bf16, a.N, a.N, a.d)) == "f32")
    return cast(self_attention(cast(qkv, DType::f32), heads, causal), DType::bf16);
  Tensor q = Tensor::empty({a.B, a.H, a.N, a.d}, qkv.dtype()), k = Tensor::empty(q.shape(), qkv.dtype()),
         v = Tensor::empty(q.shape(), qkv.dtype());
  dispatch_any(qkv.dtype(), [&](auto z) {
    using T = decltype(z);
    NN(nn::split_qkv<T>(qkv.data<T>(), q.data<T>(), k.data<T>(), v.data<T>(), a.B, a.N, a.H, a.d, stream()));
  });
  return attention_finish(a, std::move(q), std::move(k), std::move(v), true, {qkv});
}

Tensor cross_attention(const Tensor& q, const Tensor& k, const Tensor& v, int heads) {
  require_float(q, "cross_attention");
  require_same(q, k, "cross_attention");
  require_same(q, v, "cross_attention");
  if (k.shape() != v.shape() || q.dim() != 3 || k.dim() != 3 || q.size(0) != k.size(0) || q.size(2) != k.size(2))
    throw std::invalid_argument("cross_attention: q (B, Nq, E), k and v (B, Nk, E)");
  const AttnDims a = dims_of(q, q.size(2), heads, false);
  if (is_bf16(q) && std::string(attention_core_name(DType::bf16, a.N, a.N, a.d)) == "f32")
    return cast(cross_attention(cast(q, DType::f32), cast(k, DType::f32), cast(v, DType::f32), heads), DType::bf16);
  if (q.size(1) != k.size(1)) return cross_attention_unequal(q, k, v, heads);
  return attention_finish(a, to_heads(q, a), to_heads(k, a), to_heads(v, a), false, {q, k, v});
}

}  // namespace models
