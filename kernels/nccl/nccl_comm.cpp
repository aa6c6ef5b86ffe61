#include "nccl/nccl_comm.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
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
void World::barrier(cudaStream_t) { throw std::runtime_error(*nccl_build_missing()); }

#else

struct World::State {
  ncclComm_t roll_call = nullptr;   // non-blocking: the init with a deadline; unused after
  std::atomic<ncclComm_t> comm{nullptr};  // blocking: every collective and the barrier (read by the watchdog)
  int device = 0;
  int* barrier_word = nullptr;      // the barrier's one int on the device
  std::mutex mutex;
  cudaEvent_t last = nullptr;       // recorded after the latest collective
  Clock::time_point last_since;
  std::string last_name;
  bool pending = false;
  // A blocking NCCL call in progress (the working communicator's init, an enqueue): its
  // start in steady-clock nanoseconds (0: none) and what it is, for the watchdog.
  std::atomic<std::int64_t> call_since_ns{0};
  std::atomic<const char*> call_name{""};
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

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

// Marks a blocking NCCL call for the watchdog while it lasts.
class BlockingCall {
 public:
  BlockingCall(std::atomic<std::int64_t>& since_ns, std::atomic<const char*>& name, const char* what) : since_ns_(since_ns) {
    name = what;
    since_ns_ = now_ns();
  }
  ~BlockingCall() { since_ns_ = 0; }
  BlockingCall(const BlockingCall&) = delete;
  BlockingCall& operator=(const BlockingCall&) = delete;

 private:
  std::atomic<std::int64_t>& since_ns_;
};

// Rank 0 writes both ids, the others wait for the file (the launcher removes it).
void exchange_ids(const RankEnv& env, double deadline_s, ncclUniqueId ids[2], const std::string& where) {
  constexpr std::streamsize kBytes = 2 * sizeof(ncclUniqueId);
  if (env.rank == 0) {
    for (int i = 0; i < 2; ++i)
      if (const ncclResult_t r = ncclGetUniqueId(&ids[i]); r != ncclSuccess)
        throw std::runtime_error("nccl: ncclGetUniqueId failed: " + std::string(ncclGetErrorString(r)));
    const std::string tmp = env.id_file + ".tmp." + std::to_string(getpid());
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out.write(reinterpret_cast<const char*>(ids), kBytes);
      if (!out) throw std::runtime_error("nccl: cannot write the unique ids to " + tmp);
    }
    if (std::rename(tmp.c_str(), env.id_file.c_str()) != 0)
      throw std::runtime_error("nccl: cannot rename the unique id file to " + env.id_file);
    return;
  }
  const auto t0 = Clock::now();
  for (;;) {
    std::ifstream in(env.id_file, std::ios::binary);
    if (in.read(reinterpret_cast<char*>(ids), kBytes) && in.gcount() == kBytes) return;
    if (seconds_since(t0) > deadline_s)
      throw std::runtime_error("nccl: " + where + ": rank 0 did not publish the NCCL unique ids in " + env.id_file +
                               " within " + std::to_string(static_cast<int>(deadline_s)) + " s");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// The roll call: a non-blocking init polled against the deadline.
ncclComm_t roll_call(const RankEnv& env, const ncclUniqueId& id, double deadline_s, const std::string& where) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  ncclResult_t r = ncclCommInitRankConfig(&comm, env.size, id, env.rank, &config);
  const auto t0 = Clock::now();
  if ((r == ncclSuccess || r == ncclInProgress) && comm) {
    for (;;) {
      if (ncclCommGetAsyncError(comm, &r) != ncclSuccess || r != ncclInProgress) break;
      if (seconds_since(t0) > deadline_s) {
        (void)ncclCommAbort(comm);
        throw std::runtime_error("nccl: " + where + ": the communicator was not complete after " +
                                 std::to_string(static_cast<int>(deadline_s)) + " s (a rank is missing; aborted)");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  if (r != ncclSuccess) {
    const std::string text = nccl_text(r, comm);
    if (comm) (void)ncclCommAbort(comm);
    throw std::runtime_error("nccl: " + where + ": ncclCommInitRank failed: " + text);
  }
  return comm;
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

  ncclUniqueId ids[2]{};
  exchange_ids(env_, deadline_s_, ids, where);
  if (!state_->roll_call) state_->roll_call = roll_call(env_, ids[0], deadline_s_, where);
  if (!state_->last && cudaEventCreateWithFlags(&state_->last, cudaEventDisableTiming) != cudaSuccess)
    throw std::runtime_error("nccl: cudaEventCreate failed");
  start_watchdog();
  // HARNESS_NCCL_NONBLOCKING=1: the roll call communicator does everything, as before
  // issue 33 (to measure what the non-blocking enqueue costs; not for figures).
  if (const char* nb = std::getenv("HARNESS_NCCL_NONBLOCKING"); nb && std::string(nb) == "1") {
    state_->comm = state_->roll_call;
    return;
  }

  // Every rank answered the roll call: the blocking init completes at once unless a rank
  // dies in between, and then the watchdog ends this one.
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 1;
  ncclComm_t comm = nullptr;
  ncclResult_t r;
  {
    BlockingCall call(state_->call_since_ns, state_->call_name, "creating the working communicator");
    r = ncclCommInitRankConfig(&comm, env_.size, ids[1], env_.rank, &config);
  }
  if (r != ncclSuccess) {
    const std::string text = nccl_text(r, comm);
    if (comm) (void)ncclCommAbort(comm);
    throw std::runtime_error("nccl: " + where + ": ncclCommInitRank (working communicator) failed: " + text);
  }
  state_->comm = comm;
}

void World::start_watchdog() {
  State* s = state_.get();
  if (s->watchdog.joinable()) return;
  // The deadline for work the harness waits on: a blocking call or a collective still not
  // complete after deadline_s, or an asynchronous NCCL error (a peer's connection lost),
  // ends this rank.
  const double deadline = deadline_s_;
  const RankEnv env = env_;
  s->watchdog = std::thread([s, deadline, env] {
    (void)cudaSetDevice(s->device);
    const std::string who = "rank " + std::to_string(env.rank) + " of " + std::to_string(env.size);
    while (!s->stop) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (s->stop) break;  // process exit: touch neither CUDA nor NCCL any more
      ncclComm_t comm = s->comm;
      if (const std::int64_t since = s->call_since_ns; since != 0 && static_cast<double>(now_ns() - since) * 1e-9 > deadline)
        die(who + ": " + s->call_name.load() + " did not return within " + std::to_string(static_cast<int>(deadline)) +
                " s (HARNESS_NCCL_TIMEOUT): a peer rank died or is out of step; aborting the communicator",
            comm);
      if (!comm) continue;
      ncclResult_t async = ncclSuccess;
      if (ncclCommGetAsyncError(comm, &async) == ncclSuccess && async != ncclSuccess && async != ncclInProgress)
        die(who + ": NCCL reported an asynchronous error: " + nccl_text(async, comm) + "; aborting the communicator", comm);
      std::lock_guard lock(s->mutex);
      if (!s->pending) continue;
      const cudaError_t q = cudaEventQuery(s->last);
      if (q == cudaSuccess) {
        s->pending = false;
      } else if (q == cudaErrorNotReady && seconds_since(s->last_since) > deadline) {
        die(who + ": " + s->last_name + " did not complete within " + std::to_string(static_cast<int>(deadline)) +
                " s (HARNESS_NCCL_TIMEOUT): a peer rank died or is out of step; aborting the communicator",
            comm);
      }
    }
  });
}

namespace {
ncclDataType_t nccl_type(Dtype t) { return t == Dtype::f32 ? ncclFloat32 : ncclBfloat16; }
}  // namespace

template <class Enqueue>
void World::enqueue(const char* name, cudaStream_t stream, Enqueue&& nccl_calls) {
  ensure_initialized();
  ncclResult_t r;
  {
    BlockingCall call(state_->call_since_ns, state_->call_name, name);
    ncclComm_t comm = state_->comm;
    r = nccl_calls(comm);
    // Only on a non-blocking communicator (HARNESS_NCCL_NONBLOCKING=1): NCCL's own thread
    // finishes the enqueue.
    while (r == ncclInProgress) {
      std::this_thread::yield();
      if (ncclCommGetAsyncError(comm, &r) != ncclSuccess) break;
    }
  }
  if (r != ncclSuccess) throw std::runtime_error(std::string("nccl: ") + name + ": " + nccl_text(r, state_->comm));
  std::lock_guard lock(state_->mutex);
  if (cudaEventRecord(state_->last, stream) != cudaSuccess) throw std::runtime_error("nccl: cudaEventRecord failed");
  state_->last_since = Clock::now();
  state_->last_name = name;
  state_->pending = true;
}

void World::run(Collective c, Dtype t, const void* send, void* recv, const Counts& k, cudaStream_t stream) {
  const ncclDataType_t type = nccl_type(t);
  const int n = env_.size, rank = env_.rank;
  const std::size_t eb = elem_bytes(t);
  auto at = [&](const void* base, std::size_t elems) { return static_cast<const char*>(base) + elems * eb; };
  enqueue(to_string(c), stream, [&](ncclComm_t comm) {
    ncclResult_t r = ncclSuccess;
    switch (c) {
      case Collective::all_reduce: return ncclAllReduce(send, recv, k.count, type, ncclSum, comm, stream);
      case Collective::all_gather: return ncclAllGather(send, recv, k.chunk, type, comm, stream);
      case Collective::reduce_scatter: return ncclReduceScatter(send, recv, k.chunk, type, ncclSum, comm, stream);
      case Collective::broadcast: return ncclBroadcast(send, recv, k.count, type, 0, comm, stream);
      case Collective::alltoall:
        // Point-to-point in one group (ncclAlltoAll is only in recent NCCL releases).
        r = ncclGroupStart();
        for (int p = 0; p < n && r == ncclSuccess; ++p) {
          r = ncclSend(at(send, static_cast<std::size_t>(p) * k.chunk), k.chunk, type, p, comm, stream);
          if (r == ncclSuccess)
            r = ncclRecv(const_cast<char*>(at(recv, static_cast<std::size_t>(p) * k.chunk)), k.chunk, type, p, comm, stream);
        }
        if (const ncclResult_t e = ncclGroupEnd(); r == ncclSuccess) r = e;
        return r;
      case Collective::sendrecv:
        r = ncclGroupStart();
        if (r == ncclSuccess) r = ncclSend(send, k.count, type, (rank + 1) % n, comm, stream);
        if (r == ncclSuccess) r = ncclRecv(recv, k.count, type, (rank - 1 + n) % n, comm, stream);
        if (const ncclResult_t e = ncclGroupEnd(); r == ncclSuccess) r = e;
        return r;
    }
    return ncclInvalidArgument;
  });
}

void World::barrier(cudaStream_t stream) {
  ensure_initialized();
  if (!state_->barrier_word && cudaMalloc(&state_->barrier_word, sizeof(int)) != cudaSuccess)
    throw std::runtime_error("nccl: cudaMalloc of the barrier's word failed");
  int* word = state_->barrier_word;
  enqueue("barrier", stream,
          [&](ncclComm_t comm) { return ncclAllReduce(word, word, 1, ncclInt32, ncclSum, comm, stream); });
  // The watchdog keeps the deadline while this waits (the event recorded above).
  if (const cudaError_t e = cudaStreamSynchronize(stream); e != cudaSuccess)
    throw std::runtime_error(std::string("nccl: barrier: ") + cudaGetErrorString(e));
}

#endif

}  // namespace kernels::nccl
