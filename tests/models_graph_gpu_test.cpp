// The CUDA-graph training step (issue 18) on a real device (label gpu): the multi-tensor
// Adam against the per-tensor kernel, the allocator's capture pool, and the trainer with
// graph on against graph off (losses, cudaMalloc after the capture, kernels per step, a
// capture that cannot start).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "models/context.hpp"
#include "models/optim.hpp"
#include "models/trainer.hpp"
#include "models_test_support.hpp"
#include "nn/nn.hpp"
#include "test_support.hpp"

namespace {

using namespace models;
namespace nn = kernels::nn;

// Odd sizes (tails, a tensor of one element, one of two chunks and a bit) and more tensors
// than one launch takes (70 > kMaxTensors = 64).
std::vector<std::int64_t> odd_sizes() {
  std::vector<std::int64_t> s = {1, 3, 4097, 8193, 5, 1000};
  for (int i = 0; s.size() < 70; ++i) s.push_back(1 + (i * 37) % 300);
  return s;
}

template <class T>
std::vector<T> random_values(std::size_t n, std::mt19937& rng, double scale) {
  std::normal_distribution<double> d(0.0, scale);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(d(rng));
  return v;
}

template <class T>
Tensor tensor_of(const std::vector<T>& v) {
  return Tensor::from_host(v, {static_cast<std::int64_t>(v.size())});
}

// Adam (multi-tensor, the lr changing every step) against kernels::nn::adam_step called per
// tensor with the same arguments, 5 steps on the same random parameters and gradients.
template <class T>
void check_multi_tensor_adam(DType dtype, double rel_tol) {
  Context context(nullptr, "cublas");
  ContextScope scope(context);
  std::mt19937 rng(7);
  const auto sizes = odd_sizes();
  const double b1 = 0.9, b2 = 0.98, eps = 1e-8, wd = 0.01;
  std::vector<Tensor> params, ref_p, ref_m, ref_v;
  std::vector<std::vector<T>> grads;
  for (auto n : sizes) {
    const auto init = random_values<T>(static_cast<std::size_t>(n), rng, 1.0);
    params.push_back(tensor_of(init).set_requires_grad(true));
    ref_p.push_back(tensor_of(init));
    ref_m.push_back(Tensor::zeros({n}, dtype));
    ref_v.push_back(Tensor::zeros({n}, dtype));
  }
  Adam adam(params, 1e-3, b1, b2, eps, wd);
  for (int t = 1; t <= 5; ++t) {
    const double lr = 1e-3 * t;  // a new lr every step: read from device memory
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const Tensor g = tensor_of(random_values<T>(static_cast<std::size_t>(sizes[i]), rng, 0.1));
      params[i].set_grad(g);
      ASSERT_EQ(nn::adam_step<T>(ref_p[i].data<T>(), g.data<T>(), ref_m[i].data<T>(), ref_v[i].data<T>(),
                                 static_cast<std::size_t>(sizes[i]), static_cast<T>(lr), static_cast<T>(b1),
                                 static_cast<T>(b2), static_cast<T>(eps), static_cast<T>(wd), t, nullptr),
                cudaSuccess);
    }
    adam.set_lr(lr);
    adam.step();
  }
  std::size_t differing = 0, total = 0;
  double worst = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const auto got = params[i].to_host(), want = ref_p[i].to_host();
    for (std::size_t k = 0; k < got.size(); ++k) {
      ++total;
      if (got[k] != want[k]) ++differing;
      const double rel = std::abs(got[k] - want[k]) / std::max(std::abs(want[k]), 1e-30);
      worst = std::max(worst, rel);
      ASSERT_LE(std::abs(got[k] - want[k]), rel_tol * std::abs(want[k]) + rel_tol)
          << dtype_name(dtype) << " tensor " << i << " element " << k;
    }
  }
  std::printf("[multi-tensor adam %s] %zu tensors, %zu elements, 5 steps: %zu elements differ bitwise from the "
              "per-tensor kernel, worst relative difference %.3e\n",
              dtype_name(dtype), sizes.size(), total, differing, worst);
}

TEST(ModelsGraph, MultiTensorAdamMatchesPerTensorAdam) {
  REQUIRE_GPU();
  check_multi_tensor_adam<float>(DType::f32, 1e-6);
  check_multi_tensor_adam<double>(DType::f64, 1e-14);
}

// The scalar path: tensors whose pointers are not 16-byte aligned (offset by one element).
TEST(ModelsGraph, MultiTensorAdamUnalignedTensors) {
  REQUIRE_GPU();
  Context context(nullptr, "cublas");
  ContextScope scope(context);
  std::mt19937 rng(11);
  const std::int64_t n = 5001;
  const auto p0 = random_values<float>(n + 1, rng, 1.0), g0 = random_values<float>(n + 1, rng, 0.1);
  Tensor p = tensor_of(p0), g = tensor_of(g0), m = Tensor::zeros({n + 1}, DType::f32), v = Tensor::zeros({n + 1}, DType::f32);
  Tensor rp = tensor_of(p0), rm = Tensor::zeros({n + 1}, DType::f32), rv = Tensor::zeros({n + 1}, DType::f32);
  Tensor scalars = Tensor::zeros({8}, DType::f64);
  auto* sc = static_cast<nn::AdamStepScalars*>(scalars.raw());
  ASSERT_EQ(nn::adam_set_scalars(sc, nn::adam_step_scalars(3e-3, 0.9, 0.999, 1), nullptr), cudaSuccess);
  nn::AdamTensorList<float> list;
  list.count = 1;
  list.p[0] = p.data<float>() + 1;
  list.g[0] = g.data<float>() + 1;
  list.m[0] = m.data<float>() + 1;
  list.v[0] = v.data<float>() + 1;
  list.n[0] = n;
  ASSERT_EQ(nn::adam_multi_tensor<float>(list, sc, 0.9f, 0.999f, 1e-8f, 0.f, nullptr), cudaSuccess);
  ASSERT_EQ(nn::adam_step<float>(rp.data<float>() + 1, g.data<float>() + 1, rm.data<float>() + 1,
                                 rv.data<float>() + 1, n, 3e-3f, 0.9f, 0.999f, 1e-8f, 0.f, 1, nullptr),
            cudaSuccess);
  const auto got = p.to_host(), want = rp.to_host();
  EXPECT_EQ(got[0], p0[0]);  // before the list: untouched
  for (std::size_t k = 1; k < got.size(); ++k) ASSERT_NEAR(got[k], want[k], 1e-6 * std::abs(want[k]) + 1e-7) << k;
}

// clip_grad_norm (two multi-tensor launches per 128 gradients) against sum_squares and
// clip_by_norm called per tensor: the norm is the same sum in another order (within float
// rounding), and with a scale of 1 nothing is written.
TEST(ModelsGraph, MultiTensorClipMatchesPerTensorClip) {
  REQUIRE_GPU();
  Context context(nullptr, "cublas");
  ContextScope scope(context);
  std::mt19937 rng(5);
  std::vector<std::int64_t> sizes = odd_sizes();
  for (int i = 0; i < 70; ++i) sizes.push_back(1 + i);  // 140 tensors: two lists
  std::vector<Tensor> params, ref;
  for (auto n : sizes) {
    const auto g = random_values<float>(static_cast<std::size_t>(n), rng, 1.0);
    params.push_back(Tensor::zeros({n}, DType::f32).set_requires_grad(true));
    params.back().set_grad(tensor_of(g));
    ref.push_back(tensor_of(g));
  }
  Tensor ref_sumsq = Tensor::zeros({1}, DType::f32);
  for (auto& r : ref)
    ASSERT_EQ(nn::sum_squares<float>(r.data<float>(), ref_sumsq.data<float>(), static_cast<std::size_t>(r.numel()), nullptr),
              cudaSuccess);
  for (auto& r : ref)
    ASSERT_EQ(nn::clip_by_norm<float>(r.data<float>(), static_cast<std::size_t>(r.numel()), ref_sumsq.data<float>(), 1.0f,
                                      nullptr),
              cudaSuccess);
  const Tensor sumsq = clip_grad_norm(params, 1.0);
  const double got = sumsq.item(), want = ref_sumsq.item();
  EXPECT_NEAR(got, want, 1e-5 * want);
  double worst = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const auto a = params[i].grad().to_host(), b = ref[i].to_host();
    for (std::size_t k = 0; k < a.size(); ++k) {
      worst = std::max(worst, std::abs(a[k] - b[k]) / std::max(std::abs(b[k]), 1e-30));
      ASSERT_NEAR(a[k], b[k], 1e-5 * std::abs(b[k]) + 1e-12) << i << " " << k;
    }
  }
  std::printf("[multi-tensor clip] %zu tensors: ||g||^2 %.6f (per tensor %.6f), worst relative difference of the "
              "clipped gradients %.3e\n",
              sizes.size(), got, want, worst);
  // A norm below max_norm: nothing changes.
  const auto before = params[2].grad().to_host();
  clip_grad_norm(params, 1e9);
  EXPECT_EQ(params[2].grad().to_host(), before);
}

TEST(ModelsGraph, AllocatorCapturePoolKeepsItsBlocks) {
  REQUIRE_GPU();
  CachingAllocator a;
  a.begin_capture();
  EXPECT_THROW(a.begin_capture(), std::logic_error);
  void* p = a.allocate(1000);
  a.deallocate(p, 1000);
  void* again = a.allocate(1000);  // inside the capture: the pool's own block
  EXPECT_EQ(again, p);
  a.deallocate(again, 1000);
  a.end_capture();
  EXPECT_EQ(a.private_pool_blocks(), 1u);
  EXPECT_THROW(a.begin_capture(), std::logic_error);  // the pool is still reserved
  void* other = a.allocate(1000);  // outside: never the graph's block
  EXPECT_NE(other, p);
  a.deallocate(other, 1000);
  a.release_private_pool();
  EXPECT_EQ(a.private_pool_blocks(), 0u);
  void* x = a.allocate(1000);
  void* y = a.allocate(1000);
  EXPECT_TRUE(x == p || y == p);  // back in the shared lists
  a.deallocate(x, 1000);
  a.deallocate(y, 1000);
}

TrainConfig small_config(bool graph) {
  TrainConfig c = test::small_step_config("cublas");
  c.graph = graph;
  return c;
}

using models_test::Stream;

double max_rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
    worst = std::max(worst, std::abs(a[i] - b[i]) / std::max(std::abs(a[i]), 1e-30));
  return worst;
}

// Graph on and off train the same model on the same batches: the same kernels run with the
// same arguments, but sum_squares (the clip norm) and the embedding backward use atomicAdd,
// so the last bits may differ from run to run: equal within float rounding, tolerance 1e-4
// relative over 12 steps (an eager run against a second eager run is printed for scale).
TEST(ModelsGraph, GraphTrainingMatchesEagerTraining) {
  REQUIRE_GPU();
  constexpr int kSteps = 12;
  Stream s1, s2, s3;
  TransformerTrainer eager(small_config(false), s1.s), eager2(small_config(false), s2.s),
      graph(small_config(true), s3.s);
  for (int i = 0; i < kSteps; ++i) {
    eager.step();
    eager2.step();
    graph.step();
    if (i == 5) {
      // A counting capture in the middle of eager training changes nothing on the device.
      const auto c = eager.step_launches();
      EXPECT_GT(c.kernels, 0);
    }
  }
  EXPECT_TRUE(graph.graph_captured());
  EXPECT_FALSE(eager.graph_captured());
  const auto le = eager.losses(), le2 = eager2.losses(), lg = graph.losses();
  ASSERT_EQ(le.size(), static_cast<std::size_t>(kSteps));
  ASSERT_EQ(lg.size(), static_cast<std::size_t>(kSteps));
  std::size_t bitwise = 0;
  for (int i = 0; i < kSteps; ++i) bitwise += le[static_cast<std::size_t>(i)] == lg[static_cast<std::size_t>(i)];
  std::printf("[graph vs eager] losses over %d steps: eager %.6f -> %.6f, graph %.6f -> %.6f; max relative "
              "difference graph/eager %.3e (eager/eager %.3e); %zu of %d bitwise equal\n",
              kSteps, le.front(), le.back(), lg.front(), lg.back(), max_rel_diff(le, lg), max_rel_diff(le, le2),
              bitwise, kSteps);
  for (int i = 0; i < kSteps; ++i) {
    const auto k = static_cast<std::size_t>(i);
    EXPECT_NEAR(lg[k], le[k], 1e-4 * std::abs(le[k])) << "step " << i;
    EXPECT_TRUE(std::isfinite(lg[k]));
  }
  EXPECT_LT(lg.back(), lg.front());
}

TEST(ModelsGraph, NoCudaMallocAfterTheCaptureAndFixedKernelsPerStep) {
  REQUIRE_GPU();
  Stream st;
  const TrainConfig c = small_config(true);
  TransformerTrainer t(c, st.s);
  for (int i = 0; i < 10; ++i) t.step();
  const auto& m = t.mallocs_per_step();
  std::uint64_t after = 0;
  for (std::size_t i = static_cast<std::size_t>(c.graph_warmup_steps); i < m.size(); ++i) after += m[i];
  EXPECT_EQ(after, 0u) << "cudaMalloc calls from the capture step on";
  EXPECT_GT(t.context().allocator().private_pool_blocks(), 0u);
  const auto g1 = t.step_launches();
  for (int i = 0; i < 3; ++i) t.step();
  const auto g2 = t.step_launches();
  EXPECT_GT(g1.kernels, 0);
  EXPECT_EQ(g1.kernels, g2.kernels);
  EXPECT_EQ(g1.host_launches, 5);  // prepare's kernel, three batch copies, cudaGraphLaunch

  Stream st2;
  TransformerTrainer e(small_config(false), st2.s);
  for (int i = 0; i < 3; ++i) e.step();
  const auto e1 = e.step_launches();
  for (int i = 0; i < 3; ++i) e.step();
  const auto e2 = e.step_launches();
  EXPECT_EQ(e1.kernels, e2.kernels);
  EXPECT_EQ(e1.kernels, g1.kernels);  // the same code runs with graph on and off
  EXPECT_EQ(e1.memsets, g1.memsets);
  EXPECT_GT(e1.host_launches, g1.host_launches);
  std::uint64_t eager_after = 0;
  for (std::size_t i = 2; i < e.mallocs_per_step().size(); ++i) eager_after += e.mallocs_per_step()[i];
  EXPECT_EQ(eager_after, 0u) << "the counting captures allocate nothing new either";
  const auto ph = t.phase_times(c.graph_warmup_steps);
  EXPECT_EQ(ph.phase_steps, 0);  // graph steps: step times only
  EXPECT_GT(ph.steps, 0);
  const auto pe = e.phase_times(2);
  EXPECT_EQ(pe.phase_steps, pe.steps);
  std::printf("[kernels per step] graph off: %lld kernels, %lld memsets, %lld memcpys, %lld other, %lld host launch "
              "calls; graph on: %lld kernels, %lld host launch calls; %.3f ms/step eager, %.3f ms/step graph\n",
              static_cast<long long>(e1.kernels), static_cast<long long>(e1.memsets),
              static_cast<long long>(e1.memcopies), static_cast<long long>(e1.other),
              static_cast<long long>(e1.host_launches), static_cast<long long>(g1.kernels),
              static_cast<long long>(g1.host_launches), pe.step, ph.step);
}

// A capture that cannot start (the stream is already capturing) ends in an exception naming
// the call, not a hang; the trainer captures at the next step.
TEST(ModelsGraph, CaptureFailureNamesTheCall) {
  REQUIRE_GPU();
  Stream st;
  TrainConfig c = small_config(true);
  c.graph_warmup_steps = 1;
  TransformerTrainer t(c, st.s);
  t.step();
  ASSERT_EQ(cudaStreamBeginCapture(st.s, cudaStreamCaptureModeRelaxed), cudaSuccess);
  std::string message;
  try {
    t.step();
  } catch (const CudaError& e) {
    message = e.what();
  }
  cudaGraph_t outer = nullptr;
  (void)cudaStreamEndCapture(st.s, &outer);  // (the failed nested begin may have invalidated it)
  if (outer != nullptr) (void)cudaGraphDestroy(outer);
  (void)cudaGetLastError();
  std::printf("[capture failure] %s\n", message.c_str());
  EXPECT_NE(message.find("cudaStreamBeginCapture"), std::string::npos) << message;
  EXPECT_FALSE(t.graph_captured());
  t.step();
  t.step();
  EXPECT_TRUE(t.graph_captured());
  const auto l = t.losses();
  EXPECT_TRUE(std::isfinite(l.back()));
}

}  // namespace
