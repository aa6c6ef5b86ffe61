// Host-only parts of the engine (label cpu): allocator size classes, the learning-rate
// schedule, and the train_transformer problem's registration and parameters.
#include <gtest/gtest.h>

#include <cmath>

#include "harness/registry.hpp"
#include "models/allocator.hpp"
#include "models/optim.hpp"

namespace {

TEST(ModelsCpu, SizeClasses) {
  using models::CachingAllocator;
  EXPECT_EQ(CachingAllocator::size_class(1), 512u);
  EXPECT_EQ(CachingAllocator::size_class(512), 512u);
  EXPECT_EQ(CachingAllocator::size_class(513), 1024u);
  EXPECT_EQ(CachingAllocator::size_class(1 << 20), 1u << 20);
  EXPECT_EQ(CachingAllocator::size_class((1 << 20) + 1), 2u << 20);
  EXPECT_EQ(CachingAllocator::size_class(5'000'000), 5u << 20);
}

TEST(ModelsCpu, WarmupCosineSchedule) {
  models::WarmupCosine s{1.0, 10, 110, 0.1};
  EXPECT_DOUBLE_EQ(s.at(0), 0.1);
  EXPECT_DOUBLE_EQ(s.at(9), 1.0);
  EXPECT_NEAR(s.at(10), 1.0, 1e-12);
  EXPECT_NEAR(s.at(60), 0.55, 1e-12);  // half way: (1 + 0.1) / 2
  EXPECT_NEAR(s.at(110), 0.1, 1e-12);
  EXPECT_NEAR(s.at(1000), 0.1, 1e-12);
}

TEST(ModelsCpu, TrainTransformerIsRegistered) {
  const auto& reg = harness::Registry::instance();
  const auto* p = reg.find_problem("train_transformer");
  ASSERT_NE(p, nullptr);
  for (const char* v : {"ours", "cublas_flash", "naive_attention"})
    EXPECT_NE(reg.find_variant("train_transformer", v), nullptr) << v;
  const auto params = harness::with_defaults(p->params(), {});
  EXPECT_EQ(params.get_int("batch"), 100);
  EXPECT_EQ(params.get_int("seq_len"), 13);
  EXPECT_EQ(params.get_int("vocab"), 6880);
  EXPECT_EQ(p->reference_variant(params), "cublas_flash");
  const auto w = p->work(params);
  EXPECT_GT(w.flops, 3e11);  // ~6 * tokens * parameters
  EXPECT_LT(w.flops, 6e11);
  harness::Params odd = params;
  odd.set("heads", std::int64_t{7});
  EXPECT_TRUE(p->reject(odd).has_value());
}

}  // namespace
