// The nccl family without a GPU: nccl-tests' bus factors, element counts, the expected
// outputs (checked against a direct simulation of each collective), the rank variables of
// the launcher / Open MPI / Slurm, and what a single process is told.
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/registry.hpp"
#include "nccl/collectives.hpp"
#include "test_support.hpp"

namespace kernels::nccl {
namespace {

TEST(NcclBusFactor, AsNcclTestsDefinesThem) {
  EXPECT_DOUBLE_EQ(bus_factor(Collective::all_reduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::all_reduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::all_gather, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::reduce_scatter, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::alltoall, 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::broadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::sendrecv, 2), 1.0);
}

TEST(NcclCounts, TheLargerBufferIsTheSizeAndSplitsRoundDown) {
  const auto ag = counts(Collective::all_gather, 1000, 4, 3);  // 250 elements -> 249 = 3 x 83
  EXPECT_EQ(ag.count, 249u);
  EXPECT_EQ(ag.send, 83u);
  EXPECT_EQ(ag.recv, 249u);
  const auto rs = counts(Collective::reduce_scatter, 64, 2, 2);
  EXPECT_EQ(rs.send, 32u);
  EXPECT_EQ(rs.recv, 16u);
  const auto ar = counts(Collective::all_reduce, 8, 4, 8);
  EXPECT_EQ(ar.send, 2u);
  EXPECT_EQ(ar.recv, 2u);
  EXPECT_EQ(counts(Collective::alltoall, 8, 4, 4).chunk, 0u);  // fewer elements than ranks
}

// Every rank's input, then each collective done the slow obvious way.
std::vector<std::vector<float>> simulate(Collective c, const Counts& k, int n) {
  std::vector<std::vector<float>> in(n), out(n);
  for (int r = 0; r < n; ++r)
    for (std::size_t i = 0; i < k.send; ++i) in[r].push_back(fill_value(r, i));
  for (int r = 0; r < n; ++r) {
    out[r].assign(k.recv, 0.f);
    for (std::size_t j = 0; j < k.recv; ++j) {
      switch (c) {
        case Collective::all_reduce: for (int p = 0; p < n; ++p) out[r][j] += in[p][j]; break;
        case Collective::broadcast: out[r][j] = in[0][j]; break;
        case Collective::sendrecv: out[r][j] = in[(r + n - 1) % n][j]; break;
        case Collective::all_gather: out[r][j] = in[j / k.chunk][j % k.chunk]; break;
        case Collective::reduce_scatter: for (int p = 0; p < n; ++p) out[r][j] += in[p][r * k.chunk + j]; break;
        case Collective::alltoall: out[r][j] = in[j / k.chunk][r * k.chunk + j % k.chunk]; break;
      }
    }
  }
  return out;
}

TEST(NcclExpected, MatchesASimulationOfEveryCollective) {
  for (Collective c : kAllCollectives)
    for (int n : {2, 3, 8}) {
      const Counts k = counts(c, 4 * 48, 4, n);
      const auto sim = simulate(c, k, n);
      for (int r = 0; r < n; ++r) EXPECT_EQ(expected_output(c, k, r, n), sim[r]) << to_string(c) << " n=" << n << " rank " << r;
    }
}

TEST(NcclFill, SumsOverManyRanksStayExactInBf16) {
  // |fill| <= 3: a sum over 64 ranks is at most 192 < 256, an integer bf16 holds exactly.
  for (std::size_t i = 0; i < 100; ++i)
    for (int r = 0; r < 64; ++r) EXPECT_LE(std::abs(fill_value(r, i)), 3.f);
}

RankEnv parse(const std::map<std::string, std::string>& vars) {
  return parse_rank_env([&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

TEST(NcclRankEnv, LauncherOpenMpiSlurmAndErrors) {
  EXPECT_EQ(parse({}).size, 1);
  EXPECT_EQ(parse({}).source, "single process");
  auto l = parse({{"HARNESS_RANK", "1"}, {"HARNESS_WORLD_SIZE", "2"}, {"HARNESS_NCCL_ID_FILE", "/tmp/id"}});
  EXPECT_EQ(l.rank, 1);
  EXPECT_EQ(l.size, 2);
  EXPECT_EQ(l.source, "harness launcher");
  EXPECT_EQ(l.id_file, "/tmp/id");
  EXPECT_TRUE(l.error.empty());
  auto o = parse({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                  {"HARNESS_NCCL_ID_DIR", "/shared"}});
  EXPECT_EQ(o.source, "Open MPI");
  EXPECT_EQ(o.rank, 3);
  EXPECT_EQ(o.local_rank, 1);
  EXPECT_EQ(o.id_file, "/shared/nccl-id-default");
  auto s = parse({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "1"}, {"SLURM_JOB_ID", "77"},
                  {"SLURM_STEP_ID", "0"}, {"HARNESS_NCCL_ID_DIR", "/shared"}});
  EXPECT_EQ(s.source, "Slurm");
  EXPECT_EQ(s.size, 8);
  EXPECT_EQ(s.id_file, "/shared/nccl-id-77.0");
  // Open MPI wins over Slurm (mpirun inside an allocation sets both).
  EXPECT_EQ(parse({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "1"}, {"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "4"}}).source,
            "Open MPI");
  auto no_dir = parse({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}});
  EXPECT_NE(no_dir.error.find("set HARNESS_NCCL_ID_DIR"), std::string::npos) << no_dir.error;
  auto bad = parse({{"SLURM_PROCID", "4"}, {"SLURM_NTASKS", "4"}});
  EXPECT_NE(bad.error.find("do not name a rank of a job"), std::string::npos) << bad.error;
  EXPECT_NE(parse({{"HARNESS_RANK", "x"}, {"HARNESS_WORLD_SIZE", "2"}}).error.find("HARNESS_RANK=x"), std::string::npos);
}

TEST(NcclFamily, ASingleProcessSkipsWithTheReason) {
  const auto* v = harness::Registry::instance().find_variant("nccl_all_reduce", "nccl");
  ASSERT_NE(v, nullptr);
  ASSERT_TRUE(v->constraint);
  const auto* p = harness::Registry::instance().find_problem("nccl_all_reduce");
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->collective());
  const harness::Params params = harness::with_defaults(p->params(), harness::Params{});
  const auto why = v->constraint(params);
  ASSERT_TRUE(why.has_value());
  if (const auto missing = nccl_build_missing())
    EXPECT_EQ(*why, *missing);  // a build without NCCL says so first
  else
    EXPECT_NE(why->find("needs at least 2 ranks"), std::string::npos) << *why;
}

TEST(NcclFamily, TheMissingNcclMessageNamesTheFix) {
  // Built with NCCL here or not, the message (when there is one) must say how to fix it.
  if (const auto missing = nccl_build_missing()) {
    EXPECT_NE(missing->find("HARNESS_NCCL_ROOT"), std::string::npos);
  } else {
    const auto r = harness::test::run_command(std::string(HARNESS_EXE) + " list");
    EXPECT_EQ(r.output.find("NCCL was not found"), std::string::npos);
    EXPECT_NE(r.output.find("nccl_all_reduce"), std::string::npos);
  }
}

}  // namespace
}  // namespace kernels::nccl
