// The stream kernels on a real device against the CPU loop (label gpu).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "harness/check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/random.hpp"
#include "stream/stream.hpp"
#include "test_support.hpp"

namespace {

using harness::test::have_device;

TEST(StreamGpu, EveryOpMatchesTheHostBitForBitAtOddSizes) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  using kernels::stream::Op;
  for (std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{4097}, std::size_t{1} << 20}) {
    std::vector<float> x(n), y(n), want(n), got(n);
    harness::fill_uniform(x, 7, 1, -1, 1);
    harness::fill_uniform(y, 7, 2, -1, 1);
    harness::DeviceBuffer<float> dx(n), dy(n), dout(n);
    dx.upload(x);
    dy.upload(y);
    for (Op op : {Op::copy, Op::scale, Op::add, Op::triad}) {
      kernels::stream::run_cpu(op, n, 3.0f, x.data(), y.data(), want.data(), 2);
      dout.poison(nullptr);
      ASSERT_EQ(kernels::stream::launch(op, n, 3.0f, dx.data(), dy.data(), dout.data(), nullptr), cudaSuccess);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      dout.download(got);
      const auto r = harness::compare_outputs({{"out", got}}, {{"out", want}}, {0, 0});
      EXPECT_TRUE(r.passed) << "n=" << n << " op=" << static_cast<int>(op) << ": " << r.summary();
    }
  }
}

}  // namespace
