#include "nccl/nccl_comm.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#ifdef KERNELS_NCCL_HAVE_NCCL
#include <nccl.h>
#endif

namespace kernels::nccl {

std::optional<std::string> nccl_build_missing() {
#ifdef KERNELS_NCCL_HAVE_NCCL
  return std::nullopt;
#else
  return std::string(
      "NCCL was not found when the harness was configured (looked in HARNESS_NCCL_ROOT, the CUDA toolkit and the "
      "nvidia-nccl Python wheels); reconfigure with -DHARNESS_NCCL_ROOT=<dir with include/nccl.h and lib/libnccl.so>");
#endif
}

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
}  // namespace

World& World::get() {
  static World world;
  return world;
}

#ifndef KERNELS_NCCL_HAVE_NCCL

struct World::State {};
World::World() : env_(rank_env_from_process()) {}
World::~World() = default;
void World::ensure_initialized() { throw std::runtime_error(*nccl_build_missing()); }
void World::run(Collective, Dtype, const void*, void*, const Counts&, cudaStream_t) {
  throw std::runtime_error(*nccl_build_missing());
}

#else

struct World::State {
  ncclComm_t comm = nullptr;
  int device = 0;
  std::mutex mutex;
  cudaEvent_t last = nullptr;       // recorded after the latest collective
  Clock::time_point last_since;
  std::string last_name;
  bool pending = false;
  std::atomic<bool> stop{false};
  std::thread watchdog;
};

namespace {
[[noreturn]] void die(const std::string& message, ncclComm_t comm) {
  std::fprintf(stderr, "harness nccl: %s\n", message.c_str());
  std::fflush(stderr);
  if (comm) (void)ncclCommAbort(comm);
  // The harness's state (a stream inside an aborted collective) cannot be trusted: end
  // the process; the launcher records the loss and --resume can complete the run.
  std::_Exit(3);
}

std::string nccl_text(ncclResult_t r, ncclComm_t comm) {
  std::string text = ncclGetErrorString(r);
  if (comm)
    if (const char* last = ncclGetLastError(comm); last && *last) text += std::string(": ") + last;
  return text;
}
}  // namespace

World::World() : env_(rank_env_from_process()), state_(std::make_unique<State>()) {
  if (const char* t = std::getenv("HARNESS_NCCL_TIMEOUT"); t && std::atof(t) > 0) deadline_s_ = std::atof(t);
}

World::~World() {
  if (!state_) return;
  state_->stop = true;
  if (state_->watchdog.joinable()) state_->watchdog.join();
  // Process exit: the driver may already be gone; a communicator is left to the OS.
}

void World::ensure_initialized() {
  if (state_->comm) return;
  if (!env_.error.empty()) throw std::runtime_error(env_.error);
  if (cudaGetDevice(&state_->device) != cudaSuccess) throw std::runtime_error("nccl: no current CUDA device");
  const std::string where = "rank " + std::to_string(env_.rank) + " of " + std::to_string(env_.size) + " (" + env_.source + ")";

  ncclUniqueId id{};
  if (env_.rank == 0) {
    if (const ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess)
      throw std::runtime_error("nccl: ncclGetUniqueId failed: " + std::string(ncclGetErrorString(r)));
    const std::string tmp = env_.id_file + ".tmp." + std::to_string(getpid());
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out.write(reinterpret_cast<const char*>(&id), sizeof id);
      if (!out) throw std::runtime_error("nccl: cannot write the unique id to " + tmp);
    }
    if (std::rename(tmp.c_str(), env_.id_file.c_str()) != 0)
      throw std::runtime_error("nccl: cannot rename the unique id file to " + env_.id_file);
  } else {
    const auto t0 = Clock::now();
    for (;;) {
      std::ifstream in(env_.id_file, std::ios::binary);
      if (in.read(reinterpret_cast<char*>(&id), sizeof id) && in.gcount() == sizeof id) break;
      if (seconds_since(t0) > deadline_s_)
        throw std::runtime_error("nccl: " + where + ": rank 0 did not publish the NCCL unique id in " + env_.id_file +
                                 " within " + std::to_string(static_cast<int>(deadline_s_)) + " s");
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  ncclResult_t r = ncclCommInitRankConfig(&comm, env_.size, id, env_.rank, &config);
  // Non-blocking: the init goes on in the background until the async state leaves InProgress.
  const auto t0 = Clock::now();
  if ((r == ncclSuccess || r == ncclInProgress) && comm) {
    for (;;) {
      if (ncclCommGetAsyncError(comm, &r) != ncclSuccess || r != ncclInProgress) break;
      if (seconds_since(t0) > deadline_s_) {
        (void)ncclCommAbort(comm);
        throw std::runtime_error("nccl: " + where + ": the communicator was not complete after " +
                                 std::to_string(static_cast<int>(deadline_s_)) + " s (a rank is missing; aborted)");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  if (r != ncclSuccess) {
    const std::string text = nccl_text(r, comm);
    if (comm) (void)ncclCommAbort(comm);
    throw std::runtime_error("nccl: " + where + ": ncclCommInitRank failed: " + text);
  }
  state_->comm = comm;
  if (cudaEventCreateWithFlags(&state_->last, cudaEventDisableTiming) != cudaSuccess)
    throw std::runtime_error("nccl: cudaEventCreate failed");

  // The deadline for work the harness waits on: a collective still not complete after
  // deadline_s, or an asynchronous NCCL error (a peer's connection lost), ends this rank.
  State* s = state_.get();
  const double deadline = deadline_s_;
  const RankEnv env = env_;
  s->watchdog = std::thread([s, deadline, env] {
    (void)cudaSetDevice(s->device);
    while (!s->stop) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (s->stop) break;  // process exit: touch neither CUDA nor NCCL any more
      ncclResult_t async = ncclSuccess;
      if (ncclCommGetAsyncError(s->comm, &async) == ncclSuccess && async != ncclSuccess && async != ncclInProgress)
        die("rank " + std::to_string(env.rank) + " of " + std::to_string(env.size) +
                ": NCCL reported an asynchronous error: " + nccl_text(async, s->comm) + "; aborting the communicator",
            s->comm);
      std::lock_guard lock(s->mutex);
      if (!s->pending) continue;
      const cudaError_t q = cudaEventQuery(s->last);
      if (q == cudaSuccess) {
        s->pending = false;
      } else if (q == cudaErrorNotReady && seconds_since(s->last_since) > deadline) {
        die("rank " + std::to_string(env.rank) + " of " + std::to_string(env.size) + ": " + s->last_name +
                " did not complete within " + std::to_string(static_cast<int>(deadline)) +
                " s (HARNESS_NCCL_TIMEOUT): a peer rank died or is out of step; aborting the communicator",
            s->comm);
      }
    }
  });
}

namespace {
ncclDataType_t nccl_type(Dtype t) { return t == Dtype::f32 ? ncclFloat32 : ncclBfloat16; }
}  // namespace

void World::run(Collective c, Dtype t, const void* send, void* recv, const Counts& k, cudaStream_t stream) {
  ensure_initialized();
  ncclComm_t comm = state_->comm;
  const ncclDataType_t type = nccl_type(t);
  const int n = env_.size, rank = env_.rank;
  const std::size_t eb = elem_bytes(t);
  auto at = [&](const void* base, std::size_t elems) { return static_cast<const char*>(base) + elems * eb; };
  ncclResult_t r = ncclSuccess;
  switch (c) {
    case Collective::all_reduce: r = ncclAllReduce(send, recv, k.count, type, ncclSum, comm, stream); break;
    case Collective::all_gather: r = ncclAllGather(send, recv, k.chunk, type, comm, stream); break;
    case Collective::reduce_scatter: r = ncclReduceScatter(send, recv, k.chunk, type, ncclSum, comm, stream); break;
    case Collective::broadcast: r = ncclBroadcast(send, recv, k.count, type, 0, comm, stream); break;
    case Collective::alltoall:
      // Point-to-point in one group (ncclAlltoAll is only in recent NCCL releases).
      r = ncclGroupStart();
      for (int p = 0; p < n && r == ncclSuccess; ++p) {
        r = ncclSend(at(send, static_cast<std::size_t>(p) * k.chunk), k.chunk, type, p, comm, stream);
        if (r == ncclSuccess)
          r = ncclRecv(const_cast<char*>(at(recv, static_cast<std::size_t>(p) * k.chunk)), k.chunk, type, p, comm, stream);
      }
      if (const ncclResult_t e = ncclGroupEnd(); r == ncclSuccess) r = e;
      break;
    case Collective::sendrecv:
      r = ncclGroupStart();
      if (r == ncclSuccess) r = ncclSend(send, k.count, type, (rank + 1) % n, comm, stream);
      if (r == ncclSuccess) r = ncclRecv(recv, k.count, type, (rank - 1 + n) % n, comm, stream);
      if (const ncclResult_t e = ncclGroupEnd(); r == ncclSuccess) r = e;
      break;
  }
  // Non-blocking communicator: the enqueue may still be in progress.
  const auto t0 = Clock::now();
  while (r == ncclInProgress) {
    if (seconds_since(t0) > deadline_s_)
      die("rank " + std::to_string(rank) + ": enqueuing " + to_string(c) + " did not finish within the deadline", comm);
    std::this_thread::sleep_for(std::chrono::microseconds(20));
    (void)ncclCommGetAsyncError(comm, &r);
  }
  if (r != ncclSuccess) throw std::runtime_error(std::string("nccl: ") + to_string(c) + ": " + nccl_text(r, comm));
  std::lock_guard lock(state_->mutex);
  if (cudaEventRecord(state_->last, stream) != cudaSuccess) throw std::runtime_error("nccl: cudaEventRecord failed");
  state_->last_since = Clock::now();
  state_->last_name = to_string(c);
  state_->pending = true;
}

#endif

}  // namespace kernels::nccl
