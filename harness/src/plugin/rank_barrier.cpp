// The rank barriers of collective problems (include/harness/collective.hpp), kept beside
// the registry because plugins set them while they register.
#include <map>
#include <mutex>

#include "harness/collective.hpp"

namespace harness {

namespace {
struct Barriers {
  std::mutex mutex;
  std::map<std::string, RankBarrier> by_problem;
};
Barriers& barriers() {
  static Barriers b;
  return b;
}
}  // namespace

void set_rank_barrier(const std::string& problem, RankBarrier barrier) {
  Barriers& b = barriers();
  std::lock_guard lock(b.mutex);
  b.by_problem[problem] = std::move(barrier);
}

const RankBarrier* rank_barrier(const std::string& problem) {
  Barriers& b = barriers();
  std::lock_guard lock(b.mutex);
  const auto it = b.by_problem.find(problem);
  return it == b.by_problem.end() ? nullptr : &it->second;  // entries are never erased
}

}  // namespace harness
