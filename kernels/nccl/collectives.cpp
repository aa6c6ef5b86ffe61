#include "nccl/collectives.hpp"

#include <cstdlib>
#include <string>

namespace kernels::nccl {

const char* to_string(Collective c) {
  switch (c) {
    case Collective::all_reduce: return "all_reduce";
    case Collective::all_gather: return "all_gather";
    case Collective::reduce_scatter: return "reduce_scatter";
    case Collective::broadcast: return "broadcast";
    case Collective::alltoall: return "alltoall";
    case Collective::sendrecv: return "sendrecv";
  }
  return "?";
}

double bus_factor(Collective c, int n) {
  const double nd = n;
  switch (c) {
    case Collective::all_reduce: return 2.0 * (nd - 1) / nd;
    case Collective::all_gather:
    case Collective::reduce_scatter:
    case Collective::alltoall: return (nd - 1) / nd;
    case Collective::broadcast:
    case Collective::sendrecv: return 1.0;
  }
  return 0;
}

Counts counts(Collective c, std::size_t bytes, std::size_t elem_bytes, int n) {
  Counts k;
  const std::size_t elems = bytes / elem_bytes;
  const auto un = static_cast<std::size_t>(n < 1 ? 1 : n);
  switch (c) {
    case Collective::all_reduce:
    case Collective::broadcast:
    case Collective::sendrecv:
      k.count = k.send = k.recv = k.chunk = elems;
      break;
    case Collective::all_gather:
      k.count = elems / un * un;
      k.chunk = k.count / un;
      k.send = k.chunk;
      k.recv = k.count;
      break;
    case Collective::reduce_scatter:
      k.count = elems / un * un;
      k.chunk = k.count / un;
      k.send = k.count;
      k.recv = k.chunk;
      break;
    case Collective::alltoall:
      k.count = elems / un * un;
      k.chunk = k.count / un;
      k.send = k.recv = k.count;
      break;
  }
  return k;
}

std::vector<float> expected_output(Collective c, const Counts& k, int rank, int n) {
  std::vector<float> out(k.recv);
  switch (c) {
    case Collective::all_reduce:
      for (std::size_t i = 0; i < k.recv; ++i) {
        float s = 0;
        for (int r = 0; r < n; ++r) s += fill_value(r, i);
        out[i] = s;
      }
      break;
    case Collective::broadcast:
      for (std::size_t i = 0; i < k.recv; ++i) out[i] = fill_value(0, i);
      break;
    case Collective::sendrecv:
      for (std::size_t i = 0; i < k.recv; ++i) out[i] = fill_value((rank - 1 + n) % n, i);
      break;
    case Collective::all_gather:
      for (int p = 0; p < n; ++p)
        for (std::size_t i = 0; i < k.chunk; ++i) out[static_cast<std::size_t>(p) * k.chunk + i] = fill_value(p, i);
      break;
    case Collective::reduce_scatter:
      for (std::size_t i = 0; i < k.chunk; ++i) {
        float s = 0;
        for (int r = 0; r < n; ++r) s += fill_value(r, static_cast<std::size_t>(rank) * k.chunk + i);
        out[i] = s;
      }
      break;
    case Collective::alltoall:
      for (int p = 0; p < n; ++p)
        for (std::size_t i = 0; i < k.chunk; ++i)
          out[static_cast<std::size_t>(p) * k.chunk + i] = fill_value(p, static_cast<std::size_t>(rank) * k.chunk + i);
      break;
  }
  return out;
}

namespace {
std::optional<int> integer(const char* text) {
  if (!text || !*text) return std::nullopt;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (*end != '\0' || v < 0 || v > 1000000) return std::nullopt;
  return static_cast<int>(v);
}
}  // namespace

RankEnv parse_rank_env(const GetEnv& get) {
  RankEnv e;
  struct Source {
    const char* name;
    const char* rank;
    const char* size;
    const char* local;
  };
  static const Source sources[] = {{"harness launcher", "HARNESS_RANK", "HARNESS_WORLD_SIZE", nullptr},
                                   {"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
                                   {"Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
                                   {"PMI", "PMI_RANK", "PMI_SIZE", nullptr}};
  for (const auto& s : sources) {
    const char* rank_text = get(s.rank);
    const char* size_text = get(s.size);
    if (!rank_text && !size_text) continue;
    e.source = s.name;
    const auto rank = integer(rank_text);
    const auto size = integer(size_text);
    if (!rank || !size || *size < 1 || *rank >= *size) {
      e.error = std::string(s.name) + ": " + s.rank + "=" + (rank_text ? rank_text : "(unset)") + " and " + s.size + "=" +
                (size_text ? size_text : "(unset)") + " do not name a rank of a job";
      return e;
    }
    e.rank = *rank;
    e.size = *size;
    e.local_rank = s.local ? integer(get(s.local)).value_or(0) : 0;
    break;
  }
  if (e.size > 1) {
    if (const char* f = get("HARNESS_NCCL_ID_FILE"); f && *f) {
      e.id_file = f;
    } else if (const char* dir = get("HARNESS_NCCL_ID_DIR"); dir && *dir) {
      std::string job = "default";
      if (const char* j = get("SLURM_JOB_ID"); j && *j) {
        job = j;
        if (const char* st = get("SLURM_STEP_ID"); st && *st) job += std::string(".") + st;
      }
      e.id_file = std::string(dir) + "/nccl-id-" + job;
    } else {
      e.error = e.source + " started " + std::to_string(e.size) +
                " ranks, but no way to pass the NCCL unique id: set HARNESS_NCCL_ID_DIR to a directory every rank "
                "shares (or HARNESS_NCCL_ID_FILE to a fresh file in one), or use `harness run --devices all` on one host";
    }
  }
  return e;
}

RankEnv rank_env_from_process() {
  return parse_rank_env([](const char* name) { return std::getenv(name); });
}

}  // namespace kernels::nccl
