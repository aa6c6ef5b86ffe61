#pragma once
// The NCCL family's arithmetic, free of NCCL and CUDA so that it is testable anywhere:
// the collectives, their element counts, nccl-tests' bus-bandwidth factors, the
// deterministic per-rank fill and the expected result of every rank, and where a rank
// learns its rank, the world size and the file through which the NCCL unique id travels.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#ifdef __CUDACC__
#define KERNELS_NCCL_HD __host__ __device__
#else
#define KERNELS_NCCL_HD
#endif

namespace kernels::nccl {

enum class Collective { all_reduce, all_gather, reduce_scatter, broadcast, alltoall, sendrecv };
inline constexpr Collective kAllCollectives[] = {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter,
                                                 Collective::broadcast,  Collective::alltoall,   Collective::sendrecv};
const char* to_string(Collective c);

// nccl-tests' busbw = algbw * factor (doc/PERFORMANCE.md of nccl-tests), n ranks:
// all_reduce 2(n-1)/n; all_gather, reduce_scatter, alltoall (n-1)/n; broadcast, sendrecv 1.
double bus_factor(Collective c, int n);

// Element counts for a size in bytes as nccl-tests count it (the larger buffer of a rank:
// all_gather's output, reduce_scatter's input, alltoall's whole buffer). `count` is
// bytes / element size rounded down to a multiple of n where the collective splits it.
struct Counts {
  std::size_t count = 0;   // elements of the full buffer (the nccl-tests size / elem)
  std::size_t send = 0;    // elements this rank sends (its input buffer)
  std::size_t recv = 0;    // elements this rank receives (its output buffer)
  std::size_t chunk = 0;   // per-peer elements (count / n) where the collective splits
};
Counts counts(Collective c, std::size_t bytes, std::size_t elem_bytes, int n);

// Fill of rank r's input element i: small integers (-3..3), so that a sum over up to 64
// ranks is exact in f32 and bf16 whatever the order of the reduction.
KERNELS_NCCL_HD inline float fill_value(int rank, std::size_t i) {
  return static_cast<float>(static_cast<int>((static_cast<std::uint64_t>(rank) * 7u + i * 3u) % 7u) - 3);
}

// The output rank `rank` of `n` must hold (recv elements), broadcast from root 0,
// sendrecv in a ring (send to rank+1, receive from rank-1).
std::vector<float> expected_output(Collective c, const Counts& k, int rank, int n);

// Where this process sits in the job. Sources, first match wins: the harness launcher
// (HARNESS_RANK, HARNESS_WORLD_SIZE, HARNESS_NCCL_ID_FILE), Open MPI
// (OMPI_COMM_WORLD_RANK/_SIZE/_LOCAL_RANK), Slurm (SLURM_PROCID, SLURM_NTASKS,
// SLURM_LOCALID), PMI (PMI_RANK, PMI_SIZE). With several ranks and no id file from the
// launcher, the id file is HARNESS_NCCL_ID_FILE, else <HARNESS_NCCL_ID_DIR>/nccl-id-<job>
// (job: SLURM_JOB_ID.SLURM_STEP_ID, else "default"); neither set is an error (we do not
// link MPI: the id crosses hosts through a shared directory).
struct RankEnv {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  std::string source = "single process";  // "harness launcher", "Open MPI", "Slurm", "PMI"
  std::string id_file;
  std::string error;                       // set when the variables contradict each other
};
using GetEnv = std::function<const char*(const char*)>;
RankEnv parse_rank_env(const GetEnv& getenv_fn);
RankEnv rank_env_from_process();  // parse_rank_env(std::getenv)

// Why the nccl variants cannot run in this build, or nothing (NCCL was found).
std::optional<std::string> nccl_build_missing();

}  // namespace kernels::nccl
