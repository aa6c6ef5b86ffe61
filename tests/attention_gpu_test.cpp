// The attention kernels on a real device (label gpu): flash and naive, forward and
// backward, against the double-precision CPU references, at ragged sizes (N = 1, 17, 129,
// 1000), every head dim, causal, GQA/MQA, a custom scale and large-magnitude scores.
// Outputs are poisoned (0xFF bytes) before each launch, so an element a kernel never
// writes is reported as such.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "attention/attention.hpp"
#include "attention_rules.hpp"
#include "harness/check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/dtype.hpp"
#include "harness/random.hpp"
#include "test_support.hpp"

namespace {

namespace attn = kernels::attention;
using attn::Shape;
using harness::DeviceBuffer;

using harness::test::have_device;

Shape shape(int b, int h, int hkv, int n, int d, bool causal, float scale = 0.0f) {
  Shape s;
  s.batch = b, s.heads = h, s.kv_heads = hkv, s.seq_len = n, s.head_dim = d;
  s.causal = causal, s.scale = scale;
  return s;
}

std::string describe(const Shape& s) {
  return "B=" + std::to_string(s.batch) + " H=" + std::to_string(s.heads) +
         " Hkv=" + std::to_string(s.kv_heads) + " N=" + std::to_string(s.seq_len) +
         " d=" + std::to_string(s.head_dim) + (s.causal ? " causal" : "") +
         (s.scale != 0.0f ? " scale=" + std::to_string(s.scale) : "");
}

// Host inputs N(0, 1) (Q and K times `qk_magnitude`) and their device copies.
struct Problem {
  Shape s;
  std::vector<float> q, k, v, d_o;
  DeviceBuffer<float> q_dev, k_dev, v_dev, do_dev;

  Problem(const Shape& shape_, std::uint64_t seed, float qk_magnitude = 1.0f)
      : s(shape_), q(s.q_elements()), k(s.kv_elements()), v(s.kv_elements()),
        d_o(s.q_elements()) {
    harness::fill_normal(q, seed, 1, qk_magnitude);
    harness::fill_normal(k, seed, 2, qk_magnitude);
    harness::fill_normal(v, seed, 3);
    harness::fill_normal(d_o, seed, 4);
    q_dev = DeviceBuffer<float>(q.size());
    k_dev = DeviceBuffer<float>(k.size());
    v_dev = DeviceBuffer<float>(v.size());
    do_dev = DeviceBuffer<float>(d_o.size());
    q_dev.upload(q);
    k_dev.upload(k);
    v_dev.upload(v);
    do_dev.upload(d_o);
  }
};

struct Forward {
  std::vector<float> o, lse;
};
struct Backward {
  std::vector<float> dq, dk, dv;
};

std::vector<float> download(const DeviceBuffer<float>& b) {
  std::vector<float> h(b.size());
  b.download(h);
  return h;
}

// flash: the FP32 SIMT kernels; tf32x3: the same algorithm with 3xTF32 tensor-core products
// (tf32x3_k32: its forward at 32-key tiles).
enum class Kind { naive, flash, tf32x3, tf32x3_k32 };

// Runs a forward kernel on poisoned outputs; device buffers of O and LSE are kept in
// `o`, `lse` for a backward run.
Forward gpu_forward(Problem& p, Kind kind, DeviceBuffer<float>& o, DeviceBuffer<float>& lse) {
  o = DeviceBuffer<float>(p.q.size());
  lse = DeviceBuffer<float>(p.s.lse_elements());
  o.poison(nullptr);
  lse.poison(nullptr);
  if (kind == Kind::flash) {
    EXPECT_EQ(attn::flash_forward(p.s, p.q_dev.data(), p.k_dev.data(), p.v_dev.data(), o.data(),
                                  lse.data(), nullptr),
              cudaSuccess);
  } else if (kind == Kind::tf32x3 || kind == Kind::tf32x3_k32) {
    EXPECT_EQ(attn::flash_forward_tf32x3(p.s, p.q_dev.data(), p.k_dev.data(), p.v_dev.data(), o.data(),
                                         lse.data(), nullptr, kind == Kind::tf32x3_k32 ? 32 : 0),
              cudaSuccess);
  } else {
    DeviceBuffer<float> ws(attn::naive_forward_workspace_bytes(p.s) / sizeof(float));
    EXPECT_EQ(attn::naive_forward(p.s, p.q_dev.data(), p.k_dev.data(), p.v_dev.data(), o.data(),
                                  lse.data(), ws.data(), nullptr),
              cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return {download(o), download(lse)};
}

Forward gpu_forward(Problem& p, Kind kind) {
  DeviceBuffer<float> o, lse;
  return gpu_forward(p, kind, o, lse);
}

Backward gpu_backward(Problem& p, Kind kind) {
  DeviceBuffer<float> o, lse;
  gpu_forward(p, Kind::flash, o, lse);
  DeviceBuffer<float> dq(p.q.size()), dk(p.k.size()), dv(p.v.size());
  dq.poison(nullptr);
  dk.poison(nullptr);
  dv.poison(nullptr);
  const std::size_t ws_bytes = kind == Kind::naive ? attn::naive_backward_workspace_bytes(p.s)
                                                   : attn::flash_backward_workspace_bytes(p.s);
  DeviceBuffer<float> ws(ws_bytes / sizeof(float));
  auto launch = kind == Kind::flash    ? attn::flash_backward
                : kind == Kind::tf32x3 ? attn::flash_backward_tf32x3
                                       : attn::naive_backward;
  EXPECT_EQ(launch(p.s, p.q_dev.data(), p.k_dev.data(), p.v_dev.data(), o.data(), lse.data(),
                   p.do_dev.data(), dq.data(), dk.data(), dv.data(), ws.data(), nullptr),
            cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return {download(dq), download(dk), download(dv)};
}

Forward cpu_forward(const Problem& p) {
  Forward f{std::vector<float>(p.q.size()), std::vector<float>(p.s.lse_elements())};
  attn::forward_cpu(p.s, p.q.data(), p.k.data(), p.v.data(), f.o.data(), f.lse.data());
  return f;
}

Backward cpu_backward(const Problem& p) {
  Backward b{std::vector<float>(p.q.size()), std::vector<float>(p.k.size()),
             std::vector<float>(p.v.size())};
  attn::backward_cpu(p.s, p.q.data(), p.k.data(), p.v.data(), p.d_o.data(), b.dq.data(),
                     b.dk.data(), b.dv.data());
  return b;
}

// Every element written, finite and within abs + rel * |want|; prints the margin.
void expect_match(const std::vector<harness::Output>& got, const std::vector<harness::Output>& want,
                  double abs, double rel, const std::string& what) {
  const auto r = harness::compare_outputs(got, want, {abs, rel});
  EXPECT_TRUE(r.passed) << what << ": " << r.summary();
  std::printf("  %-60s max abs err %.3g (tolerance abs %.3g rel %.3g)\n", what.c_str(),
              r.max_abs_error, abs, rel);
}

// Checked with the harness' own tolerance for the shape (plugins/attention/attention_rules.hpp).
void expect_forward(const Forward& got, const Forward& want, const Shape& s, const std::string& what) {
  const harness::Tolerance t = plugins::attention::tolerance(s, false);
  expect_match({{"O", got.o}, {"LSE", got.lse}}, {{"O", want.o}, {"LSE", want.lse}}, t.abs, t.rel,
               what);
}

void expect_backward(const Backward& got, const Backward& want, const Shape& s,
                     const std::string& what) {
  const harness::Tolerance t = plugins::attention::tolerance(s, true);
  expect_match({{"dQ", got.dq}, {"dK", got.dk}, {"dV", got.dv}},
               {{"dQ", want.dq}, {"dK", want.dk}, {"dV", want.dv}}, t.abs, t.rel, what);
}

// Calls f(n, d, causal, hkv) for every sequence length n, head dim d, causal off then on, and
// kv head count hkv (in that nesting, n outermost): the sweeps of the tests below.
template <class F>
void for_each_case(std::initializer_list<int> ns, std::initializer_list<int> ds, std::initializer_list<int> hkvs,
                   F f) {
  for (int n : ns)
    for (int d : ds)
      for (bool causal : {false, true})
        for (int hkv : hkvs) f(n, d, causal, hkv);
}

TEST(AttentionGpu, FlashForwardMatchesCpuAtRaggedSizes) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  std::uint64_t seed = 100;
  for_each_case({1, 17, 129, 1000}, {32, 64, 128}, {4, 1}, [&](int n, int d, bool causal, int hkv) {  // MHA, MQA
    Problem p(shape(1, 4, hkv, n, d, causal), ++seed);
    expect_forward(gpu_forward(p, Kind::flash), cpu_forward(p), p.s, "flash fwd " + describe(p.s));
  });
}

TEST(AttentionGpu, FlashForwardBatchesGqaAndCustomScale) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  for (bool causal : {false, true}) {
    Problem p(shape(3, 8, 2, 200, 64, causal, 0.3f), 7);  // 4 query heads per kv head
    expect_forward(gpu_forward(p, Kind::flash), cpu_forward(p), p.s, "flash fwd " + describe(p.s));
  }
}

TEST(AttentionGpu, NaiveForwardMatchesCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  std::uint64_t seed = 200;
  for (int n : {1, 17, 129, 1000})
    for (int d : {32, 64, 128})
      for (bool causal : {false, true}) {
        Problem p(shape(2, 4, 2, n, d, causal), ++seed);
        expect_forward(gpu_forward(p, Kind::naive), cpu_forward(p), p.s,
                       "naive fwd " + describe(p.s));
      }
}

TEST(AttentionGpu, FlashMatchesNaiveAt4096) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  for (bool causal : {false, true})
    for (int d : {64, 128}) {
      Problem p(shape(1, 4, 4, 4096, d, causal), 300 + d);
      expect_forward(gpu_forward(p, Kind::flash), gpu_forward(p, Kind::naive), p.s,
                     "flash vs naive " + describe(p.s));
    }
}

// Scores 100x and 10^4x the usual size: a softmax without the max subtraction overflows
// exp to Inf and NaN. With scores ~ 1e4 the FP32 rounding of a score alone (~1e-2)
// moves the weights of near-tied keys, so that case checks finiteness and a loose match.
TEST(AttentionGpu, LargeMagnitudeScoresStayFinite) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  for (bool causal : {false, true})
    for (Kind kind : {Kind::flash, Kind::tf32x3, Kind::naive}) {
      const std::string name = kind == Kind::flash ? "flash" : kind == Kind::tf32x3 ? "flash 3xtf32" : "naive";
      Problem p10(shape(1, 2, 1, 300, 64, causal), 400, 10.0f);  // scores x100
      const Forward got10 = gpu_forward(p10, kind), want10 = cpu_forward(p10);
      expect_match({{"O", got10.o}, {"LSE", got10.lse}}, {{"O", want10.o}, {"LSE", want10.lse}},
                   1e-2, 1e-5, name + " fwd, scores x100, " + describe(p10.s));
      Problem p100(shape(1, 2, 1, 300, 64, causal), 401, 100.0f);  // scores x10^4
      const Forward got = gpu_forward(p100, kind), want = cpu_forward(p100);
      expect_match({{"O", got.o}}, {{"O", want.o}}, 0.5, 0.0,
                   name + " fwd O, scores x10^4, " + describe(p100.s));
      expect_match({{"LSE", got.lse}}, {{"LSE", want.lse}}, 0.0, 1e-5,
                   name + " fwd LSE, scores x10^4, " + describe(p100.s));
    }
}

TEST(AttentionGpu, FlashBackwardMatchesCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  std::uint64_t seed = 500;
  for_each_case({1, 17, 129, 300}, {32, 64, 128}, {4, 2, 1}, [&](int n, int d, bool causal, int hkv) {
    Problem p(shape(1, 4, hkv, n, d, causal), ++seed);
    expect_backward(gpu_backward(p, Kind::flash), cpu_backward(p), p.s, "flash bwd " + describe(p.s));
  });
}

TEST(AttentionGpu, NaiveBackwardMatchesCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  std::uint64_t seed = 600;
  for_each_case({1, 17, 129, 300}, {32, 64, 128}, {4, 1}, [&](int n, int d, bool causal, int hkv) {
    Problem p(shape(2, 4, hkv, n, d, causal), ++seed);
    expect_backward(gpu_backward(p, Kind::naive), cpu_backward(p), p.s, "naive bwd " + describe(p.s));
  });
}

TEST(AttentionGpu, FlashBackwardMatchesNaiveAt2048) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  for (bool causal : {false, true}) {
    Problem p(shape(1, 4, 2, 2048, 64, causal), 700);
    expect_backward(gpu_backward(p, Kind::flash), gpu_backward(p, Kind::naive), p.s,
                    "flash vs naive bwd " + describe(p.s));
  }
}

// The 3xTF32 kernels at the FP32 tolerances (plugins/attention/attention_rules.hpp) against
// the double reference: N = 1, 3, 13, 999 (partial 64-row and 64-key tiles), every head
// dim, causal, MHA / GQA 2:1 / MQA, batch 2, a custom scale.
TEST(AttentionGpu, Tf32x3ForwardMatchesCpuAtOddSizes) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  std::uint64_t seed = 800;
  for_each_case({1, 3, 13, 999}, {32, 64, 128}, {4, 2, 1}, [&](int n, int d, bool causal, int hkv) {
    Problem p(shape(2, 4, hkv, n, d, causal, hkv == 2 ? 0.3f : 0.0f), ++seed);
    const Forward want = cpu_forward(p);
    expect_forward(gpu_forward(p, Kind::tf32x3), want, p.s, "flash 3xtf32 fwd " + describe(p.s));
    expect_forward(gpu_forward(p, Kind::tf32x3_k32), want, p.s, "flash 3xtf32 k32 fwd " + describe(p.s));
  });
}

TEST(AttentionGpu, Tf32x3BackwardMatchesCpuAtOddSizes) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  std::uint64_t seed = 900;
  for_each_case({1, 3, 13, 129, 333}, {32, 64, 128}, {4, 2, 1}, [&](int n, int d, bool causal, int hkv) {
    Problem p(shape(2, 4, hkv, n, d, causal, hkv == 2 ? 0.3f : 0.0f), ++seed);
    expect_backward(gpu_backward(p, Kind::tf32x3), cpu_backward(p), p.s, "flash 3xtf32 bwd " + describe(p.s));
  });
}

// Long rows (64 key tiles, online-softmax rescales across them): against naive at N = 4096
// forward and N = 2048 backward, d = 64 and 128, GQA 2:1.
TEST(AttentionGpu, Tf32x3MatchesNaiveAtLongRows) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  for (bool causal : {false, true})
    for (int d : {64, 128}) {
      Problem p(shape(1, 4, 4, 4096, d, causal), 1000 + d);
      const Forward naive = gpu_forward(p, Kind::naive);
      expect_forward(gpu_forward(p, Kind::tf32x3), naive, p.s, "flash 3xtf32 vs naive " + describe(p.s));
      expect_forward(gpu_forward(p, Kind::tf32x3_k32), naive, p.s, "flash 3xtf32 k32 vs naive " + describe(p.s));
      Problem pb(shape(1, 4, 2, 2048, d, causal), 1100 + d);
      expect_backward(gpu_backward(pb, Kind::tf32x3), gpu_backward(pb, Kind::naive), pb.s,
                      "flash 3xtf32 vs naive bwd " + describe(pb.s));
    }
}

TEST(AttentionGpu, RejectsUnsupportedHeadDim) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  EXPECT_FALSE(attn::flash_supported(96));
  Shape s = shape(1, 1, 1, 16, 96, false);
  EXPECT_THROW(attn::flash_forward(s, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr),
               std::invalid_argument);
  EXPECT_THROW(attn::flash_forward_tf32x3(s, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr),
               std::invalid_argument);
  EXPECT_THROW(attn::flash_forward_tf32x3(shape(1, 1, 1, 16, 64, false), nullptr, nullptr, nullptr, nullptr,
                                          nullptr, nullptr, 48),
               std::invalid_argument);  // 48-key tiles: no such kernel
  EXPECT_THROW(attn::flash_backward_tf32x3(s, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                           nullptr, nullptr, nullptr, nullptr),
               std::invalid_argument);
}

// ---- bf16 / f16 on tensor cores (flash_tc_*) against the double reference on the same
// rounded inputs, its outputs rounded to the dtype; tolerances of attention_rules.hpp.

std::vector<std::uint16_t> bits_of(const std::vector<float>& x, harness::DType dt) {
  std::vector<std::uint16_t> b(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) harness::store_from_double(&b[i], dt, x[i]);
  return b;
}
std::vector<float> floats_of(const std::vector<std::uint16_t>& b, harness::DType dt) {
  std::vector<float> x(b.size());
  for (std::size_t i = 0; i < b.size(); ++i) x[i] = static_cast<float>(harness::load_as_double(&b[i], dt));
  return x;
}
std::vector<float> rounded(const std::vector<float>& x, harness::DType dt) { return floats_of(bits_of(x, dt), dt); }
std::vector<std::uint16_t> download16(const DeviceBuffer<std::uint16_t>& b) {
  std::vector<std::uint16_t> h(b.size());
  b.download(h);
  return h;
}

struct HalfProblem {
  Shape s;
  harness::DType dt;
  attn::Precision precision;
  std::vector<float> q, k, v, d_o;  // the rounded values, as floats
  DeviceBuffer<std::uint16_t> q_dev, k_dev, v_dev, do_dev;

  HalfProblem(const Shape& shape_, harness::DType type, std::uint64_t seed)
      : s(shape_), dt(type), precision(type == harness::DType::bf16 ? attn::Precision::bf16 : attn::Precision::f16),
        q(s.q_elements()), k(s.kv_elements()), v(s.kv_elements()), d_o(s.q_elements()) {
    harness::fill_normal(q, seed, 1);
    harness::fill_normal(k, seed, 2);
    harness::fill_normal(v, seed, 3);
    harness::fill_normal(d_o, seed, 4);
    auto put = [&](std::vector<float>& x, DeviceBuffer<std::uint16_t>& dev) {
      const auto b = bits_of(x, dt);
      x = floats_of(b, dt);
      dev = DeviceBuffer<std::uint16_t>(b.size());
      dev.upload(b);
    };
    put(q, q_dev);
    put(k, k_dev);
    put(v, v_dev);
    put(d_o, do_dev);
  }
  std::string name() const { return std::string(dt == harness::DType::bf16 ? "bf16 " : "f16 ") + describe(s); }
};

// The tensor-core forward on poisoned outputs; O and LSE stay on the device in `o`, `lse`.
Forward tc_forward(HalfProblem& p, DeviceBuffer<std::uint16_t>& o, DeviceBuffer<float>& lse,
                   attn::TcTiles tiles = attn::TcTiles::automatic) {
  o = DeviceBuffer<std::uint16_t>(p.q.size());
  lse = DeviceBuffer<float>(p.s.lse_elements());
  o.poison(nullptr);
  lse.poison(nullptr);
  EXPECT_EQ(attn::flash_tc_forward(p.s, p.precision, p.q_dev.data(), p.k_dev.data(), p.v_dev.data(), o.data(),
                                   lse.data(), nullptr, tiles),
            cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return {floats_of(download16(o), p.dt), download(lse)};
}

// Every block shape (64 rows; 128 rows of 4 or 8 warps) against the same reference.
const char* tiles_name(attn::TcTiles tiles) {
  switch (tiles) {
    case attn::TcTiles::rows64: return "r64 ";
    case attn::TcTiles::rows128: return "r128 ";
    case attn::TcTiles::rows128_w8: return "r128w8 ";
    case attn::TcTiles::rows128_deep: return "deep ";
    default: return "auto ";
  }
}
void expect_tc_forward(HalfProblem& p) {
  Forward want{std::vector<float>(p.q.size()), std::vector<float>(p.s.lse_elements())};
  attn::forward_cpu(p.s, p.q.data(), p.k.data(), p.v.data(), want.o.data(), want.lse.data());
  want.o = rounded(want.o, p.dt);
  const harness::Tolerance t = plugins::attention::tolerance(p.s, false, p.dt);
  for (attn::TcTiles tiles : {attn::TcTiles::rows64, attn::TcTiles::rows128, attn::TcTiles::rows128_w8,
                              attn::TcTiles::rows128_deep}) {
    DeviceBuffer<std::uint16_t> o;
    DeviceBuffer<float> lse;
    const Forward got = tc_forward(p, o, lse, tiles);
    expect_match({{"O", got.o}, {"LSE", got.lse}}, {{"O", want.o}, {"LSE", want.lse}}, t.abs, t.rel,
                 std::string("flash_tc fwd ") + tiles_name(tiles) + p.name());
  }
}

// Every backward block shape (64 keys of 4 warps; 128 keys of 4 warps x 32 at d = 64, of 8
// warps x 16) against one reference.
void expect_tc_backward(HalfProblem& p) {
  DeviceBuffer<std::uint16_t> o;
  DeviceBuffer<float> lse;
  tc_forward(p, o, lse);
  Backward want{std::vector<float>(p.q.size()), std::vector<float>(p.k.size()), std::vector<float>(p.v.size())};
  attn::backward_cpu(p.s, p.q.data(), p.k.data(), p.v.data(), p.d_o.data(), want.dq.data(), want.dk.data(),
                     want.dv.data());
  const harness::Tolerance t = plugins::attention::tolerance(p.s, true, p.dt);
  for (attn::TcTiles tiles : {attn::TcTiles::rows64, attn::TcTiles::rows128, attn::TcTiles::rows128_w8,
                              attn::TcTiles::rows128_deep}) {
    if (tiles == attn::TcTiles::rows128 && p.s.head_dim == 128) continue;  // no such kernel (refused)
    DeviceBuffer<std::uint16_t> dq(p.q.size()), dk(p.k.size()), dv(p.v.size());
    dq.poison(nullptr);
    dk.poison(nullptr);
    dv.poison(nullptr);
    DeviceBuffer<float> ws(attn::flash_tc_backward_workspace_bytes(p.s) / sizeof(float));
    EXPECT_EQ(attn::flash_tc_backward(p.s, p.precision, p.q_dev.data(), p.k_dev.data(), p.v_dev.data(), o.data(),
                                      lse.data(), p.do_dev.data(), dq.data(), dk.data(), dv.data(), ws.data(), nullptr,
                                      tiles),
              cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    expect_match({{"dQ", floats_of(download16(dq), p.dt)}, {"dK", floats_of(download16(dk), p.dt)},
                  {"dV", floats_of(download16(dv), p.dt)}},
                 {{"dQ", rounded(want.dq, p.dt)}, {"dK", rounded(want.dk, p.dt)}, {"dV", rounded(want.dv, p.dt)}},
                 t.abs, t.rel, std::string("flash_tc bwd ") + tiles_name(tiles) + p.name());
  }
}

TEST(AttentionGpuTensorCores, ForwardMatchesCpuAtOddSizes) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  std::uint64_t seed = 800;
  for (int n : {1, 3, 17, 129, 999})
    for (int d : {64, 128})
      for (bool causal : {false, true})
        for (int hkv : {4, 1}) {  // MHA and MQA
          HalfProblem p(shape(1, 4, hkv, n, d, causal), harness::DType::bf16, ++seed);
          expect_tc_forward(p);
        }
  for (int d : {64, 128})
    for (bool causal : {false, true}) {
      HalfProblem p(shape(2, 8, 2, 333, d, causal, 0.3f), harness::DType::f16, ++seed);  // GQA 4:1, B = 2
      expect_tc_forward(p);
    }
}

TEST(AttentionGpuTensorCores, BackwardMatchesCpuAtOddSizes) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  std::uint64_t seed = 900;
  for (int n : {1, 3, 17, 129, 999})
    for (int d : {64, 128})
      for (bool causal : {false, true})
        for (int hkv : {4, 2, 1}) {
          HalfProblem p(shape(1, 4, hkv, n, d, causal), harness::DType::bf16, ++seed);
          expect_tc_backward(p);
        }
  for (int d : {64, 128})
    for (bool causal : {false, true}) {
      HalfProblem p(shape(2, 8, 2, 200, d, causal, 0.3f), harness::DType::f16, ++seed);
      expect_tc_backward(p);
    }
}

// The FP32 flash forward on the problem's rounded inputs, O rounded to the dtype: a second,
// independent path where the host reference would take minutes.
Forward fp32_flash_on_rounded_inputs(const HalfProblem& p) {
  Problem f(p.s, 1);  // replaced by the rounded inputs
  f.q = p.q, f.k = p.k, f.v = p.v;
  f.q_dev.upload(f.q);
  f.k_dev.upload(f.k);
  f.v_dev.upload(f.v);
  Forward want = gpu_forward(f, Kind::flash);
  want.o = rounded(want.o, p.dt);
  return want;
}

// At N = 4096 the bf16 kernels against the FP32 flash kernels on the same rounded inputs
// (a second, independent path; the cpu reference would take minutes here).
TEST(AttentionGpuTensorCores, MatchesFp32FlashAt4096) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  for (bool causal : {false, true})
    for (int d : {64, 128}) {
      HalfProblem p(shape(1, 4, 2, 4096, d, causal), harness::DType::bf16, 1000 + d);
      DeviceBuffer<std::uint16_t> o;
      DeviceBuffer<float> lse;
      const Forward got = tc_forward(p, o, lse);
      const Forward want = fp32_flash_on_rounded_inputs(p);
      const harness::Tolerance t = plugins::attention::tolerance(p.s, false, p.dt);
      expect_match({{"O", got.o}, {"LSE", got.lse}}, {{"O", want.o}, {"LSE", want.lse}}, t.abs, t.rel,
                   "flash_tc vs fp32 flash " + p.name());
    }
}

// The forward folds the scale into exp2(fma(s, c, -m)) and moves a negative scale into Q's
// sign: negative scales (the row max of c s is then c times the raw minimum), and N at and
// around the 48-key tile of d = 128 (48, 97: one full tile plus a tail of 1), causal.
TEST(AttentionGpuTensorCores, ForwardNegativeScaleAndKeyTileEdges) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  std::uint64_t seed = 1200;
  for (int n : {48, 97, 130})
    for (int d : {64, 128})
      for (bool causal : {false, true})
        for (float scale : {-0.2f, 0.0f}) {
          HalfProblem p(shape(1, 4, 2, n, d, causal, scale), harness::DType::bf16, ++seed);
          expect_tc_forward(p);
        }
}

TEST(AttentionGpuTensorCores, RejectsUnsupportedHeadDim) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  for (int d : {32, 96, 256}) {
    EXPECT_FALSE(attn::flash_tc_supported(d));
    const Shape s = shape(1, 1, 1, 16, d, false);
    EXPECT_THROW(attn::flash_tc_forward(s, attn::Precision::bf16, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr),
                 std::invalid_argument);
  }
}

// ---- The Hopper forward (wgmma + TMA, flash_hopper_forward) against the same double
// reference; it skips (with the reason) on GPUs other than sm_90.

// The Hopper forward on poisoned outputs.
Forward hopper_forward(HalfProblem& p) {
  DeviceBuffer<std::uint16_t> o(p.q.size());
  DeviceBuffer<float> lse(p.s.lse_elements());
  o.poison(nullptr);
  lse.poison(nullptr);
  EXPECT_EQ(attn::flash_hopper_forward(p.s, p.precision, p.q_dev.data(), p.k_dev.data(), p.v_dev.data(), o.data(),
                                       lse.data(), nullptr),
            cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return {floats_of(download16(o), p.dt), download(lse)};
}
void expect_hopper_forward(HalfProblem& p) {
  Forward want{std::vector<float>(p.q.size()), std::vector<float>(p.s.lse_elements())};
  attn::forward_cpu(p.s, p.q.data(), p.k.data(), p.v.data(), want.o.data(), want.lse.data());
  want.o = rounded(want.o, p.dt);
  const harness::Tolerance t = plugins::attention::tolerance(p.s, false, p.dt);
  const Forward got = hopper_forward(p);
  expect_match({{"O", got.o}, {"LSE", got.lse}}, {{"O", want.o}, {"LSE", want.lse}}, t.abs, t.rel,
               "flash_hopper fwd " + p.name());
}
#define SKIP_UNLESS_HOPPER()                                                               \
  if (!have_device()) GTEST_SKIP() << "no CUDA device";                                  \
  if (const char* why = attn::flash_hopper_unsupported(shape(1, 1, 1, 16, 128, false))) \
  GTEST_SKIP() << why

TEST(AttentionGpuHopper, ForwardMatchesCpuAtOddSizes) {
  SKIP_UNLESS_HOPPER();
  std::uint64_t seed = 1500;
  for (int n : {1, 3, 17, 129, 999})
    for (int d : {64, 128, 256})
      for (bool causal : {false, true})
        for (int hkv : {4, 1}) {  // MHA and MQA
          HalfProblem p(shape(1, 4, hkv, n, d, causal), harness::DType::bf16, ++seed);
          expect_hopper_forward(p);
        }
  for (int d : {64, 128, 256})
    for (bool causal : {false, true}) {
      HalfProblem p(shape(2, 8, 2, 333, d, causal, 0.3f), harness::DType::f16, ++seed);  // GQA 4:1, B = 2
      expect_hopper_forward(p);
    }
}

// Several key tiles and both ring stages at every head size, and GQA groups of all heads.
TEST(AttentionGpuHopper, ForwardMatchesCpuAtLongerRows) {
  SKIP_UNLESS_HOPPER();
  std::uint64_t seed = 1600;
  for (int n : {640, 1031})
    for (int d : {64, 128, 256})
      for (bool causal : {false, true}) {
        HalfProblem p(shape(1, 4, 2, n, d, causal), harness::DType::bf16, ++seed);
        expect_hopper_forward(p);
      }
}

// N = 4096 against the FP32 flash kernels on the same rounded inputs.
TEST(AttentionGpuHopper, MatchesFp32FlashAt4096) {
  SKIP_UNLESS_HOPPER();
  for (bool causal : {false, true})
    for (int d : {64, 128}) {
      HalfProblem p(shape(1, 4, 2, 4096, d, causal), harness::DType::bf16, 1700 + d);
      const Forward got = hopper_forward(p);
      const Forward want = fp32_flash_on_rounded_inputs(p);
      const harness::Tolerance t = plugins::attention::tolerance(p.s, false, p.dt);
      expect_match({{"O", got.o}, {"LSE", got.lse}}, {{"O", want.o}, {"LSE", want.lse}}, t.abs, t.rel,
                   "flash_hopper vs fp32 flash " + p.name());
    }
}

// Rows `rows` of the Hopper forward's O and LSE against the double reference of those rows.
void expect_hopper_rows(const HalfProblem& p, const Forward& got, const std::vector<std::int64_t>& rows,
                        const std::string& what) {
  const int d = p.s.head_dim;
  std::vector<float> o(rows.size() * d), lse(rows.size());
  attn::forward_cpu_rows(p.s, p.q.data(), p.k.data(), p.v.data(), rows.data(), rows.size(), o.data(), lse.data());
  std::vector<float> got_o, got_lse;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    got_o.insert(got_o.end(), got.o.begin() + rows[i] * d, got.o.begin() + (rows[i] + 1) * d);
    got_lse.push_back(got.lse[static_cast<std::size_t>(rows[i])]);
  }
  const harness::Tolerance t = plugins::attention::tolerance(p.s, false, p.dt);
  expect_match({{"O", got_o}, {"LSE", got_lse}}, {{"O", rounded(o, p.dt)}, {"LSE", lse}}, t.abs, t.rel,
               what + " " + p.name());
}

// Every `stride`-th row of all (b, h), and the last one.
std::vector<std::int64_t> every_nth_row(std::int64_t total, std::int64_t stride) {
  std::vector<std::int64_t> rows;
  for (std::int64_t r = 0; r < total; r += stride) rows.push_back(r);
  if (rows.back() != total - 1) rows.push_back(total - 1);
  return rows;
}

// B*H*N^2 beyond 2^31 (N = 65537, one head): 64 sampled rows against the double reference.
TEST(AttentionGpuHopper, ScoresBeyondTwoToThe31) {
  SKIP_UNLESS_HOPPER();
  HalfProblem p(shape(1, 1, 1, 65537, 64, false), harness::DType::bf16, 1800);
  expect_hopper_rows(p, hopper_forward(p), every_nth_row(65537, 1031), "flash_hopper sampled rows");
}

// More tiles than SMs (the persistent grid: each CTA runs several tiles, the K/V ring and
// the Q and O buffers carry over from one tile to the next): B = 4, 16 heads, GQA 4:1,
// N = 700; every 13th row of every (b, h) against the double reference.
TEST(AttentionGpuHopper, PersistentTilesBeyondOneWave) {
  SKIP_UNLESS_HOPPER();
  std::uint64_t seed = 1900;
  for (int d : {64, 128, 256})
    for (bool causal : {false, true}) {
      HalfProblem p(shape(4, 16, 4, 700, d, causal), harness::DType::bf16, ++seed);
      expect_hopper_rows(p, hopper_forward(p), every_nth_row(std::int64_t{4} * 16 * 700, 13),
                         "flash_hopper persistent");
    }
}

// 192-key tiles (non-causal d = 64 from 2048 keys, d64_key_tile) at lengths that end
// in a partial tile (4097 = 21 x 192 + 65, 6001 = 31 x 192 + 49) and at exactly 4096, MHA
// and GQA 4:2, bf16 and f16: every 7th row against the double reference.
TEST(AttentionGpuHopper, WideKeyTilesAtOddLengths) {
  SKIP_UNLESS_HOPPER();
  std::uint64_t seed = 2000;
  for (int n : {4096, 4097, 6001})
    for (int hkv : {4, 2}) {
      const harness::DType dt = hkv == 4 ? harness::DType::bf16 : harness::DType::f16;
      HalfProblem p(shape(1, 4, hkv, n, 64, false), dt, ++seed);
      expect_hopper_rows(p, hopper_forward(p), every_nth_row(std::int64_t{4} * n, 7), "flash_hopper 192-key tiles");
    }
  // Causal takes 192 keys from N = 8192: a full last tile, and one key past it.
  for (int n : {8192, 8193}) {
    HalfProblem p(shape(1, 2, n == 8192 ? 2 : 1, n, 64, true), harness::DType::bf16, ++seed);
    expect_hopper_rows(p, hopper_forward(p), every_nth_row(std::int64_t{2} * n, 11), "flash_hopper causal 192-key tiles");
  }
}

// Lazy rescaling is the default at d = 128 and 256; HARNESS_FWD_LAZY_RESCALE=1 / 0 forces it at
// every head size / at none (ctest runs the forward tests above with each:
// AttentionGpuHopperLazyRescale1 / 0 in tests/CMakeLists.txt).
TEST(AttentionGpuHopper, LazyRescaleFollowsTheEnvironment) {
  const char* e = std::getenv("HARNESS_FWD_LAZY_RESCALE");
  const std::string forced = e != nullptr ? e : "";
  for (int d : {64, 128, 256}) {
    const bool expected = forced.empty() ? d >= 128 : forced == "1";
    EXPECT_EQ(attn::flash_hopper_lazy_rescale(d), expected) << "head_dim " << d << ", HARNESS_FWD_LAZY_RESCALE='"
                                                            << forced << "'";
  }
}

TEST(AttentionGpuHopper, RefusesWhatItCannotRun) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  for (int d : {32, 96, 160}) {
    const char* why = attn::flash_hopper_unsupported(shape(1, 1, 1, 16, d, false));
    ASSERT_NE(why, nullptr);
    EXPECT_NE(std::string(why).find("head_dim"), std::string::npos) << why;
    EXPECT_THROW(attn::flash_hopper_forward(shape(1, 1, 1, 16, d, false), attn::Precision::bf16, nullptr, nullptr,
                                            nullptr, nullptr, nullptr, nullptr),
                 std::invalid_argument);
  }
  const char* neg = attn::flash_hopper_unsupported(shape(1, 1, 1, 16, 64, false, -0.5f));
  ASSERT_NE(neg, nullptr);
  EXPECT_NE(std::string(neg).find("positive"), std::string::npos) << neg;
  Shape bad = shape(1, 4, 3, 16, 64, false);  // kv_heads not dividing heads: input error first
  EXPECT_THROW(attn::flash_hopper_forward(bad, attn::Precision::bf16, nullptr, nullptr, nullptr, nullptr, nullptr,
                                          nullptr),
               std::invalid_argument);
}

// One Hopper backward on poisoned outputs and workspace; dQ, dK, dV as 16-bit patterns.
struct HalfGradients {
  std::vector<std::uint16_t> dq, dk, dv;
};
HalfGradients hopper_backward_bits(HalfProblem& p, DeviceBuffer<std::uint16_t>& o, DeviceBuffer<float>& lse,
                                   bool deterministic) {
  DeviceBuffer<std::uint16_t> dq(p.q.size()), dk(p.k.size()), dv(p.v.size());
  dq.poison(nullptr);
  dk.poison(nullptr);
  dv.poison(nullptr);
  DeviceBuffer<float> ws(attn::flash_hopper_backward_workspace_bytes(p.s, deterministic) / sizeof(float));
  ws.poison(nullptr);
  EXPECT_EQ(attn::flash_hopper_backward(p.s, p.precision, p.q_dev.data(), p.k_dev.data(), p.v_dev.data(), o.data(),
                                        lse.data(), p.do_dev.data(), dq.data(), dk.data(), dv.data(), ws.data(),
                                        nullptr, deterministic),
            cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return {download16(dq), download16(dk), download16(dv)};
}

// Hopper gradients against the double reference (recomputed from p's inputs).
void expect_hopper_matches_cpu(HalfProblem& p, const HalfGradients& got, const std::string& what) {
  Backward want{std::vector<float>(p.q.size()), std::vector<float>(p.k.size()), std::vector<float>(p.v.size())};
  attn::backward_cpu(p.s, p.q.data(), p.k.data(), p.v.data(), p.d_o.data(), want.dq.data(), want.dk.data(),
                     want.dv.data());
  const harness::Tolerance t = plugins::attention::tolerance(p.s, true, p.dt);
  expect_match({{"dQ", floats_of(got.dq, p.dt)}, {"dK", floats_of(got.dk, p.dt)}, {"dV", floats_of(got.dv, p.dt)}},
               {{"dQ", rounded(want.dq, p.dt)}, {"dK", rounded(want.dk, p.dt)}, {"dV", rounded(want.dv, p.dt)}},
               t.abs, t.rel, what);
}

// Deterministic mode: two runs on the same inputs give the same bits (memcmp) for dQ, dK and
// dV; `reference`: and they match the double reference.
void expect_hopper_backward_deterministic(HalfProblem& p, bool reference) {
  DeviceBuffer<std::uint16_t> o;
  DeviceBuffer<float> lse;
  tc_forward(p, o, lse);
  const HalfGradients a = hopper_backward_bits(p, o, lse, true);
  const HalfGradients b = hopper_backward_bits(p, o, lse, true);
  auto same = [](const std::vector<std::uint16_t>& x, const std::vector<std::uint16_t>& y) {
    return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(std::uint16_t)) == 0;
  };
  EXPECT_TRUE(same(a.dq, b.dq)) << "dQ differs between two deterministic runs, " << p.name();
  EXPECT_TRUE(same(a.dk, b.dk)) << "dK differs between two deterministic runs, " << p.name();
  EXPECT_TRUE(same(a.dv, b.dv)) << "dV differs between two deterministic runs, " << p.name();
  const HalfGradients c = hopper_backward_bits(p, o, lse, false);  // informative: sums in arrival order
  std::printf("[ deterministic ] %s: default mode %s the deterministic bits (dQ)\n", p.name().c_str(),
              same(a.dq, c.dq) ? "matched" : "differed from");
  if (reference) expect_hopper_matches_cpu(p, a, "flash_hopper bwd deterministic " + p.name());
}

// The Hopper backward against the double reference (O and LSE from the FA2 forward).
void expect_hopper_backward(HalfProblem& p) {
  DeviceBuffer<std::uint16_t> o;
  DeviceBuffer<float> lse;
  tc_forward(p, o, lse);
  expect_hopper_matches_cpu(p, hopper_backward_bits(p, o, lse, false), "flash_hopper bwd " + p.name());
}

TEST(AttentionGpuHopper, BackwardMatchesCpuAtOddSizes) {
  SKIP_UNLESS_HOPPER();
  std::uint64_t seed = 1900;
  for (int n : {1, 3, 17, 129, 999})
    for (int d : {64, 128})
      for (bool causal : {false, true})
        for (int hkv : {4, 2, 1}) {  // MHA, GQA 2:1, MQA (a group of all heads)
          HalfProblem p(shape(1, 4, hkv, n, d, causal), harness::DType::bf16, ++seed);
          expect_hopper_backward(p);
        }
  for (int d : {64, 128})
    for (bool causal : {false, true}) {
      HalfProblem p(shape(2, 8, 2, 200, d, causal, 0.3f), harness::DType::f16, ++seed);  // B = 2, f16, scale
      expect_hopper_backward(p);
    }
}

// Several key blocks and query tiles through both ring stages (N = 640, 1031).
TEST(AttentionGpuHopper, BackwardMatchesCpuAtLongerRows) {
  SKIP_UNLESS_HOPPER();
  std::uint64_t seed = 2000;
  for (int n : {640, 1031})
    for (int d : {64, 128})
      for (bool causal : {false, true}) {
        HalfProblem p(shape(1, 2, 1, n, d, causal), harness::DType::bf16, ++seed);
        expect_hopper_backward(p);
      }
}

// Deterministic mode: bitwise equal twice (MHA, GQA 4:1, MQA; causal and not; both head
// sizes), against the reference at N = 397 (ragged tiles), bits alone at N = 2048 with 8 heads
// (many key blocks per tile racing for the turn).
TEST(AttentionGpuHopper, BackwardDeterministic) {
  SKIP_UNLESS_HOPPER();
  std::uint64_t seed = 2100;
  for (int d : {64, 128})
    for (bool causal : {false, true})
      for (int hkv : {4, 1}) {
        HalfProblem p(shape(1, 4, hkv, 397, d, causal), harness::DType::bf16, ++seed);
        expect_hopper_backward_deterministic(p, true);
      }
  for (int d : {64, 128})
    for (bool causal : {false, true})
      for (int hkv : {8, 2}) {
        HalfProblem p(shape(2, 8, hkv, 2048, d, causal), harness::DType::bf16, ++seed);
        expect_hopper_backward_deterministic(p, false);
      }
}

}  // namespace
