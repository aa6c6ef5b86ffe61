// Data-parallel training, host parts (label cpu): the gradient buckets' assignment, the
// world_size checks and their messages, and the train_transformer problem's world_size
// parameter (a collective case only above 1; a job of another size skips with the reason).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness/registry.hpp"
#include "models/data_parallel.hpp"

namespace {

using models::assign_buckets;
using models::DType;

// Every parameter lands in exactly one slot, slots do not overlap and fit their bucket.
void expect_partition(const std::vector<models::Bucket>& buckets, const std::vector<std::int64_t>& numels) {
  std::vector<int> seen(numels.size(), 0);
  for (const auto& b : buckets) {
    std::size_t end = 0;
    for (const auto& s : b.slots) {
      ASSERT_LT(s.param, numels.size());
      ++seen[s.param];
      EXPECT_EQ(s.numel, static_cast<std::size_t>(numels[s.param]));
      EXPECT_GE(s.offset, end) << "slots overlap";
      end = s.offset + s.numel;
    }
    EXPECT_EQ(b.numel, end);
  }
  for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], 1) << "parameter " << i;
}

TEST(DataParallelBuckets, ReverseRegistrationOrderUnderTheCap) {
  // float32: 100 elements = 400 bytes; cap 1000 bytes holds two of them.
  const std::vector<std::int64_t> numels = {100, 100, 100, 100, 100};
  const auto b = assign_buckets(numels, std::vector<DType>(5, DType::f32), 1000, 1);
  expect_partition(b, numels);
  ASSERT_EQ(b.size(), 3u);
  ASSERT_EQ(b[0].slots.size(), 2u);
  EXPECT_EQ(b[0].slots[0].param, 4u);  // the last registered first: the backward finishes it first
  EXPECT_EQ(b[0].slots[1].param, 3u);
  EXPECT_EQ(b[0].slots[1].offset, 100u);
  EXPECT_EQ(b[1].slots[0].param, 2u);
  EXPECT_EQ(b[2].slots.size(), 1u);
  EXPECT_EQ(b[2].slots[0].param, 0u);
}

TEST(DataParallelBuckets, AlignedOffsetsAndAnOversizedParameterAlone) {
  const std::vector<std::int64_t> numels = {3, 1000, 5, 7};
  const auto b = assign_buckets(numels, std::vector<DType>(4, DType::f32), 100, 64);
  expect_partition(b, numels);
  ASSERT_EQ(b.size(), 3u);
  // {7, 5} (48 bytes), {1000} alone (4000 bytes > cap), {3}.
  EXPECT_EQ(b[0].slots[0].param, 3u);
  EXPECT_EQ(b[0].slots[1].param, 2u);
  EXPECT_EQ(b[0].slots[1].offset, 64u);  // 7 rounded up to the alignment
  EXPECT_EQ(b[0].numel, 69u);
  ASSERT_EQ(b[1].slots.size(), 1u);
  EXPECT_EQ(b[1].slots[0].param, 1u);
  EXPECT_EQ(b[2].slots[0].param, 0u);
  for (const auto& bucket : b)
    for (const auto& s : bucket.slots) EXPECT_EQ(s.offset % 64, 0u);
}

TEST(DataParallelBuckets, ADtypeChangeStartsABucketAndBadInputThrows) {
  const std::vector<std::int64_t> numels = {10, 10, 10};
  const auto b = assign_buckets(numels, {DType::f32, DType::f64, DType::f64}, 1 << 20, 1);
  expect_partition(b, numels);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].dtype, DType::f64);
  EXPECT_EQ(b[0].slots.size(), 2u);
  EXPECT_EQ(b[1].dtype, DType::f32);
  EXPECT_TRUE(assign_buckets({}, {}, 100).empty());
  EXPECT_THROW((void)assign_buckets({1, 2}, {DType::f32}, 100), std::invalid_argument);
  EXPECT_THROW((void)assign_buckets({-1}, {DType::f32}, 100), std::invalid_argument);
}

TEST(DataParallelBuckets, TheSeedTransformerIn25MiBBuckets) {
  // 55M float32 parameters (~210 MiB) in ~25 MiB buckets: 9 or so, none above the cap
  // unless one parameter alone is (the 6880 x 512 embeddings are 13.4 MiB: none is).
  std::vector<std::int64_t> numels;
  for (int layer = 0; layer < 60; ++layer) numels.insert(numels.end(), {512 * 512, 512, 512 * 2048, 2048});
  numels.push_back(6880 * 512);
  const auto b = assign_buckets(numels, std::vector<DType>(numels.size(), DType::f32), 25u << 20);
  expect_partition(b, numels);
  for (const auto& bucket : b) EXPECT_LE(bucket.numel * 4, (25u << 20) + 64 * 4 * bucket.slots.size());
  EXPECT_GE(b.size(), 2u);
}

TEST(DataParallelWorld, AJobOfAnotherSizeIsAClearMessage) {
  EXPECT_FALSE(models::world_size_mismatch(2, 2, 1, "harness launcher").has_value());
  EXPECT_FALSE(models::world_size_mismatch(1, 1, 0, "single process").has_value());
  const auto why = models::world_size_mismatch(2, 1, 0, "single process");
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("world_size 2 needs a job of 2 ranks (one per GPU); this process is rank 0 of a job of 1 "
                      "(single process)"),
            std::string::npos)
      << *why;
  EXPECT_NE(why->find("harness run --devices all"), std::string::npos) << *why;
  const auto four = models::world_size_mismatch(4, 2, 1, "harness launcher");
  ASSERT_TRUE(four.has_value());
  EXPECT_NE(four->find("rank 1 of a job of 2 (harness launcher)"), std::string::npos) << *four;
  EXPECT_TRUE(models::world_size_mismatch(0, 1, 0, "x").has_value());
}

TEST(DataParallelWorld, ThisProcessAloneCannotRunTwoRanks) {
  // ctest starts this test without rank variables: a job of 1 (or no NCCL in the build).
  const auto why = models::data_parallel_unavailable(2);
  ASSERT_TRUE(why.has_value());
  const bool mismatch = why->find("world_size 2 needs a job of 2 ranks") != std::string::npos;
  const bool no_nccl = why->find("data-parallel training needs NCCL") != std::string::npos;
  EXPECT_TRUE(mismatch || no_nccl) << *why;
}

TEST(DataParallelProblem, WorldSizeMakesACollectiveCaseThatSkipsAlone) {
  const auto& reg = harness::Registry::instance();
  const auto* p = reg.find_problem("train_transformer");
  ASSERT_NE(p, nullptr);
  auto params = harness::with_defaults(p->params(), {});
  EXPECT_EQ(params.get_int("world_size"), 1);
  EXPECT_EQ(params.get_int("bucket_mb"), 25);
  EXPECT_FALSE(p->collective());
  EXPECT_FALSE(p->collective_at(params));
  for (const char* name : {"ours", "cublas_flash", "naive_attention"}) {
    const auto* v = reg.find_variant("train_transformer", name);
    ASSERT_NE(v, nullptr);
    if (v->constraint) {
      EXPECT_FALSE(v->constraint(params).has_value()) << name;
    }
  }
  params.set("world_size", std::int64_t{2});
  EXPECT_TRUE(p->collective_at(params));
  for (const char* name : {"ours", "cublas_flash", "naive_attention"}) {
    const auto* v = reg.find_variant("train_transformer", name);
    ASSERT_TRUE(v->constraint) << name;
    const auto why = v->constraint(params);
    ASSERT_TRUE(why.has_value()) << name;
    EXPECT_TRUE(why->find("world_size 2 needs a job of 2 ranks") != std::string::npos ||
                why->find("needs NCCL") != std::string::npos)
        << *why;
  }
}

// grad_reduce: f32 by default; bf16 is refused at world_size 1 (there is no exchange) with
// the reason, and accepted above it; DataParallel refuses any other element type.
TEST(DataParallelProblem, TheBf16GradientExchangeNeedsSeveralRanks) {
  const auto* p = harness::Registry::instance().find_problem("train_transformer");
  ASSERT_NE(p, nullptr);
  auto params = harness::with_defaults(p->params(), {});
  EXPECT_EQ(params.get_string("grad_reduce"), "f32");
  EXPECT_FALSE(p->reject(params).has_value());
  params.set("grad_reduce", std::string("bf16"));
  EXPECT_EQ(p->reject(params).value_or(""),
            "grad_reduce: bf16 needs world_size > 1 (it is the data-parallel all-reduce's type)");
  params.set("world_size", std::int64_t{2});
  EXPECT_FALSE(p->reject(params).has_value());
  EXPECT_THROW(models::DataParallel({}, 2, nullptr, 1 << 20, models::DType::i32), std::invalid_argument);
}

}  // namespace
