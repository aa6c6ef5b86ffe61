#pragma once
// Collectives timed as nccl-tests times them (its src/common.cu, BenchTime): warm-up, then
// for every sample a barrier across the ranks (include/harness/collective.hpp), K
// operations back to back between ONE pair of CUDA events, and time per op = elapsed / K.
// The barrier makes every rank start the batch together, so a sample holds K operations
// and at most one wake-up jitter of the ranks (a few us, shared by K) instead of the skew
// between them; back to back, the host enqueues op i+1 while op i runs, so a small
// operation is timed at its throughput, as nccl-tests and torch.distributed time it.
//
// A sample is one batch; stopping.samples batches are taken (the runner fixes the rule for
// collectives: every rank must launch the same number of operations, so nothing here
// depends on a timing). The ranks' samples are combined batch by batch (combine_ranks).
//
// Bandwidths as nccl-tests defines them (its doc/PERFORMANCE.md): algbw = bytes / time,
// busbw = algbw x factor, the factor making busbw comparable with the link's bandwidth
// whatever the rank count n: all_reduce 2(n-1)/n (reduce-scatter then all-gather, each
// moving (n-1)/n of the buffer through every rank's link), all_gather, reduce_scatter
// and alltoall (n-1)/n, broadcast and sendrecv 1 (kernels/nccl/collectives.hpp,
// bus_factor; the problem hands it over as extra.bus_factor).
#include <cstddef>
#include <functional>
#include <vector>

#include <cuda_runtime_api.h>

#include "types/settings.hpp"
#include "types/timing.hpp"

namespace harness {

// K, the operations per sample, from the bytes of one operation (Work::bytes: the size as
// nccl-tests reports it). Every rank must arrive at the same K without talking to the
// others, so K comes from the size alone, through a nominal cost per op of 10 us + bytes /
// 100 GB/s (an NVLink pair is faster, so real batches are about as long or shorter):
// K = ceil(2 ms / cost), at least 5 (the barrier's jitter shared by 5 ops or more), at
// most 200 (8 B: 200 ops). 1 MiB: 98; 2 MiB: 65; 16 MiB: 12; >= 128 MiB: 5.
// reports/torch_allreduce.py uses the same formula, so both sides batch alike.
inline constexpr double kCollectiveBatchSeconds = 2e-3;
inline constexpr double kCollectiveOpLatency = 10e-6;
inline constexpr double kCollectiveBandwidth = 100e9;
inline constexpr std::size_t kCollectiveMinOps = 5;
inline constexpr std::size_t kCollectiveMaxOps = 200;
std::size_t collective_ops_per_sample(double bytes);

// The ranks' samples, batch by batch (batch i of every rank started after the same
// barrier). nccl-tests reports the mean over ranks of one batch (its default -a 1) and
// can report the slowest (-a 3); both are kept, as their medians over the batches.
struct RankCombination {
  std::vector<double> mean;         // per batch: the mean over ranks of its time per op
  std::vector<double> slowest;      // per batch: the slowest rank's
  std::vector<double> rank_median;  // per rank: the median of its own batches
  double time_s = 0;                // median of `mean`: the job's time per op
  double time_max_s = 0;            // median of `slowest`
};
// Batches past the shortest rank's count are left out; no rank or no batch: all zero.
RankCombination combine_ranks(const std::vector<std::vector<double>>& samples_per_rank);

// algbw and busbw in GB/s (1e9 B/s) for `bytes` per op in `seconds` with nccl-tests'
// bus factor; zero when the time or the size is not positive.
struct Bandwidth {
  double algbw_gbps = 0, busbw_gbps = 0;
};
Bandwidth collective_bandwidth(double bytes, double seconds, double bus_factor);

// The timed samples of one rank: warm-up (max(warmup, K) operations, then a stream
// synchronize), then stopping.samples batches of `barrier(); start; K x launch(); stop`.
// `launch` enqueues one operation on `stream`; samples are seconds per operation;
// launches_per_sample is K; the SM clock is probed after each batch, outside it.
Timing time_collective(const std::function<void()>& launch, const std::function<void()>& barrier, cudaStream_t stream,
                       const MeasureSettings& settings, std::size_t ops);

}  // namespace harness
