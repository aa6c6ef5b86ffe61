// Collectives timed as nccl-tests times them, without a GPU: K per size (and the same
// table reports/torch_allreduce.py must give, tests/reports_scripts_test.py), the ranks'
// batches combined (mean and slowest per batch, medians over batches), the bandwidths with
// nccl-tests' bus factors at 2, 4 and 8 ranks, and the barrier every nccl problem registers.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/collective.hpp"
#include "measure/collective.hpp"
#include "nccl/collectives.hpp"

namespace harness {
namespace {

namespace kn = kernels::nccl;

TEST(CollectiveOps, KFromTheSizeSoThatABatchLastsAboutTwoMilliseconds) {
  // The table reports_scripts_test.py checks reports/torch_allreduce.py against.
  const std::vector<std::pair<double, std::size_t>> table = {
      {8, 200},      {64, 200},    {512, 200},      {4096, 200},      {32768, 194},     {262144, 159},
      {1048576, 98}, {2097152, 65}, {16777216, 12}, {134217728, 5}, {1073741824, 5}};
  for (const auto& [bytes, k] : table) EXPECT_EQ(collective_ops_per_sample(bytes), k) << bytes << " B";
  // Between the bounds a batch is at least 2 ms at the nominal cost of an op.
  for (double bytes = 8; bytes <= 1e10; bytes *= 2) {
    const std::size_t k = collective_ops_per_sample(bytes);
    EXPECT_GE(k, kCollectiveMinOps);
    EXPECT_LE(k, kCollectiveMaxOps);
    const double cost = kCollectiveOpLatency + bytes / kCollectiveBandwidth;
    if (k > kCollectiveMinOps && k < kCollectiveMaxOps) {
      EXPECT_GE(static_cast<double>(k) * cost, kCollectiveBatchSeconds * (1 - 1e-12)) << bytes;
      EXPECT_LT(static_cast<double>(k - 1) * cost, kCollectiveBatchSeconds) << bytes;
    }
    EXPECT_LE(k, collective_ops_per_sample(bytes / 2)) << "K never grows with the size";
  }
  EXPECT_EQ(collective_ops_per_sample(0), kCollectiveMaxOps);
  EXPECT_EQ(collective_ops_per_sample(-1), kCollectiveMaxOps);
  EXPECT_EQ(collective_ops_per_sample(std::numeric_limits<double>::quiet_NaN()), kCollectiveMaxOps);
  EXPECT_EQ(collective_ops_per_sample(std::numeric_limits<double>::infinity()), kCollectiveMaxOps);
}

TEST(CombineRanks, MeanAndSlowestPerBatchThenMediansOverBatches) {
  // Batch i of every rank started after the same barrier.
  const auto c = combine_ranks({{1e-3, 3e-3, 2e-3, 2e-3}, {3e-3, 1e-3, 2e-3, 4e-3}});
  EXPECT_EQ(c.mean, (std::vector<double>{2e-3, 2e-3, 2e-3, 3e-3}));
  EXPECT_EQ(c.slowest, (std::vector<double>{3e-3, 3e-3, 2e-3, 4e-3}));
  EXPECT_DOUBLE_EQ(c.time_s, 2e-3);      // median of the means
  EXPECT_DOUBLE_EQ(c.time_max_s, 3e-3);  // median of the slowest
  ASSERT_EQ(c.rank_median.size(), 2u);
  EXPECT_DOUBLE_EQ(c.rank_median[0], 2e-3);
  EXPECT_DOUBLE_EQ(c.rank_median[1], 2.5e-3);
}

TEST(CombineRanks, ExtraBatchesOfOneRankAreLeftOutAndNothingGivesZeros) {
  const auto c = combine_ranks({{1.0, 2.0, 9.0}, {3.0, 4.0}, {2.0, 3.0}});
  EXPECT_EQ(c.mean, (std::vector<double>{2.0, 3.0}));
  EXPECT_EQ(c.slowest, (std::vector<double>{3.0, 4.0}));
  EXPECT_DOUBLE_EQ(c.rank_median[0], 2.0);  // its own batches, all of them
  const auto none = combine_ranks({});
  EXPECT_TRUE(none.mean.empty());
  EXPECT_EQ(none.time_s, 0);
  const auto empty = combine_ranks({{}, {1.0}});
  EXPECT_TRUE(empty.mean.empty());
  EXPECT_EQ(empty.time_max_s, 0);
}

TEST(CollectiveBandwidth, NcclTestsFactorsAtTwoFourAndEightRanks) {
  // 1 GiB in 4 ms: algbw 268.4 GB/s whatever the collective; busbw = algbw x factor.
  const double bytes = 1073741824, t = 4e-3, alg = bytes / t / 1e9;
  struct Want {
    kn::Collective c;
    int n;
    double factor;
  };
  const Want wants[] = {{kn::Collective::all_reduce, 2, 1.0},      {kn::Collective::all_reduce, 4, 1.5},
                        {kn::Collective::all_reduce, 8, 1.75},     {kn::Collective::all_gather, 4, 0.75},
                        {kn::Collective::reduce_scatter, 4, 0.75}, {kn::Collective::alltoall, 8, 0.875},
                        {kn::Collective::broadcast, 4, 1.0},       {kn::Collective::sendrecv, 4, 1.0}};
  for (const auto& w : wants) {
    const Bandwidth b = collective_bandwidth(bytes, t, kn::bus_factor(w.c, w.n));
    EXPECT_DOUBLE_EQ(b.algbw_gbps, alg) << kn::to_string(w.c);
    EXPECT_DOUBLE_EQ(b.busbw_gbps, alg * w.factor) << kn::to_string(w.c) << " n=" << w.n;
  }
  EXPECT_EQ(collective_bandwidth(bytes, 0, 1).busbw_gbps, 0);
  EXPECT_EQ(collective_bandwidth(0, t, 1).algbw_gbps, 0);
  EXPECT_EQ(collective_bandwidth(bytes, std::numeric_limits<double>::quiet_NaN(), 1).algbw_gbps, 0);
}

TEST(RankBarrier, EveryNcclProblemRegistersOneAndOthersHaveNone) {
  for (kn::Collective c : kn::kAllCollectives)
    EXPECT_NE(rank_barrier(std::string("nccl_") + kn::to_string(c)), nullptr) << kn::to_string(c);
  EXPECT_EQ(rank_barrier("gemm"), nullptr);
  int calls = 0;
  set_rank_barrier("collective_timing_test_problem", [&](cudaStream_t) { ++calls; });
  const RankBarrier* b = rank_barrier("collective_timing_test_problem");
  ASSERT_NE(b, nullptr);
  (*b)(nullptr);
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace harness
